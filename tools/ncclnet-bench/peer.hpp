// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: one end of a two-process connection over some transport
// (a plugin's comm pair, or a baseline's connection); `--comms N` opens N
// of them and drives each from its own thread.
#pragma once

#include <cstddef>
#include <string>

namespace ncclnet::bench {

class Peer {
 public:
  virtual ~Peer() = default;
  // Short name for tables: the plugin's name, "raw TCP", "raw libfabric".
  virtual std::string label() const = 0;
  virtual std::string describe() const = 0;
  // Moves `iters` messages of `size` bytes one way, at most `window` in
  // flight; the sender returns when its last send completed, the receiver
  // when every byte arrived.
  virtual bool stream(bool sender, size_t size, int iters, int window) = 0;
  // `iters` round trips of `size` bytes; the initiator sends first.
  virtual bool pingpong(bool initiator, size_t size, int iters) = 0;
};

}  // namespace ncclnet::bench
