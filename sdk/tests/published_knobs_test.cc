// SPDX-License-Identifier: Apache-2.0
// Published knob tables: written at compile time into the file, read back
// from it without running any of its code.
#include "ncclnet/published_knobs.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <climits>
#include <cstdio>
#include <string>

#include "ncclnet/host/published_knobs.hpp"

namespace {

struct Config {
  bool flag = false;
  int count = 0;
  size_t bytes = 0;
  std::string text;
  int family = 0;
};

constexpr ncclnet::KnobChoice kFamilies[] = {{"any", 0}, {"AF_INET", 2}, {"AF_INET6", 10}};

constexpr ncclnet::Knob<Config> kKnobs[] = {
    ncclnet::flagKnob("NCCLNET_PK_FLAG", &Config::flag, true, "a flag"),
    ncclnet::intKnob("NCCLNET_PK_COUNT", &Config::count, -4, INT_MIN, 16, "a count, may be < 0"),
    ncclnet::sizeKnob("NCCLNET_PK_BYTES", &Config::bytes, 4096, 0, int64_t{1} << 40, "bytes"),
    ncclnet::stringKnob("NCCLNET_PK_TEXT", &Config::text, "eth,ib", "interfaces: a, b"),
    ncclnet::enumKnob("NCCLNET_PK_FAMILY", &Config::family, "AF_INET", kFamilies, "family"),
};
// This test program carries the table in its own file, as a plugin does.
NCCLNET_PUBLISH_KNOBS(kKnobs);

constexpr auto kText =
    ncclnet::published_knobs::text<ncclnet::published_knobs::textSize(kKnobs)>(kKnobs);

std::string textOf(const decltype(kText)& t) {
  return std::string(t.bytes, sizeof t.bytes);
}

void expectTable(const std::vector<ncclnet::host::PublishedKnob>& knobs) {
  ASSERT_EQ(knobs.size(), 5u);
  EXPECT_EQ(knobs[0].name, "NCCLNET_PK_FLAG");
  EXPECT_EQ(knobs[0].type, ncclnet::KnobType::Flag);
  EXPECT_EQ(knobs[0].defaultNumber, 1);
  EXPECT_EQ(knobs[1].defaultNumber, -4);
  EXPECT_EQ(knobs[1].min, INT_MIN);
  EXPECT_EQ(knobs[1].max, 16);
  EXPECT_EQ(knobs[1].help, "a count, may be < 0");
  EXPECT_EQ(knobs[2].type, ncclnet::KnobType::Size);
  EXPECT_EQ(knobs[2].max, int64_t{1} << 40);
  EXPECT_EQ(knobs[3].type, ncclnet::KnobType::String);
  EXPECT_EQ(knobs[3].defaultText, "eth,ib");
  EXPECT_EQ(knobs[3].help, "interfaces: a, b");
  EXPECT_EQ(knobs[4].type, ncclnet::KnobType::Enum);
  EXPECT_EQ(knobs[4].defaultText, "AF_INET");
  ASSERT_EQ(knobs[4].choices.size(), 3u);
  EXPECT_EQ(knobs[4].choices[2].first, "AF_INET6");
  EXPECT_EQ(knobs[4].choices[2].second, 10);
}

TEST(PublishedKnobs, TextIsTheDocumentedFormat) {
  std::string text = textOf(kText);
  EXPECT_EQ(text.rfind("ncclnet-knobs 1\nNCCLNET_PK_FLAG\tflag\t1\t0\t1\t\ta flag\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("NCCLNET_PK_FAMILY\tenum\tAF_INET\t"), std::string::npos) << text;
  EXPECT_NE(text.find("\tany=0,AF_INET=2,AF_INET6=10\tfamily\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\t-2147483648\t16\t"), std::string::npos) << text;
}

TEST(PublishedKnobs, ParsedBackFieldByField) {
  std::vector<ncclnet::host::PublishedKnob> knobs;
  std::string error;
  ASSERT_TRUE(ncclnet::host::parsePublishedKnobs(textOf(kText), &knobs, &error)) << error;
  expectTable(knobs);
}

TEST(PublishedKnobs, ReadFromThisProgramsFileWithoutRunningIt) {
  std::vector<ncclnet::host::PublishedKnob> knobs;
  std::string error;
  ASSERT_TRUE(ncclnet::host::readPublishedKnobs("/proc/self/exe", &knobs, &error)) << error;
  expectTable(knobs);
}

TEST(PublishedKnobs, SeveralTablesAndNulPaddingConcatenate) {
  std::string two = textOf(kText) + std::string(5, '\0') + textOf(kText) + std::string(3, '\0');
  std::vector<ncclnet::host::PublishedKnob> knobs;
  std::string error;
  ASSERT_TRUE(ncclnet::host::parsePublishedKnobs(two, &knobs, &error)) << error;
  EXPECT_EQ(knobs.size(), 10u);
}

TEST(PublishedKnobs, MalformedTextIsRefusedWithTheLine) {
  struct Case {
    std::string text;
    std::string why;
  } cases[] = {
      {"ncclnet-knobs 2\nA\tflag\t0\t0\t1\t\th\n", "format this SDK does not read"},
      {"A\tflag\t0\t0\t1\t\th\n", "before the table's header"},
      {"ncclnet-knobs 1\nA\tflag\t0\t0\t1\th\n", "expected 7 tab-separated fields, found 6"},
      {"ncclnet-knobs 1\nA\tbool\t0\t0\t1\t\th\n", "unknown type 'bool'"},
      {"ncclnet-knobs 1\nA\tint\tx\t0\t1\t\th\n", "default 'x' is not an integer"},
      {"ncclnet-knobs 1\nA\tenum\tx\t0\t0\t\th\n", "do not fit type enum"},
      {"ncclnet-knobs 1\nA\tenum\tx\t0\t0\tx=\th\n", "do not fit type enum"},
  };
  for (const Case& c : cases) {
    std::vector<ncclnet::host::PublishedKnob> knobs;
    std::string error;
    EXPECT_FALSE(ncclnet::host::parsePublishedKnobs(c.text, &knobs, &error)) << c.text;
    EXPECT_NE(error.find(c.why), std::string::npos) << error;
    EXPECT_NE(error.find("line "), std::string::npos) << error;
  }
}

TEST(PublishedKnobs, FilesThatAreNotElfOrHaveNoTable) {
  std::vector<ncclnet::host::PublishedKnob> knobs;
  std::string error;
  char path[] = "/tmp/published_knobs_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  FILE* f = fdopen(fd, "w");
  fputs("not an ELF file\n", f);
  fclose(f);
  EXPECT_FALSE(ncclnet::host::readPublishedKnobs(path, &knobs, &error));
  EXPECT_NE(error.find("not an ELF file"), std::string::npos) << error;
  unlink(path);
  EXPECT_FALSE(ncclnet::host::readPublishedKnobs("/nonexistent/lib.so", &knobs, &error));
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  // A real ELF file without the section: success, no knobs.
  error.clear();
  EXPECT_TRUE(ncclnet::host::readPublishedKnobs("/bin/sh", &knobs, &error)) << error;
  EXPECT_TRUE(knobs.empty());
}

TEST(PublishedKnobs, EnvironmentReadAsTheSdkParserReadsIt) {
  std::vector<ncclnet::host::PublishedKnob> knobs;
  std::string error;
  ASSERT_TRUE(ncclnet::host::parsePublishedKnobs(textOf(kText), &knobs, &error)) << error;
  unsetenv("NCCLNET_PK_COUNT");
  ncclnet::host::KnobReading r = ncclnet::host::readFromEnvironment(knobs[1]);
  EXPECT_EQ(r.value, "-4");
  EXPECT_FALSE(r.fromEnv);
  setenv("NCCLNET_PK_COUNT", "0x10", 1);
  r = ncclnet::host::readFromEnvironment(knobs[1]);
  EXPECT_EQ(r.value, "16");
  EXPECT_TRUE(r.fromEnv);
  EXPECT_FALSE(r.refused);
  setenv("NCCLNET_PK_COUNT", "17", 1);
  r = ncclnet::host::readFromEnvironment(knobs[1]);
  EXPECT_TRUE(r.refused);
  EXPECT_EQ(r.value, "17");
  EXPECT_EQ(r.allowed, "an integer in [-2147483648, 16]");
  unsetenv("NCCLNET_PK_COUNT");
  setenv("NCCLNET_PK_FAMILY", "af_inet6", 1);
  r = ncclnet::host::readFromEnvironment(knobs[4]);
  EXPECT_EQ(r.value, "AF_INET6");
  EXPECT_EQ(r.defaultValue, "AF_INET");
  unsetenv("NCCLNET_PK_FAMILY");
}

}  // namespace
