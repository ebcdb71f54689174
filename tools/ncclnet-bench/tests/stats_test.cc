// SPDX-License-Identifier: Apache-2.0
// The arithmetic behind ncclnet-bench's figures: medians, spread, ratios
// run by run, aggregate bandwidth over many comms.
#include "stats.hpp"

#include <gtest/gtest.h>

namespace ncclnet::bench {
namespace {

TEST(BenchStats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(summarize({5, 1, 3}).median, 3);
  EXPECT_DOUBLE_EQ(summarize({4, 1, 3, 2}).median, 2.5);
  EXPECT_DOUBLE_EQ(summarize({7}).median, 7);
}

TEST(BenchStats, QuartilesInterpolateBetweenSamples) {
  Summary s = summarize({4, 2, 3, 1});
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  Summary five = summarize({10, 50, 20, 40, 30});
  EXPECT_DOUBLE_EQ(five.q1, 20);
  EXPECT_DOUBLE_EQ(five.median, 30);
  EXPECT_DOUBLE_EQ(five.q3, 40);
}

TEST(BenchStats, OneOutlierMovesNeitherMedianNorQuartiles) {
  Summary calm = summarize({1.0, 1.1, 0.9, 1.0, 1.05});
  Summary noisy = summarize({1.0, 1.1, 0.9, 1.0, 100.0});
  EXPECT_DOUBLE_EQ(calm.median, noisy.median);
  EXPECT_DOUBLE_EQ(calm.q1, noisy.q1);
  EXPECT_DOUBLE_EQ(noisy.max, 100.0);
}

TEST(BenchStats, EmptyInputGivesZeros) {
  Summary s = summarize({});
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.max, 0);
  EXPECT_EQ(quantile({}, 0.5), 0);
}

TEST(BenchStats, RatiosAreTakenRunByRun) {
  // Run 2 was slow for both sides: its ratio is as good as the others,
  // which the ratio of the two medians would not show.
  std::vector<double> plugin = {2.0, 1.0, 2.2};
  std::vector<double> baseline = {4.0, 2.0, 4.0};
  std::vector<double> r = pairedRatios(plugin, baseline);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 0.55);
  EXPECT_DOUBLE_EQ(summarize(r).median, 0.5);
}

TEST(BenchStats, RatiosSkipRunsWithoutADenominator) {
  std::vector<double> r = pairedRatios({1, 2, 3}, {2, 0, 3});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 1.0);
  EXPECT_TRUE(pairedRatios({1, 2}, {}).empty());
}

TEST(BenchStats, AggregateBandwidthCountsEveryComm) {
  // 4 comms x 1000 messages x 1 MiB in half a second.
  EXPECT_DOUBLE_EQ(aggregateGbps(1 << 20, 1000, 4, 0.5), 4.0 * 1000 * 1048576 / 0.5 / 1e9);
  EXPECT_DOUBLE_EQ(aggregateGbps(1 << 20, 1000, 1, 0.5) * 4, aggregateGbps(1 << 20, 1000, 4, 0.5));
  EXPECT_EQ(aggregateGbps(8, 10, 1, 0), 0);
}

TEST(BenchStats, MessageRateAndLatency) {
  EXPECT_DOUBLE_EQ(messagesPerSecond(0.008, 8), 1e6);
  EXPECT_EQ(messagesPerSecond(1, 0), 0);
  // 1000 round trips in 20 ms: 10 us each way.
  EXPECT_DOUBLE_EQ(halfRoundTripUs(0.02, 1000), 10);
}

}  // namespace
}  // namespace ncclnet::bench
