// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: every point measured for every subject (plugin or
// baseline) in alternation. All subjects are opened once in both processes;
// then, size by size and run by run, each subject moves the same messages,
// the first subject of each run rotating so that none always goes first.
// The parent sends and measures, the child receives and confirms.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pair.hpp"
#include "peer.hpp"

namespace ncclnet::bench {

struct Schedule {
  std::vector<size_t> sizes;
  std::vector<int> iters;  // per size, messages per comm
  std::vector<size_t> latencySizes;
  int latencyIters = 0;  // round trips per comm
  int window = 1;
  int runs = 1;
  int comms = 1;
};

struct SubjectResult {
  std::string label;
  std::string description;
  std::vector<std::vector<double>> gbps;       // [size][run], aggregate over comms
  std::vector<std::vector<double>> latencyUs;  // [latency size][run], half round trip
};

// Opens a subject's comms (one Peer each) in whichever process calls it;
// both processes call it in the same order. Empty on failure, with `why`.
using Opener = std::function<std::vector<std::unique_ptr<Peer>>(Pair&, std::string*)>;

// The subject measured by `order[k]` at position k of run `run`.
std::vector<int> runOrder(int subjects, int run);

bool measureSideBySide(const Schedule& schedule, const std::vector<Opener>& subjects,
                       std::vector<SubjectResult>* out);

}  // namespace ncclnet::bench
