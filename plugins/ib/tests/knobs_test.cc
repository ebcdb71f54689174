// SPDX-License-Identifier: Apache-2.0
// sdk-ib: NCCL_IB_PKEY, NCCL_IB_USE_INLINE, NCCL_IB_SPLIT_DATA_ON_QPS,
// NCCL_IB_ADAPTIVE_ROUTING / NCCL_IB_AR_THRESHOLD and
// NCCL_IB_PCI_RELAXED_ORDERING on softverbs: messages arrive intact under
// each, a value a device cannot honour falls back with one line, and a
// value outside a knob's range stops init with one line.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "local_pair.hpp"

namespace ncclnet::ib::testing {
namespace {

const std::vector<size_t> kSizes = {0, 1, 127, 128, 1000, 1001, 4096, 65536, (1u << 20) + 3};

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += "\n  " + line;
  return out;
}

// Whether an INFO line since `mark` contains `needle`.
bool infoSince(size_t mark, const std::string& needle) {
  for (const LogLine& line : logSince(mark)) {
    if (line.level == NCCL_LOG_INFO && line.text.find(needle) != std::string::npos) return true;
  }
  return false;
}

// Every size of kSizes from one end of a local pair to the other, `rounds` times.
void sendAllSizes(int rounds = 1) {
  Session s(11);
  ASSERT_TRUE(s.ok()) << s.error();
  LocalPair pair;
  ASSERT_EQ(connectLocal(s, s, &pair), ncclSuccess);
  uint64_t seed = 0;
  for (int round = 0; round < rounds; round++) {
    for (size_t size : kSizes) {
      std::string why;
      ASSERT_EQ(transfer(pair, size, ++seed, &why), ncclSuccess) << size << " B: " << why;
    }
  }
  closeLocal(&pair);
}

TEST(IbKnobs, PkeyIndexSelectsATableEntry) {
  ScopedEnv env;
  env.set("SOFTVERBS_PKEYS", "0xffff,0x8001");
  env.set("NCCL_IB_PKEY", "1");
  size_t mark = logMark();
  sendAllSizes();
  EXPECT_TRUE(infoSince(mark, "P_Key index 1"));
  EXPECT_TRUE(warningsSince(mark).empty()) << joined(warningsSince(mark));
}

TEST(IbKnobs, PkeyBeyondThePortsTableFallsBackToIndexZeroWithOneLine) {
  ScopedEnv env;
  env.set("NCCL_IB_PKEY", "5");  // softverbs' default table has one entry
  size_t mark = logMark();
  sendAllSizes();
  std::vector<std::string> warnings = warningsSince(mark);
  ASSERT_EQ(warnings.size(), 1u) << joined(warnings);
  EXPECT_NE(warnings[0].find("NCCL_IB_PKEY=5 is beyond softverbs0:1's P_Key table (1 entries): "
                             "using index 0"),
            std::string::npos)
      << warnings[0];
  EXPECT_TRUE(infoSince(mark, "P_Key index 0"));
}

TEST(IbKnobs, InlineControlWritesCarryClearToSendAndSizes) {
  ScopedEnv env;
  env.set("NCCL_IB_USE_INLINE", "1");
  sendAllSizes(2);
}

TEST(IbKnobs, SplitDataOnQpsZeroSendsEachMessageOnOneQpRoundRobin) {
  ScopedEnv env;
  env.set("NCCL_IB_QPS_PER_CONNECTION", "3");
  env.set("NCCL_IB_SPLIT_DATA_ON_QPS", "0");
  sendAllSizes(2);  // every QP carries some: the sequence numbers go round
}

TEST(IbKnobs, SplitDataOnQpsOneSplitsEveryMessage) {
  ScopedEnv env;
  env.set("NCCL_IB_QPS_PER_CONNECTION", "3");
  env.set("NCCL_IB_SPLIT_DATA_ON_QPS", "1");
  sendAllSizes();
}

TEST(IbKnobs, SplitDataOnQpsMustAgree) {
  // One plugin instance per process: the receiver is a forked child that
  // splits, the sender here does not. The receiver sees the sender's
  // handshake first and refuses it with one line.
  ScopedEnv env;
  env.set("NCCL_IB_QPS_PER_CONNECTION", "2");
  ChildProcess child([](Channel& parent) {
    setenv("NCCL_IB_SPLIT_DATA_ON_QPS", "1", 1);
    Session s(11);
    if (!s.ok()) return 90;
    size_t mark = logMark();
    void* recvComm = nullptr;
    if (listenAndAccept(s, parent, &recvComm) == ncclSuccess) return 93;
    std::vector<std::string> warnings = warningsSince(mark);
    if (warnings.size() != 1) return 94;
    if (warnings[0].find("NCCL_IB_SPLIT_DATA_ON_QPS must agree") == std::string::npos) return 95;
    return 0;
  });
  env.set("NCCL_IB_SPLIT_DATA_ON_QPS", "0");
  Session s(11);
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  ASSERT_TRUE(child.channel().receive(handle, sizeof(handle)));
  void* sendComm = nullptr;
  EXPECT_NE(connectTo(s, handle, &sendComm), ncclSuccess);
  EXPECT_TRUE(child.wait(30).succeeded());
}

TEST(IbKnobs, AdaptiveRoutingSendsTheImmediateApartAboveTheThreshold) {
  ScopedEnv env;
  env.set("NCCL_IB_ADAPTIVE_ROUTING", "1");
  env.set("NCCL_IB_AR_THRESHOLD", "1000");  // 1000 B folds, 1001 B does not
  size_t mark = logMark();
  sendAllSizes();
  EXPECT_TRUE(infoSince(mark, "AR 1"));
}

TEST(IbKnobs, AdaptiveRoutingIsOffOnRoceByDefault) {
  size_t mark = logMark();
  sendAllSizes();
  EXPECT_TRUE(infoSince(mark, "RoCE speed 100000 Mb/s GID index 3 P_Key index 0 AR 0"));
}

TEST(IbKnobs, RelaxedOrderingRegistersThroughRegMrIova2) {
  // softverbs refuses IBV_ACCESS_RELAXED_ORDERING through the IBVERBS_1.1
  // ibv_reg_mr, as verbs.h never sends it there: success means iova2.
  ScopedEnv env;
  env.set("NCCL_IB_PCI_RELAXED_ORDERING", "1");
  size_t mark = logMark();
  sendAllSizes();
  EXPECT_TRUE(infoSince(mark, "[RO]"));
  EXPECT_TRUE(warningsSince(mark).empty()) << joined(warningsSince(mark));
}

TEST(IbKnobs, RelaxedOrderingOff) {
  ScopedEnv env;
  env.set("NCCL_IB_PCI_RELAXED_ORDERING", "0");
  size_t mark = logMark();
  sendAllSizes();
  EXPECT_FALSE(infoSince(mark, "[RO]"));
}

TEST(IbKnobs, ValuesOutsideAKnobsRangeStopInitWithOneLine) {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"NCCL_IB_PKEY", "-1"},
      {"NCCL_IB_PKEY", "70000"},
      {"NCCL_IB_USE_INLINE", "2"},
      {"NCCL_IB_SPLIT_DATA_ON_QPS", "yes"},
      {"NCCL_IB_ADAPTIVE_ROUTING", "-1"},
      {"NCCL_IB_AR_THRESHOLD", "-5"},
      {"NCCL_IB_PCI_RELAXED_ORDERING", "3"},
      {"NCCL_IB_MTU", "1234"},  // in range, but no path MTU
  };
  for (const auto& knob : bad) {
    ScopedEnv env;
    env.set(knob.first, knob.second);
    size_t mark = logMark();
    Session s(11);
    EXPECT_FALSE(s.ok()) << knob.first << "=" << knob.second;
    std::vector<std::string> warnings = warningsSince(mark);
    ASSERT_EQ(warnings.size(), 1u) << knob.first << joined(warnings);
    EXPECT_NE(warnings[0].find(knob.first), std::string::npos) << warnings[0];
  }
}

}  // namespace
}  // namespace ncclnet::ib::testing
