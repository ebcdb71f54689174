// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the requests a collComm hands NCCL. NCCL tests them out
// of order and never again once done (gin_host_proxy.cc
// proxyGinPollCompletions), so test() frees a request when it reports it
// done; the collComm owns every request it handed out and frees the rest at
// closeColl. Checking the pointer against the live set turns a stale or
// foreign request into an error rather than a crash.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ncclnet::socket::rma {

struct Request {
  enum State : int { kPending = 0, kDone = 1, kFailed = 2 };
  std::atomic<int> state{kPending};
  // A flush: done once every peer's landed gets reach these counts
  // (index = rank; empty for other requests).
  std::vector<uint64_t> landedTargets;

  void complete() { state.store(kDone, std::memory_order_release); }
  void fail() {
    int expected = kPending;
    state.compare_exchange_strong(expected, kFailed, std::memory_order_acq_rel);
  }
};

class RequestSet {
 public:
  Request* make() {
    auto request = std::make_unique<Request>();
    Request* raw = request.get();
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(raw, std::move(request));
    return raw;
  }
  // True when `request` is one of ours and not yet freed.
  bool contains(void* request) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(static_cast<Request*>(request)) != 0;
  }
  void free(Request* request) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.erase(request);
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Request*, std::unique_ptr<Request>> live_;
};

}  // namespace ncclnet::socket::rma
