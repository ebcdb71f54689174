// SPDX-License-Identifier: Apache-2.0
// Failures seen on a scenario's worker threads. A scenario's checks throw,
// which must not happen off the scenario's own thread, so workers record
// here and the scenario thread reports the first one.
#pragma once

#include <mutex>
#include <string>

namespace conformance {

class ThreadFailures {
 public:
  void add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_.empty()) first_ = what;
    count_++;
  }
  int count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_;
  }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 private:
  mutable std::mutex mutex_;
  std::string first_;
  int count_ = 0;
};

}  // namespace conformance
