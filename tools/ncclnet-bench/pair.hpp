// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: two processes joined by a pair of pipes. The parent drives
// and measures; the forked child serves. Both run the same schedule, so the
// pipes carry only handles and barriers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>

namespace ncclnet::bench {

using Clock = std::chrono::steady_clock;

class Pair {
 public:
  // Forks; the child runs `child(pair)` and exits with its return value.
  explicit Pair(const std::function<int(Pair&)>& child);
  ~Pair();  // reaps (kills if needed) the child
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;

  bool ok() const { return ok_; }
  bool isChild() const { return isChild_; }
  bool send(const void* data, size_t size);
  bool recv(void* data, size_t size, double seconds = 60);
  // Both sides call it; returns when both arrived.
  bool barrier();
  // Parent only: the child's exit status (-1 when it did not exit cleanly).
  int join(double seconds = 60);

 private:
  bool ok_ = false;
  bool isChild_ = false;
  pid_t pid_ = -1;
  int readFd_ = -1;
  int writeFd_ = -1;
};

double secondsSince(Clock::time_point start);

}  // namespace ncclnet::bench
