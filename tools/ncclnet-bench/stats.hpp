// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: the arithmetic behind every figure it prints. A figure is
// the median over alternating runs, its spread the interquartile range; a
// ratio is taken run by run (both sides measured back to back), then
// summarized the same way, so a slow moment of the machine moves both sides
// of one ratio rather than one side of the median.
#pragma once

#include <cstddef>
#include <vector>

namespace ncclnet::bench {

struct Summary {
  double median = 0;
  double q1 = 0;  // 25th percentile
  double q3 = 0;  // 75th percentile
  double min = 0;
  double max = 0;
};

// Percentiles by linear interpolation between the sorted samples (the
// usual "type 7" definition: q of {1, 2, 3, 4} at 0.25 is 1.75). An empty
// input gives an all-zero summary.
double quantile(std::vector<double> samples, double q);
Summary summarize(const std::vector<double>& samples);

// a[i] / b[i] for each run; both vectors have one entry per run. A run
// whose denominator is not positive is left out.
std::vector<double> pairedRatios(const std::vector<double>& a, const std::vector<double>& b);

// Bytes moved by `comms` comms, each carrying `iters` messages of `size`
// bytes, in `seconds`, as GB/s (1e9 bytes per second).
double aggregateGbps(size_t size, int iters, int comms, double seconds);

// Messages per second behind a bandwidth figure.
double messagesPerSecond(double gbps, size_t size);

// Half a round trip in microseconds, `iters` round trips in `seconds`.
double halfRoundTripUs(double seconds, int iters);

}  // namespace ncclnet::bench
