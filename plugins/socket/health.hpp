// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the error state one comm shares with its helper threads. The
// first failure wins and is logged once; every later call on the comm
// returns it, so a dead peer surfaces from test() instead of hanging.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "ncclnet/log.hpp"

namespace ncclnet::socket {

class Health {
 public:
  Health(Logger log, std::string what) : log_(log), what_(std::move(what)) {}

  ncclResult_t error() const { return error_.load(std::memory_order_acquire); }
  bool ok() const { return error() == ncclSuccess; }
  const Logger& log() const { return log_; }
  const std::string& what() const { return what_; }

  void fail(ncclResult_t res, const char* fmt, ...) __attribute__((format(printf, 3, 4))) {
    ncclResult_t expected = ncclSuccess;
    if (!error_.compare_exchange_strong(expected, res, std::memory_order_acq_rel)) return;
    char reason[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(reason, sizeof(reason), fmt, args);
    va_end(args);
    NCCLNET_WARN(log_, "%s: %s", what_.c_str(), reason);
  }

 private:
  std::atomic<ncclResult_t> error_{ncclSuccess};
  Logger log_;
  std::string what_;  // "sendComm to 10.0.0.2<4312>", for every line
};

}  // namespace ncclnet::socket
