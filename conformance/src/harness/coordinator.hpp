// SPDX-License-Identifier: Apache-2.0
// The coordinator runs one scenario at a time across its ranks: it starts
// every rank in a fresh process (forked here, or by the agent of another
// node), routes their gathers, collects their verdicts and enforces the
// deadline. A hang becomes a failure that says what each rank was doing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/launch.hpp"
#include "harness/verdict.hpp"
#include "harness/wire.hpp"
#include "scenario/rules.hpp"

namespace conformance {

struct RunRequest {
  std::string scenario;
  int version = 0;
  int ranks = 2;
  double deadlineSec = 20;
  Rule rule = Rule::ProfileExpectation;  // the scenario's: crashes and expired deadlines break it
};

struct Outcome {
  Verdict verdict = Verdict::Pass;
  std::string reason;
  std::vector<std::string> notes;
  std::map<std::string, uint64_t> counters;  // summed over the ranks
  double seconds = 0;
};

class Coordinator {
 public:
  explicit Coordinator(WorkerEntry entry) : entry_(std::move(entry)) {}
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Listens on bindHost:port (port 0: any) and waits for the agents of
  // world ranks 1..worldSize-1. Workers are told to call advertiseHost.
  bool open(const std::string& bindHost, int port, const std::string& advertiseHost, int worldSize,
            double agentWaitSec, std::string* error);
  Outcome run(const RunRequest& request);
  // Tells the agents to exit.
  void shutdown();

 private:
  struct Rank;
  struct Run;
  void acceptConnection(Run& run);
  void handleFrame(Run& run, int rank, const Frame& frame);
  void handleAgentFrame(Run& run, const Frame& frame);
  void progressGathers(Run& run);
  void failGather(Run& run, const std::string& why);
  void reap(Run& run);
  void askForStacks(Run& run);
  void killAll(Run& run);
  Outcome conclude(Run& run, const RunRequest& request, bool expired);
  std::string pendingReport(const Run& run) const;

  WorkerEntry entry_;
  int listenFd_ = -1;
  std::string advertiseHost_;
  int port_ = 0;
  int worldSize_ = 1;
  uint64_t nextRunId_ = 1;
  std::vector<std::unique_ptr<Channel>> agents_;  // index: world rank (0 unused)
};

}  // namespace conformance
