// SPDX-License-Identifier: Apache-2.0
// ncclnet-sampler's subject: two named threads, one burning three times the
// CPU of the other in a function of its own, and a main thread that waits.
#include <pthread.h>

#include <chrono>
#include <thread>

namespace {

volatile unsigned long sink;

__attribute__((noinline)) void spinHeavy(std::chrono::milliseconds cpu) {
  auto until = std::chrono::steady_clock::now() + cpu;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 100000; ++i) sink = sink + 1;
  }
}

// Not the same instructions as spinHeavy: the linker would fold the two.
__attribute__((noinline)) void spinLight(std::chrono::milliseconds cpu) {
  auto until = std::chrono::steady_clock::now() + cpu;
  while (std::chrono::steady_clock::now() < until) {
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
