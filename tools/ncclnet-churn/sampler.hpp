// SPDX-License-Identifier: Apache-2.0
// ncclnet-churn: what this process holds (resident memory, descriptors,
// threads), sampled between cycles, and whether it stayed flat.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ncclnet::churn {

struct Sample {
  uint64_t cycle = 0;
  uint64_t rssKiB = 0;
  int fds = 0;
  int threads = 0;
};

// Reads /proc/self: statm (resident pages), fd/ (entries), status (Threads).
Sample sampleProcess(uint64_t cycle);

struct Tolerance {
  // Growth allowed past the baseline. 1 MiB: allocator and page-granular
  // noise stays well under it over 10,000 cycles (tens of KiB), while a leak
  // of 128 B a cycle crosses it by then.
  uint64_t rssKiB = 1024;
  int fds = 2;
  int threads = 2;
};

// Growth from the baseline sample (taken once the plugin's pools and caches
// have warmed up) to the largest later sample.
struct Growth {
  Sample baseline;
  Sample last;
  Sample peak;                  // per field: the largest value after the baseline
  double rssBytesPerCycle = 0;  // least-squares slope from the baseline on
  bool flat = true;
  std::string verdict;  // "flat" or what grew past its tolerance
};

Growth judge(const std::vector<Sample>& samples, size_t baselineIndex, const Tolerance& tolerance);

}  // namespace ncclnet::churn
