// SPDX-License-Identifier: Apache-2.0
// Two-process scenarios: the test forks a peer, each process runs one side
// of a topology on its own Transport, connect handles travel over pipes.
// A peer still running at the deadline is killed by its pid.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"

namespace ncclnet::transport::testing {

// One link of a topology: which process sends, which receives, and the
// specs NCCL would build on each side.
struct LinkSpec {
  int sendProcess = 0;
  int recvProcess = 1;
  ConnectionSpec send;
  ConnectionSpec recv;
};

struct TwoProcessScenario {
  std::string plugin;
  TransportConfig config;
  std::vector<LinkSpec> links;
  std::vector<RoundOptions> phases;  // each runs `rounds` rounds
  int rounds = 8;
  size_t maxBytes = 200000;
  uint32_t seed = 1;
  bool sendGroupByLocalRank = false;  // one send operation per sending local rank
};

// Runs `scenario` in this process (process 0) and a forked one (process 1).
// Returns "" when both passed, else what failed, naming the process.
std::string runTwoProcesses(const TwoProcessScenario& scenario);

// Ring of two ranks on `channels` channels (p2p: shared pools).
std::vector<LinkSpec> twoRankRing(int channels, bool p2p);
// Process 1 proxies `senders` local ranks that all send to rank 0 in
// process 0, over one shared comm per channel.
std::vector<LinkSpec> fanInLinks(int senders, int channels);

}  // namespace ncclnet::transport::testing
