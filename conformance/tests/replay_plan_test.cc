// SPDX-License-Identifier: Apache-2.0
// The replay plan without a plugin: traces read back, both ends of each
// connection paired, every message seeded the same on both ends, and each
// trace the plan cannot pair refused with the line that says why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "replay/plan.hpp"

namespace conformance::replay {
namespace {

const char* kHeader = "# ncclnet-check trace 2 host=h pid=1 plugin=p abi=12 start=0\n";

// Two processes: 0 sends to 1 on one connection (a grouped receive of two
// tags, then one more message of tag 0).
const char* kSender =
    "1 listen c=1 dev=0 h=00000000000000b1 rc=0\n"
    "2 connect c=2 dev=0 h=00000000000000a1 rc=0\n"
    "3 regMr c=2 m=1 size=4096 type=1 rc=0\n"
    "4 isend c=2 r=1 size=100 tag=1 m=1 o=0 rc=0\n"
    "5 isend c=2 r=0 size=200 tag=0 m=1 o=1024 rc=0\n"
    "6 isend c=2 r=2 size=200 tag=0 m=1 o=1024 rc=0\n"
    "7 isend c=2 r=3 size=300 tag=0 m=1 o=2048 rc=0\n"
    "8 test r=1 done=1 sizes=100 rc=0\n"
    "9 closeSend c=2 rc=0\n";
const char* kReceiver =
    "1 listen c=1 dev=0 h=00000000000000a1 rc=0\n"
    "2 accept l=1 c=0 rc=0\n"
    "3 accept l=1 c=2 rc=0\n"
    "4 closeListen c=1 rc=0\n"
    "5 regMr c=2 m=1 size=8192 type=1 rc=0\n"
    "6 irecv c=2 r=1 n=2 sizes=1024,1024 tags=0,1 m=1,1 o=0,1024 rc=0\n"
    "7 test r=1 done=1 sizes=200,100 rc=0\n"
    "8 irecvConsumed c=2 n=2 rc=0\n"
    "9 irecv c=2 r=2 n=1 sizes=4096 tags=0 m=1 o=4096 rc=0\n"
    "10 closeRecv c=2 rc=0\n";

RecordedProcess parsed(const std::string& name, const std::string& body,
                       const std::string& header = kHeader) {
  RecordedProcess p;
  std::string error;
  EXPECT_TRUE(parseTrace(name, header + body, &p, &error)) << error;
  return p;
}

std::string refusal(const std::vector<RecordedProcess>& processes) {
  Plan plan;
  std::string error;
  EXPECT_FALSE(makePlan(processes, &plan, &error));
  return error;
}

TEST(ReplayPlan, PairsEndsAndSeedsEachMessageAlikeOnBoth) {
  Plan plan;
  std::string error;
  ASSERT_TRUE(makePlan({parsed("s", kSender), parsed("r", kReceiver)}, &plan, &error)) << error;
  const Stream& send = plan.ranks[0].streams.at(0);
  const Stream& recv = plan.ranks[1].streams.at(0);
  ASSERT_EQ(send.steps[0].op, Op::Connect);
  EXPECT_EQ(send.steps[0].hash, 0xa1u);
  ASSERT_EQ(recv.steps[0].op, Op::Accept) << "the accept that returned no comm is not a step";
  EXPECT_EQ(recv.steps[1].op, Op::CloseListen) << "the listen closes right after its accept";
  // Sender: regMr, then the three isends that got a request (the NULL one is retried).
  ASSERT_EQ(send.steps[2].op, Op::Isend);
  ASSERT_EQ(send.steps[3].op, Op::Isend);
  ASSERT_EQ(send.steps[4].op, Op::Isend);
  EXPECT_EQ(send.steps[3].line, 7) << "line numbers count the header";
  const Step& grouped = recv.steps[3];
  ASSERT_EQ(grouped.op, Op::Irecv);
  // Tag 0's first message lands in buffer 0, tag 1's in buffer 1, tag 0's
  // second in the next receive.
  EXPECT_EQ(grouped.buffers[0].seed, send.steps[3].buffers[0].seed);
  EXPECT_EQ(grouped.buffers[1].seed, send.steps[2].buffers[0].seed);
  EXPECT_EQ(recv.steps[6].buffers[0].seed, send.steps[4].buffers[0].seed);
  EXPECT_NE(send.steps[3].buffers[0].seed, send.steps[4].buffers[0].seed);
  EXPECT_EQ(grouped.buffers[1].offset, 1024u);
  const Step& test = recv.steps[4];
  ASSERT_EQ(test.op, Op::Test);
  EXPECT_EQ(test.reported, (std::vector<long long>{200, 100}));
  EXPECT_EQ(recv.steps[5].op, Op::Consumed);
  EXPECT_EQ(recv.steps.back().op, Op::CloseRecv);
}

TEST(ReplayPlan, RefusesAConnectWhoseListenIsInNoTrace) {
  std::string why = refusal({parsed("s", kSender)});
  EXPECT_EQ(why,
            "cannot replay: s:3 (connect c=2 dev=0 h=00000000000000a1 rc=0): connects to a listen "
            "that no trace holds: every process of the job must be in the directory");
}

TEST(ReplayPlan, RefusesTwoConnectsToOneListen) {
  std::string twice = std::string(kSender) + "10 connect c=3 dev=0 h=00000000000000a1 rc=0\n";
  std::string why = refusal({parsed("s", twice), parsed("r", kReceiver)});
  EXPECT_NE(why.find("s:11 (connect c=3"), std::string::npos) << why;
  EXPECT_NE(why.find("another connect used already"), std::string::npos) << why;
}

TEST(ReplayPlan, RefusesTwoListensWithOneHash) {
  std::string why = refusal({parsed("s", kSender), parsed("r", kReceiver), parsed("t", kReceiver)});
  EXPECT_NE(why.find("its listen handle hash equals that of r:2"), std::string::npos) << why;
}

TEST(ReplayPlan, RefusesVersionOne) {
  std::string why =
      refusal({parsed("old", kSender, "# ncclnet-check trace 1 host=h pid=1 plugin=p abi=12\n")});
  EXPECT_NE(why.find("old: trace version 1 does not say which connect meets which listen"),
            std::string::npos)
      << why;
}

TEST(ReplayPlan, RefusesDataOnACommNeverOpened) {
  std::string body = "1 isend c=9 r=1 size=1 tag=0 m=1 o=0 rc=0\n";
  std::string why = refusal({parsed("s", body)});
  EXPECT_EQ(why,
            "cannot replay: s:2 (isend c=9 r=1 size=1 tag=0 m=1 o=0 rc=0): comm 9 was never "
            "opened in this trace");
}

TEST(ReplayPlan, RefusesABufferOutsideItsRegistration) {
  std::string body = std::string(kSender) + "10 isend c=2 r=9 size=4000 tag=0 m=1 o=1024 rc=0\n";
  std::string why = refusal({parsed("s", body), parsed("r", kReceiver)});
  EXPECT_NE(why.find("s:11 (isend c=2 r=9"), std::string::npos) << why;
  EXPECT_NE(why.find("does not lie in registration m=1"), std::string::npos) << why;
}

TEST(ReplayTrace, RejectsALineCutShort) {
  RecordedProcess p;
  std::string error;
  EXPECT_FALSE(parseTrace("t", std::string(kHeader) + "1 isend c=2 r=1 size=1", &p, &error));
  EXPECT_EQ(error, "t:2: the line has no rc= (cut short?)");
  EXPECT_FALSE(parseTrace("t", "hello\n", &p, &error));
  EXPECT_NE(error.find("not an ncclnet-check trace"), std::string::npos) << error;
}

}  // namespace
}  // namespace conformance::replay
