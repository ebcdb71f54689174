// SPDX-License-Identifier: Apache-2.0
#include "ncclnet/log.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "ncclnet/host/log_capture.hpp"

using ncclnet::host::captureLogger;
using ncclnet::host::clearCapturedLines;
using ncclnet::host::countCaptured;

TEST(Logger, PrefixesEveryLineAndUsesTheDefaultSubsystem) {
  clearCapturedLines();
  ncclnet::Logger log(captureLogger, "NET/sdk-test", NCCL_NET);
  NCCLNET_WARN(log, "connect to %s failed", "peer");
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "NET/sdk-test connect to peer failed"), 1);
  EXPECT_EQ(ncclnet::host::capturedLines().back().flags, static_cast<unsigned long>(NCCL_NET));
}

TEST(Logger, ExplicitSubsystemWins) {
  clearCapturedLines();
  ncclnet::Logger log(captureLogger, "NET/x");
  NCCLNET_INFO(log, NCCL_INIT, "hello");
  std::vector<ncclnet::host::LogLine> lines = ncclnet::host::capturedLines();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().flags, static_cast<unsigned long>(NCCL_INIT));
}

TEST(Logger, StderrFallbackFollowsNcclDebug) {
  unsetenv("NCCL_DEBUG");
  ncclnet::Logger quiet(nullptr, "NET/x");
  EXPECT_TRUE(quiet.enabled(NCCL_LOG_WARN));
  EXPECT_FALSE(quiet.enabled(NCCL_LOG_INFO));
  setenv("NCCL_DEBUG", "info", 1);
  ncclnet::Logger chatty(nullptr, "NET/x");
  EXPECT_TRUE(chatty.enabled(NCCL_LOG_INFO));
  EXPECT_FALSE(chatty.enabled(NCCL_LOG_TRACE));
  setenv("NCCL_DEBUG", "bogus", 1);
  ncclnet::Logger typo(nullptr, "NET/x");
  EXPECT_TRUE(typo.enabled(NCCL_LOG_WARN)) << "an unknown NCCL_DEBUG never hides warnings";
  unsetenv("NCCL_DEBUG");
  testing::internal::CaptureStderr();
  NCCLNET_WARN(quiet, "to stderr %d", 42);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "WARN NET/x to stderr 42\n");
}

TEST(Logger, LongMessagesAreTruncatedNotOverrun) {
  clearCapturedLines();
  ncclnet::Logger log(captureLogger, "NET/x");
  std::string big(5000, 'a');
  NCCLNET_WARN(log, "%s", big.c_str());
  EXPECT_LT(ncclnet::host::capturedLines().back().text.size(), 1100u);
}

TEST(WarnLimit, PassesABurstPerWindowAndCountsTheRest) {
  using namespace std::chrono;
  ncclnet::WarnLimit limit(3, seconds(10));
  auto t0 = ncclnet::WarnLimit::Clock::now();
  for (int i = 0; i < 3; i++) {
    auto ticket = limit.take(t0 + milliseconds(i));
    EXPECT_TRUE(ticket.pass) << i;
    EXPECT_STREQ(ticket.note, "");
  }
  for (int i = 0; i < 7; i++) EXPECT_FALSE(limit.take(t0 + seconds(1)).pass);
  auto next = limit.take(t0 + seconds(11));
  EXPECT_TRUE(next.pass);
  EXPECT_STREQ(next.note, " (7 similar warnings suppressed)");
  EXPECT_STREQ(limit.take(t0 + seconds(12)).note, "") << "the count is reported once";
}

TEST(WarnLimit, TheMacroLogsOnlyWhatPassesAndAppendsTheCount) {
  clearCapturedLines();
  ncclnet::Logger log(captureLogger, "NET/x");
  ncclnet::WarnLimit limit(2, std::chrono::hours(1));
  for (int i = 0; i < 110; i++) NCCLNET_WARN_LIMITED(log, limit, "stray %d refused", i);
  NCCLNET_WARN_LIMITED(log, limit, "no arguments");
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "NET/x stray"), 2);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "stray 1 refused"), 1);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "no arguments"), 0);
}
