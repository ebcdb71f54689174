// SPDX-License-Identifier: Apache-2.0
// The rerun command a failure prints runs the failed test again as it ran:
// the line, split as a POSIX shell splits it (wordexp) and parsed the way
// ncclnet-conformance parses its own command line, gives back every option
// that changes what runs or how it is judged.
#include <gtest/gtest.h>
#include <wordexp.h>

#include <string>
#include <vector>

#include "options.hpp"

namespace conformance {
namespace {

struct Parsed {
  Options options;
  std::string filter;  // --gtest_filter's value; gtest takes it out before parseOptions
  std::vector<std::string> words;
};

// The line as the shell hands it to the program, then as the program reads it.
Parsed readBack(const std::string& line) {
  Parsed out;
  wordexp_t w{};
  // WRDE_NOCMD: a value that reached the shell unquoted would be an error
  // here rather than a command.
  int rc = wordexp(line.c_str(), &w, WRDE_NOCMD | WRDE_UNDEF);
  EXPECT_EQ(rc, 0) << line;
  if (rc != 0) return out;
  std::vector<std::string> args(w.we_wordv, w.we_wordv + w.we_wordc);
  wordfree(&w);
  out.words = args;
  std::vector<char*> argv;
  const std::string prefix = "--gtest_filter=";
  for (std::string& arg : args) {
    if (arg.compare(0, prefix.size(), prefix) == 0)
      out.filter = arg.substr(prefix.size());
    else
      argv.push_back(arg.data());
  }
  ncclnet::cli::Parsed parsed =
      parseOptions(static_cast<int>(argv.size()), argv.data(), &out.options);
  EXPECT_EQ(parsed.kind, ncclnet::cli::Parsed::Kind::kRun) << parsed.text << "\n" << line;
  return out;
}

// Every option the rerun promises to reproduce.
void expectSameRun(const Options& a, const Options& b) {
  EXPECT_EQ(a.plugin, b.plugin);
  EXPECT_EQ(a.netName, b.netName);
  EXPECT_EQ(a.profilePath, b.profilePath);
  EXPECT_EQ(a.abi, b.abi);
  EXPECT_EQ(a.nccl, b.nccl);
  EXPECT_EQ(a.timeScale, b.timeScale);  // exactly: the printed number reads back the same
  EXPECT_EQ(a.deadline, b.deadline);
  EXPECT_EQ(a.strict, b.strict);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.replayDir, b.replayDir);
}

Options everyOption() {
  Options o;
  o.plugin = "/opt/acme/lib/libnccl-net-acme.so";
  o.netName = "AcmeNet";
  o.profilePath = "/etc/acme/acme.yaml";
  o.abi = "v10";
  o.nccl = "2.28.9";
  o.timeScale = 2.5;
  o.deadline = 0.1;  // not exact in binary: must still come back bit for bit
  o.strict = true;
  o.device = "cuda";
  o.replayDir = "/tmp/traces";
  return o;
}

TEST(Rerun, EveryOptionThatChangesTheRunComesBack) {
  Options run = everyOption();
  std::string line = rerunCommand(run, "v10/Data.ZeroByteMessages");
  Parsed back = readBack(line);
  expectSameRun(back.options, run);
  EXPECT_EQ(back.filter, "v10/Data.ZeroByteMessages");
  EXPECT_EQ(back.words.at(0), "ncclnet-conformance");
}

TEST(Rerun, ADefaultRunGivesOnlyThePluginAndTheTest) {
  Options run;
  run.plugin = "sdk-socket";
  EXPECT_EQ(rerunCommand(run, "v12/Data.ZeroByteMessages"),
            "ncclnet-conformance --plugin sdk-socket --gtest_filter='v12/Data.ZeroByteMessages'");
  expectSameRun(readBack(rerunCommand(run, "")).options, run);
}

TEST(Rerun, ValuesTheShellWouldSplitOrExpandComeBackAsGiven) {
  Options run = everyOption();
  run.plugin = "/home/o'brien/my plugins/libnccl-net-x.so";
  run.profilePath = "./$HOME/`id`/*.yaml";
  run.netName = "";
  run.replayDir = "traces;rm -rf x";
  std::string filter = "*/Faults.*:-*Stray*";
  Parsed back = readBack(rerunCommand(run, filter));
  expectSameRun(back.options, run);
  EXPECT_EQ(back.filter, filter);
}

TEST(Rerun, NumbersComeBackBitForBit) {
  for (double value : {1.0, 30.0, 0.1, 1.0 / 3.0, 1e-9, 123456.789, 1e15, 3e300}) {
    Options run;
    run.plugin = "p";
    run.timeScale = value;
    run.deadline = value * 7;
    Parsed back = readBack(rerunCommand(run, ""));
    ASSERT_TRUE(back.options.timeScale.has_value());
    EXPECT_EQ(*back.options.timeScale, value);
    EXPECT_EQ(back.options.deadline, run.deadline);
  }
}

TEST(Rerun, NumbersReadAsTheyWereTyped) {
  Options run;
  run.plugin = "p";
  run.timeScale = 1.5;
  run.deadline = 30;
  EXPECT_EQ(rerunCommand(run, ""), "ncclnet-conformance --plugin p --time-scale 1.5 --deadline 30");
}

TEST(Rerun, WhereResultsGoAndHowProgressShowsAreLeftOut) {
  Options run;
  run.plugin = "p";
  run.jsonPath = "out.json";
  run.junitPath = "out.xml";
  run.verbose = true;
  run.noProgress = true;
  EXPECT_EQ(rerunCommand(run, ""), "ncclnet-conformance --plugin p");
}

ncclnet::cli::Parsed parseWords(std::vector<std::string> words, Options* out) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return parseOptions(static_cast<int>(argv.size()), argv.data(), out);
}

