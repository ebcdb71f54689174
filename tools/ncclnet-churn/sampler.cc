// SPDX-License-Identifier: Apache-2.0
// ncclnet-churn: process resource samples.
#include "sampler.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ncclnet::churn {

namespace {

uint64_t residentKiB() {
  unsigned long size = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) / 1024;
}

int openDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') n++;
  }
  closedir(dir);
  return n - 1;  // the directory's own descriptor
}

int threadCount() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int threads = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "Threads: %d", &threads) == 1) break;
  }
  std::fclose(f);
  return threads;
}

}  // namespace

Sample sampleProcess(uint64_t cycle) {
  return Sample{cycle, residentKiB(), openDescriptors(), threadCount()};
}

Growth judge(const std::vector<Sample>& samples, size_t baselineIndex, const Tolerance& tolerance) {
  Growth g;
  if (samples.empty()) return g;
  baselineIndex = std::min(baselineIndex, samples.size() - 1);
  g.baseline = samples[baselineIndex];
  g.last = samples.back();
  g.peak = g.baseline;
  for (size_t i = baselineIndex; i < samples.size(); i++) {
    g.peak.rssKiB = std::max(g.peak.rssKiB, samples[i].rssKiB);
    g.peak.fds = std::max(g.peak.fds, samples[i].fds);
    g.peak.threads = std::max(g.peak.threads, samples[i].threads);
  }
  // The slope tells a leak (steady) from a step (a pool that grew once).
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = baselineIndex; i < samples.size(); i++) {
    double x = static_cast<double>(samples[i].cycle), y = 1024.0 * samples[i].rssKiB;
    n++, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  if (n >= 2 && n * sxx - sx * sx > 0)
    g.rssBytesPerCycle = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  std::string grew;
  auto add = [&grew](const std::string& what) { grew += (grew.empty() ? "" : ", ") + what; };
  if (g.peak.rssKiB > g.baseline.rssKiB + tolerance.rssKiB)
    add("RSS +" + std::to_string(g.peak.rssKiB - g.baseline.rssKiB) + " KiB (tolerance " +
        std::to_string(tolerance.rssKiB) + ")");
  if (g.peak.fds > g.baseline.fds + tolerance.fds)
    add("fds +" + std::to_string(g.peak.fds - g.baseline.fds) + " (tolerance " +
        std::to_string(tolerance.fds) + ")");
  if (g.peak.threads > g.baseline.threads + tolerance.threads)
    add("threads +" + std::to_string(g.peak.threads - g.baseline.threads) + " (tolerance " +
        std::to_string(tolerance.threads) + ")");
  g.flat = grew.empty();
  g.verdict = g.flat ? "flat" : "grew: " + grew;
  return g;
}

}  // namespace ncclnet::churn
