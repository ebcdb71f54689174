// SPDX-License-Identifier: Apache-2.0
// Declared knobs: each reader type, defaults, and one WARN per bad value.
#include "ncclnet/knob.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <climits>

#include "ncclnet/host/log_capture.hpp"
#include "ncclnet/params.hpp"

using ncclnet::host::captureLogger;
using ncclnet::host::clearCapturedLines;
using ncclnet::host::countCaptured;

namespace {

struct Config {
  bool flag = false;
  int count = 0;
  int64_t wide = 0;
  size_t bytes = 0;
  std::string text;
  int family = 0;
};

constexpr ncclnet::KnobChoice kFamilies[] = {{"any", 0}, {"AF_INET", 2}, {"AF_INET6", 10}};

constexpr ncclnet::Knob<Config> kKnobs[] = {
    ncclnet::flagKnob("NCCLNET_KT_FLAG", &Config::flag, true, "a flag"),
    ncclnet::intKnob("NCCLNET_KT_COUNT", &Config::count, 4, -2, 16, "a count"),
    ncclnet::intKnob("NCCLNET_KT_WIDE", &Config::wide, 8192, 0, int64_t{1} << 40, "wide"),
    ncclnet::sizeKnob("NCCLNET_KT_BYTES", &Config::bytes, 4096, 0, int64_t{1} << 30, "bytes"),
    ncclnet::stringKnob("NCCLNET_KT_TEXT", &Config::text, "eth", "text"),
    ncclnet::enumKnob("NCCLNET_KT_FAMILY", &Config::family, "any", kFamilies, "family"),
};

const char* const kNames[] = {"NCCLNET_KT_FLAG",  "NCCLNET_KT_COUNT", "NCCLNET_KT_WIDE",
                              "NCCLNET_KT_BYTES", "NCCLNET_KT_TEXT",  "NCCLNET_KT_FAMILY"};

class KnobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clearCapturedLines();
    for (const char* name : kNames) unsetenv(name);
  }
  void TearDown() override {
    for (const char* name : kNames) unsetenv(name);
  }
  ncclResult_t read(Config* c) { return ncclnet::readKnobs(table, kKnobs, c); }
  int warnings() { return countCaptured(NCCL_LOG_WARN, ""); }

  ncclnet::ParamTable table{ncclnet::Logger(captureLogger, "NET/test")};
};

TEST_F(KnobTest, UnsetOrEmptyGivesEveryDefault) {
  setenv("NCCLNET_KT_TEXT", "", 1);
  Config c;
  ASSERT_EQ(read(&c), ncclSuccess);
  EXPECT_TRUE(c.flag);
  EXPECT_EQ(c.count, 4);
  EXPECT_EQ(c.wide, 8192);
  EXPECT_EQ(c.bytes, 4096u);
  EXPECT_EQ(c.text, "eth");
  EXPECT_EQ(c.family, 0);
  EXPECT_EQ(table.all().size(), 6u);
  EXPECT_EQ(warnings(), 0);
}

TEST_F(KnobTest, EachTypeReadsItsValue) {
  setenv("NCCLNET_KT_FLAG", "0", 1);
  setenv("NCCLNET_KT_COUNT", "-2", 1);
  setenv("NCCLNET_KT_WIDE", "0x10000000000", 1);
  setenv("NCCLNET_KT_BYTES", "0x10000", 1);
  setenv("NCCLNET_KT_TEXT", "^docker,lo", 1);
  setenv("NCCLNET_KT_FAMILY", "af_inet6", 1);
  Config c;
  ASSERT_EQ(read(&c), ncclSuccess);
  EXPECT_FALSE(c.flag);
  EXPECT_EQ(c.count, -2);
  EXPECT_EQ(c.wide, int64_t{1} << 40);
  EXPECT_EQ(c.bytes, 65536u);
  EXPECT_EQ(c.text, "^docker,lo");
  EXPECT_EQ(c.family, 10);
  EXPECT_EQ(
      countCaptured(NCCL_LOG_INFO, "param NCCLNET_KT_FAMILY=AF_INET6 (default any, from env)"), 1)
      << "an enum is listed with its declared spelling";
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO, "param NCCLNET_KT_BYTES=65536"), 1);
}