TEST(CommandLine, GtestFlagsAreSplitOffInOrderAndTheRestStays) {
  std::vector<std::string> args = {
      "--plugin",          "p", "--gtest_filter=Data.*", "--strict", "-gtest_repeat=2",
      "--gtest_list_tests"};
  std::vector<std::string> gtest = splitGtestFlags(&args);
  EXPECT_EQ(gtest, (std::vector<std::string>{"--gtest_filter=Data.*", "-gtest_repeat=2",
                                             "--gtest_list_tests"}));
  EXPECT_EQ(args, (std::vector<std::string>{"--plugin", "p", "--strict"}));
}

TEST(CommandLine, BadInputIsOneLineNamingTheArgument) {
  Options o;
  ncclnet::cli::Parsed parsed = parseWords({"ncclnet-conformance", "--plugin", "p", "--bogus"}, &o);
  EXPECT_EQ(parsed.kind, ncclnet::cli::Parsed::Kind::kError);
  EXPECT_EQ(parsed.text, "unknown argument '--bogus'");
  parsed = parseWords({"ncclnet-conformance", "--time-scale", "-1"}, &o);
  EXPECT_EQ(parsed.text, "--time-scale needs a positive number, not '-1'");
  parsed = parseWords({"ncclnet-conformance", "--device=gpu"}, &o);
  EXPECT_EQ(parsed.text, "--device takes cpu or cuda, not 'gpu'");
  parsed = parseWords({"ncclnet-conformance", "--plugin"}, &o);
  EXPECT_EQ(parsed.text, "--plugin needs a value");
}

TEST(CommandLine, HelpListsTheOptionsAndHidesTheWorkersOwn) {
  Options o;
  ncclnet::cli::Parsed parsed = parseWords({"ncclnet-conformance", "--plugin", "p", "-h"}, &o);
  ASSERT_EQ(parsed.kind, ncclnet::cli::Parsed::Kind::kHelp);
  EXPECT_EQ(parsed.text, helpText());
  EXPECT_EQ(parsed.text.rfind("usage: ncclnet-conformance --plugin NAME|PATH", 0), 0u);
  EXPECT_NE(parsed.text.find("--gtest_filter=PATTERNS"), std::string::npos);
  EXPECT_EQ(parsed.text.find("--exec-worker"), std::string::npos);
}

}  // namespace
}  // namespace conformance
