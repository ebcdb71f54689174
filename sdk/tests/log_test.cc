// SPDX-License-Identifier: Apache-2.0
#include "ncclnet/log.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "log_capture.hpp"

using ncclnet::testing::captureLogger;
using ncclnet::testing::clearLog;
using ncclnet::testing::countLogged;

TEST(Logger, PrefixesEveryLineAndUsesTheDefaultSubsystem) {
  clearLog();
  ncclnet::Logger log(captureLogger, "NET/sdk-test", NCCL_NET);
  NCCLNET_WARN(log, "connect to %s failed", "peer");
  EXPECT_EQ(countLogged(NCCL_LOG_WARN, "NET/sdk-test connect to peer failed"), 1);
  std::lock_guard<std::mutex> lock(ncclnet::testing::loggedMutex());
  EXPECT_EQ(ncclnet::testing::loggedLines().back().flags, static_cast<unsigned long>(NCCL_NET));
}

TEST(Logger, ExplicitSubsystemWins) {
  clearLog();
  ncclnet::Logger log(captureLogger, "NET/x");
  NCCLNET_INFO(log, NCCL_INIT, "hello");
  std::lock_guard<std::mutex> lock(ncclnet::testing::loggedMutex());
  ASSERT_FALSE(ncclnet::testing::loggedLines().empty());
  EXPECT_EQ(ncclnet::testing::loggedLines().back().flags, static_cast<unsigned long>(NCCL_INIT));
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
  clearLog();
  ncclnet::Logger log(captureLogger, "NET/x");
  std::string big(5000, 'a');
  NCCLNET_WARN(log, "%s", big.c_str());
  std::lock_guard<std::mutex> lock(ncclnet::testing::loggedMutex());
  EXPECT_LT(ncclnet::testing::loggedLines().back().text.size(), 1100u);
}
