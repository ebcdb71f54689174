// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): waiting for a posted operation.
#include "ncclnet/transport/proxy_op.hpp"

namespace ncclnet::transport {

bool OpCompletion::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

ncclResult_t OpCompletion::wait(std::chrono::milliseconds timeout, std::string* pending) const {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [this] { return done_; })) {
    if (pending) *pending = pending_.empty() ? "not started" : pending_;
    return ncclTimeout;
  }
  if (pending) pending->clear();
  return result_;
}

void OpCompletion::finish(ncclResult_t result) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    result_ = result;
  }
  cv_.notify_all();
}

void OpCompletion::setPending(std::string pending) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_ = std::move(pending);
}

}  // namespace ncclnet::transport
