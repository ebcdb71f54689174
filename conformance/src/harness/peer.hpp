// SPDX-License-Identifier: Apache-2.0
// A rank's side of the control channel: allgather and barriers through the
// coordinator, plus a reporter thread that tells the coordinator what this
// rank is doing, so that a hang can be explained even while a plugin call
// never returns.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/verdict.hpp"
#include "harness/wire.hpp"

namespace conformance {

// Thrown when a gather cannot complete (a peer died, hung or failed).
struct PeerLost {
  std::string why;
};

class Peer {
 public:
  Peer(std::unique_ptr<Channel> channel, int rank, int nranks);
  ~Peer();
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

  // Every rank's `mine`, in rank order. Throws PeerLost when some rank does
  // not arrive within `timeoutSec`; the message names it and what it does.
  std::vector<std::string> allgather(const std::string& label, const std::string& mine,
                                     double timeoutSec);
  void barrier(const std::string& label, double timeoutSec) { allgather(label, "", timeoutSec); }

  // What this rank is doing; sent when it lasts long enough to matter.
  void activity(const std::string& what);
  void note(const std::string& text);
  // Adds to a named counter of this rank; sendCounters() reports them all
  // once, so counting costs no traffic while a scenario runs.
  void count(const std::string& name, uint64_t n);
  void sendCounters();
  void expectExit();
  void verdict(const RankResult& result, uint64_t failedAtMs);

 private:
  void reportLoop();

  std::unique_ptr<Channel> channel_;
  int rank_;
  int nranks_;
  uint32_t sequence_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string activity_;
  uint64_t activityGeneration_ = 0;
  double activitySince_ = 0;
  bool stopping_ = false;
  std::map<std::string, uint64_t> counters_;
  std::thread reporter_;
};

}  // namespace conformance
