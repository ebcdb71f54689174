// SPDX-License-Identifier: Apache-2.0
// ncclnet-sampler's subject: two named threads, one burning three times the
// CPU of the other in a function of its own, and a main thread that waits.
#include <pthread.h>

#include <time.h>

#include <chrono>
#include <thread>

namespace {

volatile unsigned long sink;

// The thread's own CPU clock, not the wall clock: on a loaded machine a thread
// spinning for a wall-clock span burns less CPU than the span, and the report
// would be judged against CPU it never used.
std::chrono::nanoseconds threadCpu() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

__attribute__((noinline)) void spinHeavy(std::chrono::milliseconds cpu) {
  auto until = threadCpu() + cpu;
  while (threadCpu() < until) {
    for (int i = 0; i < 100000; ++i) sink = sink + 1;
  }
}

// Not the same instructions as spinHeavy: the linker would fold the two.
__attribute__((noinline)) void spinLight(std::chrono::milliseconds cpu) {
  auto until = threadCpu() + cpu;
  while (threadCpu() < until) {
    for (int i = 0; i < 100000; ++i) sink = sink + 3;
  }
}

}  // namespace

int main() {
  std::thread heavy([] {
    pthread_setname_np(pthread_self(), "heavy worker");
    spinHeavy(std::chrono::milliseconds(600));
  });
  std::thread light([] {
    pthread_setname_np(pthread_self(), "light worker");
    spinLight(std::chrono::milliseconds(200));
  });
  heavy.join();
  light.join();
  return 0;
}
