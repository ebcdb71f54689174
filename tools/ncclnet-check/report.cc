// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the one WARN line of a violation.
#include "report.hpp"

#include <cstdlib>

namespace ncclnet::check {

void Reporter::setLogger(Logger logger) {
  std::lock_guard<std::mutex> lock(mutex_);
  logger_ = logger;
}

void Reporter::setTap(std::function<void(const std::string&)> tap) {
  std::lock_guard<std::mutex> lock(mutex_);
  tap_ = std::move(tap);
}

Logger Reporter::logger() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return logger_;
}

void Reporter::violation(const CheckRule& rule, const std::string& comm, const std::string& request,
                         const std::string& what, Party party) {
  count_.fetch_add(1, std::memory_order_relaxed);
  std::string line =
      contract::ruleTag(rule.rule) + (party == Party::Caller ? " (caller): " : ": ") + what;
  if (!comm.empty()) line += " | " + comm;
  if (!request.empty()) line += " | " + request;
  Logger logger;
  std::function<void(const std::string&)> tap;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    logger = logger_;
    tap = tap_;
  }
  NCCLNET_WARN(logger, "%s", line.c_str());
  if (tap) tap(line);
  if (abortOnViolation_) {
    NCCLNET_WARN(logger, "aborting on the first violation (NCCLNET_CHECK_ABORT=1)");
    std::abort();
  }
}

}  // namespace ncclnet::check
