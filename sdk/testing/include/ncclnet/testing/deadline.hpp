// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: a point in time that every wait in a test is
// bounded by, and a poll loop that stops there.
//
//   ncclnet::testing::Deadline deadline(10);  // ten seconds from now
//   bool done = ncclnet::testing::pollUntil(deadline, [&] { return ready(); });
//
// Tests must not hang: a wait without a deadline is a test that can.
#pragma once

#include <chrono>
#include <thread>

namespace ncclnet::testing {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  // `seconds` from now (fractions allowed).
  explicit Deadline(double seconds)
      : when_(Clock::now() +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))) {
  }

  bool expired() const { return Clock::now() >= when_; }
  Clock::time_point when() const { return when_; }
  // What is left, in whole milliseconds (0 once expired): poll()'s timeout.
  int remainingMs() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when_ - Clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
  }

 private:
  Clock::time_point when_;
};

// Seconds since `start`, for messages and measurements.
inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Calls `done()` until it returns true (then true) or the deadline passes
// (then false), sleeping `pause` between calls (zero: spin, as NCCL's proxy
// thread polls a request).
template <class Done>
bool pollUntil(const Deadline& deadline, Done&& done,
               std::chrono::microseconds pause = std::chrono::microseconds(0)) {
  for (;;) {
    if (done()) return true;
    if (deadline.expired()) return false;
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
  }
}

}  // namespace ncclnet::testing
