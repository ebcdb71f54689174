// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: one end of a two-process connection over some transport
// (a plugin, or raw TCP as the baseline).
#pragma once

#include <cstddef>
#include <string>

namespace bench {

class Peer {
 public:
  virtual ~Peer() = default;
  virtual std::string describe() const = 0;
  // Moves `iters` messages of `size` bytes one way, at most `window` in
  // flight; the sender returns when its last send completed, the receiver
  // when every byte arrived.
  virtual bool stream(bool sender, size_t size, int iters, int window) = 0;
  // `iters` round trips of `size` bytes; the initiator sends first.
  virtual bool pingpong(bool initiator, size_t size, int iters) = 0;
};

}  // namespace bench
