// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "options.hpp"

namespace nccldriver {
namespace {

using Kind = ncclnet::cli::Parsed::Kind;

Options parse(std::vector<std::string> args) {
  Options o;
  ncclnet::cli::Parsed parsed = parseOptions(args, &o);
  EXPECT_EQ(parsed.kind, Kind::kRun) << parsed.text;
  return o;
}

std::string refusal(std::vector<std::string> args) {
  Options o;
  ncclnet::cli::Parsed parsed = parseOptions(args, &o);
  EXPECT_EQ(parsed.kind, Kind::kError);
  EXPECT_EQ(parsed.text.find('\n'), std::string::npos) << "one line: " << parsed.text;
  return parsed.text;
}

TEST(Options, SubjectsTakeTheEnvAfterThemAndCommonEnvGoesFirst) {
  Options o = parse({"--env", "NCCL_SOCKET_IFNAME=lo", "--subject", "ours", "--env",
                     "NCCL_NET=sdk-socket", "--env", "FI_PROVIDER=tcp;ofi_rxm", "--subject", "nccl",
                     "--env", "NCCL_NET=Socket", "--rounds", "5"});
  std::vector<Subject> s = o.effectiveSubjects();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "ours");
  ASSERT_EQ(s[0].env.size(), 3u);
  EXPECT_EQ(s[0].env[0], (EnvVar{"NCCL_SOCKET_IFNAME", "lo"}));
  EXPECT_EQ(s[0].env[2], (EnvVar{"FI_PROVIDER", "tcp;ofi_rxm"}));
  EXPECT_EQ(s[0].expectedNetwork("x"), "sdk-socket");
  EXPECT_EQ(s[1].expectedNetwork("x"), "Socket");
  EXPECT_EQ(o.rounds, 5);
}

TEST(Options, WithoutSubjectsOneJobInTheCallersEnvironment) {
  std::vector<Subject> s = parse({}).effectiveSubjects();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].expectedNetwork("fallback"), "fallback");
}

TEST(Options, SizesGrowByTheFactorAndEndAtTheLargest) {
  Options o = parse({"--min-bytes", "8", "--max-bytes", "1K", "--factor", "4"});
  EXPECT_EQ(o.sizes(), (std::vector<size_t>{8, 32, 128, 512, 1024}));
  EXPECT_EQ(parse({"--min-bytes", "1G", "--max-bytes", "1G"}).sizes(),
            (std::vector<size_t>{size_t(1) << 30}));
}

TEST(Options, BadInputIsRefusedWithTheArgumentNamed) {
  EXPECT_NE(refusal({"--ops", "allreduce,gossip"}).find("gossip"), std::string::npos);
  EXPECT_NE(refusal({"--max-bytes", "2G"}).find("--max-bytes 2G"), std::string::npos);
  EXPECT_NE(refusal({"--ranks", "1"}).find("--ranks"), std::string::npos);
  EXPECT_NE(refusal({"--env", "NOEQUALS"}).find("VAR=VALUE"), std::string::npos);
  EXPECT_NE(refusal({"--kill-rank", "2"}).find("no such rank"), std::string::npos);
  EXPECT_NE(refusal({"--kill-rank", "1", "--abort-after-ms", "5"}).find("one fault"),
            std::string::npos);
  EXPECT_NE(refusal({"--truncate-p2p", "--abort-after-ms", "5"}).find("one fault"),
            std::string::npos);
  EXPECT_NE(refusal({"--tail-skew-ms", "500", "--kill-rank", "1"}).find("end normally"),
            std::string::npos);
  EXPECT_NE(refusal({"--min-bytes", "1M", "--max-bytes", "1K"}).find("larger"), std::string::npos);
  EXPECT_NE(refusal({"--frobnicate", "1"}).find("unknown argument '--frobnicate'"),
            std::string::npos);
  EXPECT_NE(refusal({"--ranks=1"}).find("--ranks 1: a rank count"), std::string::npos);
  EXPECT_NE(refusal({"--iters"}).find("needs a value"), std::string::npos);
}

TEST(Options, TheLastValueOfARepeatedOptionWins) {
  // The launcher hands its ranks the caller's line with its own --ranks and
  // --run-dir after it.
  Options o = parse({"--ranks", "2", "--run-dir", "/a", "--ranks", "4", "--run-dir", "/b"});
  EXPECT_EQ(o.ranks, 4);
  EXPECT_EQ(o.runDir, "/b");
}

TEST(Options, HelpListsTheOptionsButNotTheWorkersOwn) {
  Options o;
  ncclnet::cli::Parsed parsed = parseOptions({"--ranks", "3", "--help"}, &o);
  ASSERT_EQ(parsed.kind, Kind::kHelp);
  EXPECT_EQ(parsed.text.rfind("usage: nccl-driver", 0), 0u) << parsed.text;
  EXPECT_NE(parsed.text.find("--tail-skew-ms T"), std::string::npos) << parsed.text;
  EXPECT_NE(parsed.text.find("exit status: 0 every job ok"), std::string::npos) << parsed.text;
  EXPECT_EQ(parsed.text.find("--worker"), std::string::npos) << parsed.text;
}

TEST(Options, FaultsAndWhatTheyExpect) {
  Options truncate = parse({"--truncate-p2p"});
  EXPECT_TRUE(truncate.expectsNcclError());
  EXPECT_FALSE(truncate.faultPlanted());
  Options tail = parse({"--tail-skew-ms", "500"});
  EXPECT_EQ(tail.tailSkewMs, 500);
  EXPECT_FALSE(tail.expectsNcclError());
  EXPECT_TRUE(parse({"--abort-after-ms", "0"}).faultPlanted());
}

TEST(Options, SizeSuffixes) {
  EXPECT_EQ(parseSize("64K"), size_t(65536));
  EXPECT_EQ(parseSize("3m"), size_t(3) << 20);
  EXPECT_FALSE(parseSize("12Q"));
  EXPECT_FALSE(parseSize("-5"));
  EXPECT_FALSE(parseSize(""));
}

}  // namespace
}  // namespace nccldriver
