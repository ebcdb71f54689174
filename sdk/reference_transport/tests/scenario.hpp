// SPDX-License-Identifier: Apache-2.0
// Scenario fixture for in-process runs: a plugin (seen through a
// RecordingNet), ranks, links, and the NCCL traffic shapes.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness.hpp"
#include "recording_net.hpp"

namespace ncclnet::transport::testing {

// Makes one rank of a scenario (default: makeHostRank).
using RankMaker = std::function<ncclResult_t(host::NetView& net, const TransportConfig& config,
                                             uint64_t commId, Rank* out, std::string* why)>;

class Scenario {
 public:
  Scenario() = default;
  explicit Scenario(RankMaker maker) : maker_(std::move(maker)) {}
  ~Scenario();  // device peers first, then connections, then transports

  // Loads `path` and makes `nranks` ranks on it.
  ncclResult_t start(const std::string& path, int nranks, const TransportConfig& config,
                     std::string* why);
  RecordingNet& net() { return *net_; }
  Rank& rank(int r) { return ranks_[r]; }

  // Ring: on every channel, rank r sends to rank (r + 1) % nranks.
  // p2p=true makes them p2p connections (connIndex 1): shared pools.
  ncclResult_t ring(int channels, bool p2p, bool useGdr, std::string* why);
  // Fan-in through shared comms: ranks 1..n are local ranks 0..n-1 of one
  // node whose proxy (rank 1's transport) sends for all of them to rank 0.
  ncclResult_t fanIn(int senders, int channels, std::string* why);

  // Rounds of random sizes up to maxBytes (some zero) on every link.
  ncclResult_t randomRounds(int rounds, size_t maxBytes, const RoundOptions& options, uint32_t seed,
                            std::string* why);

  std::vector<std::unique_ptr<Link>>& links() { return links_; }
  Rank& senderOf(const Link& l) { return ranks_[l.sender]; }
  Rank& receiverOf(const Link& l) { return ranks_[l.receiver]; }
  void dropLinks() { links_.clear(); }

 private:
  RankMaker maker_;
  std::unique_ptr<host::LoadedPlugin> plugin_;
  std::unique_ptr<RecordingNet> net_;
  std::vector<Rank> ranks_;
  std::vector<std::unique_ptr<Link>> links_;
  bool fanInTopology_ = false;
};

std::string testnetPath();
std::string loopnetPath(const std::string& variant);  // "" = plain loopnet

}  // namespace ncclnet::transport::testing
