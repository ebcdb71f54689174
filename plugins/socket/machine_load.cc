// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the machine's runnable-thread count, from /proc/loadavg.
#include "machine_load.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "timeline.hpp"

namespace ncclnet::socket {

int runnableThreads(const char* line) {
  double load1 = 0, load5 = 0, load15 = 0;
  int running = 0, total = 0;
  if (std::sscanf(line, "%lf %lf %lf %d/%d", &load1, &load5, &load15, &running, &total) != 5) {
    return -1;
  }
  return running;
}

MachineLoad::MachineLoad(const std::string& path, int cpus)
    : file_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)),
      cpus_(cpus),
      readAtNs_(steadyNowNs() - kRefreshNs) {}

bool MachineLoad::busy() {
  if (!file_.valid()) return false;
  int64_t now = steadyNowNs();
  int64_t last = readAtNs_.load(std::memory_order_relaxed);
  // One caller per period reads; the others keep the last answer.
  if (now - last >= kRefreshNs &&
      readAtNs_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    busy_.store(read(), std::memory_order_relaxed);
  }
  return busy_.load(std::memory_order_relaxed);
}

bool MachineLoad::read() {
  char line[128];
  ssize_t n = ::pread(file_.get(), line, sizeof(line) - 1, 0);
  if (n <= 0) return false;
  line[n] = '\0';
  // The count includes the thread reading it, and NCCL's own threads run
  // next to the helpers: on the GPU host, 2 ranks on 2 channels in one
  // process peaked at 35 runnable threads on 32 CPUs. Half again as many
  // threads as CPUs is oversubscription no helper should add to (ranks in
  // processes of their own, each sure the cores are all its own).
  return runnableThreads(line) > cpus_ + cpus_ / 2;
}

}  // namespace ncclnet::socket
