// SPDX-License-Identifier: Apache-2.0
#include "stats.hpp"

#include <algorithm>
#include <cmath>

namespace ncclnet::bench {

double quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  double position = std::clamp(q, 0.0, 1.0) * double(samples.size() - 1);
  size_t below = static_cast<size_t>(std::floor(position));
  size_t above = std::min(below + 1, samples.size() - 1);
  double fraction = position - double(below);
  return samples[below] + (samples[above] - samples[below]) * fraction;
}

Summary summarize(const std::vector<double>& samples) {
  Summary s;
  if (samples.empty()) return s;
  s.median = quantile(samples, 0.5);
  s.q1 = quantile(samples, 0.25);
  s.q3 = quantile(samples, 0.75);
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

std::vector<double> pairedRatios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ratios;
  for (size_t i = 0; i < std::min(a.size(), b.size()); i++) {
    if (b[i] > 0) ratios.push_back(a[i] / b[i]);
  }
  return ratios;
}

double aggregateGbps(size_t size, int iters, int comms, double seconds) {
  if (seconds <= 0) return 0;
  return double(size) * double(iters) * double(comms) / seconds / 1e9;
}

double messagesPerSecond(double gbps, size_t size) {
  return size == 0 ? 0 : gbps * 1e9 / double(size);
}

double halfRoundTripUs(double seconds, int iters) {
  return iters <= 0 ? 0 : seconds / iters / 2 * 1e6;
}

}  // namespace ncclnet::bench
