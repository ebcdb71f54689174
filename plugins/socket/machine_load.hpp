// SPDX-License-Identifier: Apache-2.0
// sdk-socket: whether the whole machine has far more threads ready to run
// than CPUs. Helper threads retry (spin) only while it does not: the helper
// census counts one process, and on a node where every rank is its own
// process, each sees all cores as its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "ncclnet/socket_io.hpp"

namespace ncclnet::socket {

class MachineLoad {
 public:
  // `path`: a file in /proc/loadavg's format ("0.52 0.58 0.59 3/1234 567",
  // the fourth field counting runnable threads); `cpus`: the machine's
  // online CPUs. A file that cannot be read means "not busy": the check
  // only ever stops spinning.
  MachineLoad(const std::string& path, int cpus);

  // True while more than 1.5 threads per CPU are runnable. Any thread
  // may call it; the file is read at most once per kRefreshNs, by whichever
  // caller finds the last reading stale.
  bool busy();

  static constexpr int64_t kRefreshNs = 100 * 1000;

 private:
  bool read();

  Fd file_;
  const int cpus_;
  std::atomic<int64_t> readAtNs_;
  std::atomic<bool> busy_{false};
};

// The count in a /proc/loadavg line, or -1 when the line is malformed.
int runnableThreads(const char* line);

}  // namespace ncclnet::socket
