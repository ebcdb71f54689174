// SPDX-License-Identifier: Apache-2.0
// ncclnet-sampler: where the signal handler puts what it saw. Fixed-size
// and allocated up front: the handler may not allocate or lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ncclnet::sampler {

constexpr int kMaxDepth = 48;
constexpr int kNameBytes = 16;  // a Linux thread name, with its NUL

struct Sample {
  int32_t tid;
  int32_t depth;  // frames in pc, innermost first
  // The thread's CPU time since its previous sample: a CPU-clock timer
  // fires at the kernel's tick at best, so the interval asked for is not
  // what a sample stands for.
  uint64_t cpuNs;
  void* pc[kMaxDepth];
};

struct ThreadName {
  std::atomic<int32_t> tid{0};
  char name[kNameBytes];
};

// Everything one process recorded; lives in anonymous memory mapped at
// start, so the handler only stores into it.
struct SampleStore {
  static constexpr size_t kCapacity = size_t(1) << 17;
  static constexpr size_t kThreads = 4096;
  std::atomic<size_t> next{0};
  std::atomic<size_t> dropped{0};
  Sample samples[kCapacity];
  ThreadName threads[kThreads];

  size_t recorded() const {
    size_t n = next.load(std::memory_order_acquire);
    return n < kCapacity ? n : kCapacity;
  }
};

}  // namespace ncclnet::sampler
