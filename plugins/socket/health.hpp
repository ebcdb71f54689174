// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the error state one comm shares with its helper threads: the
// SDK's sticky error (the first failure wins, is logged once, and every
// later call on the comm returns it, so a dead peer surfaces from test()
// instead of hanging), with the comm's logger and name for its lines.
#pragma once

#include <cstdarg>
#include <string>
#include <utility>

#include "ncclnet/log.hpp"
#include "ncclnet/result_policy.hpp"
#include "ncclnet/sticky_error.hpp"

namespace ncclnet::socket {

class Health {
 public:
  Health(Logger log, std::string what) : log_(log), what_(std::move(what)) {}

  ncclResult_t error() const { return error_.code(); }
  bool ok() const { return error_.ok(); }
  const Logger& log() const { return log_; }
  const std::string& what() const { return what_; }

  void fail(Failure failure, const char* fmt, ...) __attribute__((format(printf, 3, 4))) {
    va_list args;
    va_start(args, fmt);
    error_.vfail(log_, what_.c_str(), failure, fmt, args);
    va_end(args);
  }

 private:
  StickyError error_;
  Logger log_;
  std::string what_;  // "sendComm to 10.0.0.2<4312>", for every line
};

}  // namespace ncclnet::socket
