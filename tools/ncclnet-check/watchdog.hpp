// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the hang watchdog (NCCLNET_CHECK_HANG_S). A thread looks at
// the ledger once a second; the first time a request has been pending
// longer than the bound it prints every outstanding request of every comm,
// and it prints them again each time the process gets SIGUSR1. The signal
// handler only writes a byte to a pipe the thread polls.
#pragma once

#include <atomic>
#include <thread>

#include "ledger.hpp"
#include "report.hpp"

namespace ncclnet::check {

class Watchdog {
 public:
  Watchdog(const Ledger& ledger, const Reporter& reporter, int hangSec);
  ~Watchdog();  // stops and joins the thread, restores SIGUSR1
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // False (and `error`) when the pipe, the handler or the thread fails.
  bool start(std::string* error);

  // Prints every outstanding request; returns how many there were.
  size_t dump(const char* why) const;

 private:
  void run();

  const Ledger& ledger_;
  const Reporter& reporter_;
  const int hangSec_;
  int pipe_[2] = {-1, -1};
  bool handlerInstalled_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ncclnet::check
