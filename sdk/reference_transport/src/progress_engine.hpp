// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the progress thread (NCCL's
// proxy progress thread). Operations that share a key (a connection, or a
// p2p pool channel) run one at a time in posting order, as NCCL chains them
// on proxyAppendPtr; all active operations are progressed round-robin.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "proxy_progress.hpp"

namespace ncclnet::transport::detail {

class ProgressEngine {
 public:
  explicit ProgressEngine(TransportState& core);
  ~ProgressEngine();  // fails operations still queued or running
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  void post(std::unique_ptr<ProxyOpState> op);
  // Drops (fails) every operation with a sub on `conn`, and returns once the
  // progress thread no longer touches it. Called before a connection is
  // freed, so an operation left behind by a failure cannot use freed memory.
  void cancel(const ConnectionState* conn);

 private:
  void run();

  TransportState& core_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<std::unique_ptr<ProxyOpState>> incoming_;
  std::vector<const ConnectionState*> cancels_;
  uint64_t cancelsPosted_ = 0;
  uint64_t cancelsServed_ = 0;
  std::thread thread_;
};

}  // namespace ncclnet::transport::detail
