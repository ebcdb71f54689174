// SPDX-License-Identifier: Apache-2.0
// The proof on log lines in the formats NCCL 2.28 prints: src/transport/
// net.cc sendSetup/recvSetup ("[send] via NET/%s/%d%s%s%s", suffixes
// /GDRDMA, (PCI), /Shared), p2p.cc ("via P2P/..."), shm.cc ("Channel %02d :
// ... via SHM/%s/%s", no connection index), init.cc ("Using network %s").
#include <gtest/gtest.h>

#include <sstream>

#include "net_proof.hpp"

namespace nccldriver {
namespace {

const char* kHeader =
    "h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin sdk-socket (v11)\n"
    "h:1:1 [0] NCCL INFO Using network sdk-socket\n";

NetProof prove(const std::string& log, const std::string& expected) {
  std::istringstream in(log);
  return proveNetwork(in, expected);
}

TEST(NetProof, EveryChannelThroughTheExpectedPluginIsProven) {
  std::string log =
      std::string(kHeader) +
      "h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/sdk-socket/0\n"
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/sdk-socket/0\n"
      "h:1:2 [0] NCCL INFO Channel 01/1 : 0[0] -> 1[0] [send] via NET/sdk-socket/0/Shared\n"
      "h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n";
  NetProof p = prove(log, "sdk-socket");
  EXPECT_TRUE(p.proven()) << p.describe();
  EXPECT_EQ(p.connections, 3);
  EXPECT_EQ(p.network, "sdk-socket");
  EXPECT_FALSE(p.gdr);
  EXPECT_EQ(p.describe(), "3 of 3 channel connections via NET/sdk-socket");
}

TEST(NetProof, GdrSuffixIsSeen) {
  NetProof p =
      prove(std::string(kHeader) +
                "x NCCL INFO Channel 02/0 : 0[0] -> 1[0] [send] via NET/sdk-socket/0/GDRDMA\n",
            "sdk-socket");
  EXPECT_TRUE(p.proven());
  EXPECT_TRUE(p.gdr);
}

TEST(NetProof, P2pShmOrAnotherNetworkIsRefused) {
  std::string log = std::string(kHeader) +
                    "x NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/sdk-socket/0\n"
                    "x NCCL INFO Channel 01/1 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
                    "x NCCL INFO Channel 02 : 0[0] -> 1[1] via SHM/direct/direct\n";
  NetProof p = prove(log, "sdk-socket");
  EXPECT_FALSE(p.proven());
  EXPECT_EQ(p.elsewhere.at("P2P/CUMEM/read"), 1);
  EXPECT_EQ(p.elsewhere.at("SHM/direct/direct"), 1);
  EXPECT_NE(p.describe().find("1 of 3"), std::string::npos);

  NetProof fallback = prove(
      "x NCCL INFO Using network Socket\n"
      "x NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n",
      "sdk-socket");
  EXPECT_FALSE(fallback.proven());
  EXPECT_NE(fallback.describe().find("NCCL used network Socket"), std::string::npos);
}

TEST(NetProof, AnyNetworkWhenNoneIsExpectedButNeverP2p) {
  EXPECT_TRUE(prove("x NCCL INFO Using network Socket\n"
                    "x NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n",
                    "")
                  .proven());
  EXPECT_FALSE(prove("x NCCL INFO Channel 00/1 : 0[0] -> 1[1] via P2P/IPC\n", "").proven());
}

TEST(NetProof, ALogWithoutConnectionsProvesNothing) {
  NetProof p = prove(kHeader, "sdk-socket");
  EXPECT_FALSE(p.proven());
  EXPECT_NE(p.describe().find("no channel connection"), std::string::npos);
}

TEST(NetProof, CheckerViolationsAndWarningsAreCollected) {
  NetProof p = prove(std::string(kHeader) +
                         "x NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/sdk-socket/0\n"
                         "x NCCL WARN NET/check rule 35 CompletionReportsSizes: test reported 8\n"
                         "x NCCL WARN NET/check rule 27 DeregMrReleases (caller): deregMr of "
                         "mhandle #12 while 1 request(s) in flight use it | recvComm #6 (dev 0)\n"
                         "x NCCL WARN something else\n",
                     "sdk-socket");
  ASSERT_EQ(p.violations.size(), 1u);
  EXPECT_NE(p.violations[0].find("rule 35"), std::string::npos);
  ASSERT_EQ(p.callerLines.size(), 1u) << "NCCL's own misuse is not the plugin's violation";
  EXPECT_NE(p.callerLines[0].find("rule 27"), std::string::npos);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_TRUE(p.proven());  // the network is proven; violations are judged apart
}

TEST(NetProof, MergedRanksMustAgreeOnTheNetwork) {
  NetProof a = prove(std::string(kHeader) +
                         "x NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/sdk-socket/0\n",
                     "sdk-socket");
  NetProof b = prove(
      "x NCCL INFO Using network Socket\n"
      "x NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/Socket/0\n",
      "sdk-socket");
  EXPECT_TRUE(mergeProofs({a, a}).proven());
  NetProof m = mergeProofs({a, b});
  EXPECT_FALSE(m.proven());
  EXPECT_EQ(m.connections, 2);
}

// NCCL 2.28's src/plugin/net.cc, once a device communicator asked for GIN.
TEST(NetProof, GinJobsAreProvenByEveryRanksGinPlugin) {
  const char* gin = "h:1:1 [0] NCCL INFO Assigned GIN plugin sdk-socket to comm\n";
  NetProof one = prove(std::string(kHeader) + gin, "sdk-socket");
  one.needChannels = false;
  one.needGin = true;
  EXPECT_TRUE(one.proven()) << one.describe();
  EXPECT_EQ(one.describe(), "1 of 1 ranks' GIN through sdk-socket");

  NetProof none = prove(kHeader, "sdk-socket");
  NetProof both = mergeProofs({one, none});
  both.needChannels = false;
  both.needGin = true;
  EXPECT_FALSE(both.proven());
  EXPECT_EQ(both.describe(), "1 of 2 ranks' GIN through sdk-socket");

  NetProof other = prove("h:1:1 [0] NCCL INFO Assigned GIN plugin GIN_IB to comm\n", "sdk-socket");
  other.needChannels = false;
  other.needGin = true;
  EXPECT_FALSE(other.proven()) << other.describe();

  // GIN and channels together: both must hold.
  NetProof mixed = prove(std::string(kHeader) + gin, "sdk-socket");
  mixed.needGin = true;
  EXPECT_FALSE(mixed.proven());
  EXPECT_EQ(mixed.describe(),
            "NCCL printed no channel connection (is NCCL_DEBUG=INFO lost?); 1 of 1 ranks' GIN "
            "through sdk-socket");
}

// A job with NCCL_COLLNET_ENABLE=1: NCCL 2.28's coll_net.cc sendSetup and
// recvSetup lines, through the expected network, or none at all when NCCL
// fell back to point-to-point.
TEST(NetProof, CollNetJobsNeedCollNetConnections) {
  const char* lines =
      "x NCCL INFO Using network sdk-socket\n"
      "x NCCL INFO Channel 00/1 : 1[0] -> 0[0] [receive] via NET/sdk-socket/0/Shared\n"
      "x NCCL INFO CollNet 00/0 : 0 [receive] via COLLNET/sdk-socket/0\n"
      "x NCCL INFO CollNet 00/1 : 0 [send] via COLLNET/sdk-socket/0\n";
  NetProof p = prove(lines, "sdk-socket");
  EXPECT_EQ(p.collNetConnections, 2);
  EXPECT_EQ(p.connections, 1);  // a CollNet line is no channel connection
  p.needCollNet = true;
  EXPECT_TRUE(p.proven()) << p.describe();
  EXPECT_NE(p.describe().find("2 of 2 CollNet connections via COLLNET/sdk-socket"),
            std::string::npos)
      << p.describe();

  NetProof fellBack = prove(
      "x NCCL INFO Using network sdk-socket\n"
      "x NCCL INFO Channel 00/1 : 1[0] -> 0[0] [receive] via NET/sdk-socket/0\n",
      "sdk-socket");
  EXPECT_TRUE(fellBack.proven());
  fellBack.needCollNet = true;
  EXPECT_FALSE(fellBack.proven());
  EXPECT_NE(fellBack.describe().find("no CollNet connection"), std::string::npos);

  NetProof other = prove(
      "x NCCL INFO Using network sdk-socket\n"
      "x NCCL INFO Channel 00/1 : 1[0] -> 0[0] [receive] via NET/sdk-socket/0\n"
      "x NCCL INFO CollNet 00/0 : 0 [receive] via COLLNET/sharp/0\n",
      "sdk-socket");
  other.needCollNet = true;
  EXPECT_FALSE(other.proven()) << other.describe();
  EXPECT_EQ(mergeProofs({p, p}).collNetConnections, 4);

  // All-reduce on CollNetChain alone opens no channel: CollNet's lines and
  // the network NCCL named prove it; without CollNet lines nothing does.
  const char* collNetOnly =
      "x NCCL INFO Using network sdk-socket\n"
      "x NCCL INFO CollNet 00/0 : 0 [receive] via COLLNET/sdk-socket/0\n";
  NetProof alone = prove(collNetOnly, "sdk-socket");
  alone.needCollNet = true;
  EXPECT_TRUE(alone.proven()) << alone.describe();
  EXPECT_NE(alone.describe().find("CollNet carried the job"), std::string::npos);
  NetProof wrongNet = prove(
      "x NCCL INFO Using network Socket\n"
      "x NCCL INFO CollNet 00/0 : 0 [receive] via COLLNET/sdk-socket/0\n",
      "sdk-socket");
  wrongNet.needCollNet = true;
  EXPECT_FALSE(wrongNet.proven());
  NetProof notAsked = prove(collNetOnly, "sdk-socket");
  EXPECT_FALSE(notAsked.proven());
}
}  // namespace
}  // namespace nccldriver
