// SPDX-License-Identifier: Apache-2.0
// A comm's first failure (sticky_error.hpp says what and why).
#include "ncclnet/sticky_error.hpp"

#include <cstdarg>
#include <cstdio>

namespace ncclnet {

std::string StickyError::reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reason_;
}

bool StickyError::record(ncclResult_t code, const std::string& reason) {
  if (code == ncclSuccess || !ok()) return false;  // the common case: no lock
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ok()) return false;  // another thread was first
  reason_ = reason;
  // Published after the reason: a reader that sees the code finds it.
  code_.store(code, std::memory_order_release);
  return true;
}

ncclResult_t StickyError::fail(const Logger& log, const char* what, Failure failure,
                               const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  ncclResult_t res = vfail(log, what, failure, fmt, args);
  va_end(args);
  return res;
}

ncclResult_t StickyError::vfail(const Logger& log, const char* what, Failure failure,
                                const char* fmt, va_list args) {
  if (!ok()) return code();  // formatting skipped: the first line was logged
  char reason[512];
  std::vsnprintf(reason, sizeof(reason), fmt, args);
  if (!record(resultOf(failure), reason)) return code();
  if (what != nullptr) {
    NCCLNET_WARN(log, "%s: %s", what, reason);
  } else {
    NCCLNET_WARN(log, "%s", reason);
  }
  return code();
}

}  // namespace ncclnet