TEST_F(KnobTest, SizesArePlainByteCounts) {
  // NCCL reads its size knobs with strtoll: a suffix would mean something else there.
  ncclnet::KnobSpec spec = kKnobs[3].spec;
  ncclnet::KnobValue v;
  ASSERT_TRUE(ncclnet::parseKnob(spec, "1048576", &v));
  EXPECT_EQ(v.number, 1 << 20);
  EXPECT_FALSE(ncclnet::parseKnob(spec, "1M", &v));
  EXPECT_FALSE(ncclnet::parseKnob(spec, "2147483648", &v)) << "above the declared maximum";
  EXPECT_FALSE(ncclnet::parseKnob(spec, "-1", &v));
}

struct BadValue {
  const char* name;
  const char* value;
  const char* allowed;  // what the WARN line must say is allowed
};

class KnobBadValueTest : public KnobTest, public ::testing::WithParamInterface<BadValue> {};

TEST_P(KnobBadValueTest, IsAnErrorWithOneWarningNamingVariableValueAndAllowed) {
  const BadValue& bad = GetParam();
  setenv(bad.name, bad.value, 1);
  Config c;
  EXPECT_EQ(read(&c), ncclInvalidUsage);
  EXPECT_EQ(warnings(), 1);
  std::string expected = std::string(bad.name) + "='" + bad.value + "' is not " + bad.allowed;
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, expected), 1) << expected;
  EXPECT_EQ(table.all().size(), 6u) << "the rest of the table is still read and listed";
}

INSTANTIATE_TEST_SUITE_P(
    Values, KnobBadValueTest,
    ::testing::Values(BadValue{"NCCLNET_KT_FLAG", "yes", "0 or 1"},
                      BadValue{"NCCLNET_KT_FLAG", "2", "0 or 1"},
                      BadValue{"NCCLNET_KT_COUNT", "12abc", "an integer in [-2, 16]"},
                      BadValue{"NCCLNET_KT_COUNT", "17", "an integer in [-2, 16]"},
                      BadValue{"NCCLNET_KT_COUNT", "99999999999999999999", "an integer in"},
                      BadValue{"NCCLNET_KT_BYTES", "4K", "a byte count in [0, 1073741824]"},
                      BadValue{"NCCLNET_KT_FAMILY", "ipx", "one of any|AF_INET|AF_INET6"}));

TEST_F(KnobTest, OneWarningPerBadValueAndTheFirstErrorReturned) {
  setenv("NCCLNET_KT_FLAG", "on", 1);
  setenv("NCCLNET_KT_FAMILY", "ipx", 1);
  Config c;
  EXPECT_EQ(read(&c), ncclInvalidUsage);
  EXPECT_EQ(warnings(), 2);
  EXPECT_EQ(c.count, 4) << "good knobs after a bad one are still read";
}

TEST_F(KnobTest, ADefaultOutsideItsRangeIsADeclarationError) {
  constexpr ncclnet::Knob<Config> knobs[] = {
      ncclnet::intKnob("NCCLNET_KT_COUNT", &Config::count, 99, 0, 16, "h")};
  Config b;
  EXPECT_EQ(ncclnet::readKnobs(table, knobs, &b), ncclInternalError);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "NCCLNET_KT_COUNT is declared with the default '99'"), 1);
  EXPECT_FALSE(ncclnet::knobDefaults(knobs, &b));
}

TEST_F(KnobTest, AnIntFieldNeedsARangeThatFitsAnInt) {
  constexpr ncclnet::Knob<Config> knobs[] = {
      ncclnet::intKnob("NCCLNET_KT_COUNT", &Config::count, 0, 0, int64_t{INT_MAX} + 1, "h")};
  Config b;
  EXPECT_EQ(ncclnet::readKnobs(table, knobs, &b), ncclInternalError);
  EXPECT_EQ(warnings(), 1);
}

TEST_F(KnobTest, DefaultsIgnoreTheEnvironment) {
  setenv("NCCLNET_KT_COUNT", "9", 1);
  Config c;
  ASSERT_TRUE(ncclnet::knobDefaults(kKnobs, &c));
  EXPECT_EQ(c.count, 4);
  EXPECT_EQ(c.text, "eth");
  EXPECT_TRUE(table.all().empty()) << "nothing is read, so nothing is listed";
}

TEST_F(KnobTest, ListingShowsWhatEachKnobAccepts) {
  Config c;
  ASSERT_EQ(read(&c), ncclSuccess);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO,
                          "param NCCLNET_KT_COUNT=4 (default 4, from default): "
                          "a count [an integer in [-2, 16]]"),
            1);
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO,
                          "param NCCLNET_KT_TEXT=eth (default eth, from default): "
                          "text"),
            1);
}

}  // namespace
