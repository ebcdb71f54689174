// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: turns a violation into its one WARN line, counts it, and
// aborts the process on the first one when asked to (NCCLNET_CHECK_ABORT=1).
//
//   Reporter r(logger, /*abortOnViolation=*/false);
//   r.violation(rules::kTruncationIsAnError, "recvComm #2 (dev 0)", "irecv #17 ...",
//               "test reported 8192 bytes in buffer 0, posted 4096");
//   // WARN NET/check rule 32 TruncationIsAnError: test reported ... | recvComm #2 ... | irecv #17
//   ...
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "ncclnet/log.hpp"
#include "rules.hpp"

namespace ncclnet::check {

// Who broke the rule: the plugin, or whatever drives it (NCCL, a test).
// A caller's line reads "rule N Name (caller): ...", so that a job's judge
// can tell a plugin's defect from NCCL's own way of aborting (rule 51).
enum class Party { Plugin, Caller };

class Reporter {
 public:
  Reporter() = default;
  Reporter(Logger logger, bool abortOnViolation)
      : logger_(logger), abortOnViolation_(abortOnViolation) {}

  // The logger may change: NCCL hands its own to init, after the library
  // has been loaded. Lines before that go to stderr.
  void setLogger(Logger logger);
  void setAbortOnViolation(bool abort) { abortOnViolation_ = abort; }

  // One WARN line: "rule N Name: what | comm | request" ("rule N Name
  // (caller): ..." for the caller's). Empty comm or request parts are left out.
  void violation(const CheckRule& rule, const std::string& comm, const std::string& request,
                 const std::string& what, Party party = Party::Plugin);

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

  // Tests: every line is also handed to `tap` (nullptr: none).
  void setTap(std::function<void(const std::string&)> tap);

  Logger logger() const;

 private:
  mutable std::mutex mutex_;  // logger_ and tap_ only; never held on the data path
  Logger logger_{nullptr, "NET/check"};
  std::function<void(const std::string&)> tap_;
  bool abortOnViolation_ = false;
  std::atomic<uint64_t> count_{0};
};

}  // namespace ncclnet::check
