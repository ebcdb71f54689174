// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the clocks of the data path. A precise steady_clock read
// costs 25-80 ns on a virtual machine (kvm-clock), and each call needs two,
// so the checker reads the coarse monotonic clock (the kernel's last tick,
// a few ns) wherever a few milliseconds of resolution are enough: request
// ages, and call durations when the block bound is long.
#pragma once

#include <time.h>

#include <chrono>

namespace ncclnet::check {

using Clock = std::chrono::steady_clock;

// CLOCK_MONOTONIC_COARSE on steady_clock's (CLOCK_MONOTONIC's) time line:
// at most one tick (1-4 ms) behind Clock::now().
inline Clock::time_point coarseNow() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return Clock::time_point(std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec));
}

// Block bounds below this are timed with the precise clock.
constexpr std::chrono::microseconds kCoarseEnough{20000};

}  // namespace ncclnet::check
