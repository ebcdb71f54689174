// SPDX-License-Identifier: Apache-2.0
// ParamTable: what it remembers and announces of each knob it reads.
#include "ncclnet/params.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "ncclnet/host/log_capture.hpp"

using ncclnet::host::captureLogger;
using ncclnet::host::clearCapturedLines;
using ncclnet::host::countCaptured;

namespace {

struct Config {
  int64_t knob = 0;
  std::string other;
};

constexpr ncclnet::Knob<Config> kKnob[] = {ncclnet::intKnob(
    "NCCLNET_TEST_KNOB", &Config::knob, 3, INT64_MIN, INT64_MAX, "the first knob")};
constexpr ncclnet::Knob<Config> kBoth[] = {
    kKnob[0], ncclnet::stringKnob("NCCLNET_TEST_OTHER", &Config::other, "eth", "the second knob")};

class ParamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clearCapturedLines();
    unsetenv("NCCLNET_TEST_KNOB");
  }
  void TearDown() override { unsetenv("NCCLNET_TEST_KNOB"); }
  ncclnet::ParamTable table{ncclnet::Logger(captureLogger, "NET/test")};
  Config config;
};

TEST_F(ParamsTest, UnsetGivesTheDefault) {
  ASSERT_EQ(ncclnet::readKnobs(table, kKnob, &config), ncclSuccess);
  EXPECT_EQ(config.knob, 3);
  ASSERT_EQ(table.all().size(), 1u);
  EXPECT_FALSE(table.all()[0].fromEnv);
}

TEST_F(ParamsTest, EnvironmentOverridesAndIsLogged) {
  setenv("NCCLNET_TEST_KNOB", "0x10", 1);
  ASSERT_EQ(ncclnet::readKnobs(table, kKnob, &config), ncclSuccess);
  EXPECT_EQ(config.knob, 16);
  EXPECT_TRUE(table.all()[0].fromEnv);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO, "NCCLNET_TEST_KNOB set by environment to 16"), 1);
}

TEST_F(ParamsTest, GarbageIsAnErrorWithOneWarningAndTheFieldUntouched) {
  setenv("NCCLNET_TEST_KNOB", "12abc", 1);
  config.knob = 99;
  EXPECT_EQ(ncclnet::readKnobs(table, kKnob, &config), ncclInvalidUsage);
  EXPECT_EQ(config.knob, 99);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "NCCLNET_TEST_KNOB='12abc'"), 1);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, ""), 1);
}

TEST_F(ParamsTest, LogAllListsEveryKnobOnTheEnvSubsystem) {
  ASSERT_EQ(ncclnet::readKnobs(table, kBoth, &config), ncclSuccess);
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
  ncclnet::readKnobs(table, kKnob, &config);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO,
                          "param NCCLNET_TEST_KNOB=3 (default 3, from default): the first knob"),
            1);
  ncclnet::readKnobs(table, kKnob, &config);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO, "param NCCLNET_TEST_KNOB="), 1)
      << "a re-read is not announced again";
  EXPECT_EQ(table.all().size(), 1u) << "and keeps one entry";
}

}  // namespace
