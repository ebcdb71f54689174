// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the hang watchdog.
#include "watchdog.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ncclnet::check {

namespace {

// The write end of the watchdog's pipe, for the signal handler: a handler
// gets no argument, so this one value is process-wide (one watchdog per
// process, the checker's).
std::atomic<int> gSignalPipe{-1};
struct sigaction gPreviousAction;

void onSigusr1(int) {
  int saved = errno;
  int fd = gSignalPipe.load(std::memory_order_relaxed);
  if (fd >= 0) {
    char byte = 1;
    ssize_t ignored = write(fd, &byte, 1);  // a full pipe already holds a wake-up
    (void)ignored;
  }
  errno = saved;
}

}  // namespace

Watchdog::Watchdog(const Ledger& ledger, const Reporter& reporter, int hangSec)
    : ledger_(ledger), reporter_(reporter), hangSec_(hangSec) {}

bool Watchdog::start(std::string* error) {
  if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = std::string("pipe2: ") + std::strerror(errno);
    return false;
  }
  int expected = -1;
  if (gSignalPipe.compare_exchange_strong(expected, pipe_[1])) {
    struct sigaction action {};
    action.sa_handler = onSigusr1;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR1, &action, &gPreviousAction) != 0) {
      *error = std::string("sigaction(SIGUSR1): ") + std::strerror(errno);
      gSignalPipe.store(-1);
      return false;
    }
    handlerInstalled_ = true;
  }
  thread_ = std::thread([this] { run(); });
  return true;
}

Watchdog::~Watchdog() {
  stop_.store(true);
  if (pipe_[1] >= 0) {
    char byte = 0;
    ssize_t ignored = write(pipe_[1], &byte, 1);
    (void)ignored;
  }
  if (thread_.joinable()) thread_.join();
  if (handlerInstalled_) {
    sigaction(SIGUSR1, &gPreviousAction, nullptr);
    gSignalPipe.store(-1);
  }
  for (int fd : pipe_) {
    if (fd >= 0) close(fd);
  }
}

size_t Watchdog::dump(const char* why) const {
  std::vector<Ledger::Outstanding> all = ledger_.outstanding(Clock::now());
  Logger log = reporter_.logger();
  NCCLNET_WARN(log, "watchdog (%s): %zu request(s) outstanding, oldest first", why, all.size());
  for (const Ledger::Outstanding& o : all) {
    NCCLNET_WARN(log, "watchdog: %s", o.text.c_str());
  }
  return all.size();
}

void Watchdog::run() {
  bool reported = false;
  while (!stop_.load()) {
    pollfd fd{pipe_[0], POLLIN, 0};
    int ready = poll(&fd, 1, 1000);
    if (stop_.load()) break;
    if (ready > 0) {
      char bytes[64];
      while (read(pipe_[0], bytes, sizeof(bytes)) > 0) {
      }
      dump("SIGUSR1");
      continue;
    }
    if (!reported && ledger_.oldestAgeSec(Clock::now()) > hangSec_) {
      char why[64];
      std::snprintf(why, sizeof(why), "a request pending longer than %d s", hangSec_);
      dump(why);
      reported = true;
    }
  }
}

}  // namespace ncclnet::check
