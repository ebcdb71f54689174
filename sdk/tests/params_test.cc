// SPDX-License-Identifier: Apache-2.0
#include "ncclnet/params.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "ncclnet/host/log_capture.hpp"

using ncclnet::host::captureLogger;
using ncclnet::host::clearCapturedLines;
using ncclnet::host::countCaptured;

namespace {

class ParamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clearCapturedLines();
    unsetenv("NCCLNET_TEST_KNOB");
  }
  void TearDown() override { unsetenv("NCCLNET_TEST_KNOB"); }
  ncclnet::ParamTable table{ncclnet::Logger(captureLogger, "NET/test")};
};

TEST_F(ParamsTest, UnsetGivesTheDefault) {
  int64_t value = 0;
  ASSERT_EQ(table.readInt("NCCLNET_TEST_KNOB", 7, "help", &value), ncclSuccess);
  EXPECT_EQ(value, 7);
  ASSERT_EQ(table.all().size(), 1u);
  EXPECT_FALSE(table.all()[0].fromEnv);
}

TEST_F(ParamsTest, EnvironmentOverridesAndIsLogged) {
  setenv("NCCLNET_TEST_KNOB", "0x10", 1);
  int64_t value = 0;
  ASSERT_EQ(table.readInt("NCCLNET_TEST_KNOB", 7, "help", &value), ncclSuccess);
  EXPECT_EQ(value, 16);
  EXPECT_TRUE(table.all()[0].fromEnv);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO, "NCCLNET_TEST_KNOB set by environment to 16"), 1);
}

TEST_F(ParamsTest, GarbageIsAnErrorWithOneWarning) {
  setenv("NCCLNET_TEST_KNOB", "12abc", 1);
  int64_t value = 99;
  EXPECT_EQ(table.readInt("NCCLNET_TEST_KNOB", 7, "help", &value), ncclInvalidUsage);
  EXPECT_EQ(value, 99) << "the output is untouched on error";
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "NCCLNET_TEST_KNOB='12abc'"), 1);
}

TEST_F(ParamsTest, OutOfRangeIsAnError) {
  setenv("NCCLNET_TEST_KNOB", "65", 1);
  int64_t value = 0;
  EXPECT_EQ(table.readInt("NCCLNET_TEST_KNOB", 1, "help", &value, 0, 64), ncclInvalidUsage);
}

TEST_F(ParamsTest, ChoiceIsCaseInsensitiveAndRejectsUnknownWords) {
  std::string value;
  setenv("NCCLNET_TEST_KNOB", "af_inet6", 1);
  ASSERT_EQ(
      table.readChoice("NCCLNET_TEST_KNOB", "any", {"any", "AF_INET", "AF_INET6"}, "h", &value),
      ncclSuccess);
  EXPECT_EQ(value, "AF_INET6");
  setenv("NCCLNET_TEST_KNOB", "ipx", 1);
  EXPECT_EQ(table.readChoice("NCCLNET_TEST_KNOB", "any", {"any", "AF_INET"}, "h", &value),
            ncclInvalidUsage);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "is not one of any|AF_INET"), 1);
}

TEST_F(ParamsTest, LogAllListsEveryKnobOnTheEnvSubsystem) {
  int64_t a = 0;
  std::string b;
  table.readInt("NCCLNET_TEST_KNOB", 3, "the first knob", &a);
  table.readString("NCCLNET_TEST_OTHER", "eth", "the second knob", &b);
  clearCapturedLines();
  table.logAll();
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO,
                        "param NCCLNET_TEST_KNOB=3 (default 3, from default): the first knob"),
            1);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO, "param NCCLNET_TEST_OTHER=eth"), 1);
  for (const auto& line : ncclnet::host::capturedLines()) EXPECT_EQ(line.flags, NCCL_ENV);
}

TEST_F(ParamsTest, EachKnobIsAnnouncedOnceWhenFirstRead) {
  // A plugin whose init fails after reading its knobs has still listed them.
  int64_t a = 0;
  table.readInt("NCCLNET_TEST_KNOB", 3, "the first knob", &a);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO,
                        "param NCCLNET_TEST_KNOB=3 (default 3, from default): the first knob"),
            1);
  table.readInt("NCCLNET_TEST_KNOB", 3, "the first knob", &a);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO, "param NCCLNET_TEST_KNOB="), 1)
      << "a re-read is not announced again";
}

TEST_F(ParamsTest, RereadingKeepsOneEntry) {
  int64_t value = 0;
  table.readInt("NCCLNET_TEST_KNOB", 3, "h", &value);
  table.readInt("NCCLNET_TEST_KNOB", 3, "h", &value);
  EXPECT_EQ(table.all().size(), 1u);
}

}  // namespace
