// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: the baseline. Plain blocking TCP sockets between the same
// two processes: each message is split evenly over `streams` connections,
// one thread per connection, with nothing else in the way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pair.hpp"
#include "peer.hpp"

namespace ncclnet::bench {

class TcpPeer : public Peer {
 public:
  static std::unique_ptr<TcpPeer> open(const std::string& host, int streams, size_t maxSize,
                                       Pair& pair, std::string* why);
  ~TcpPeer() override;

  std::string label() const override { return "raw TCP"; }
  std::string describe() const override;
  bool stream(bool sender, size_t size, int iters, int window) override;
  bool pingpong(bool initiator, size_t size, int iters) override;

 private:
  TcpPeer() = default;
  std::string host_;
  std::vector<int> fds_;
  std::vector<char> buffer_;
};

}  // namespace ncclnet::bench
