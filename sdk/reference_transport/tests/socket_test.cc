// SPDX-License-Identifier: Apache-2.0
// Two processes over sdk-socket (TCP): the ring and p2p patterns for every
// protocol, and grouped receives through shared comms, every byte checked.
// The same scenarios run in process against loopnet's deliberately broken
// variants in broken_plugins_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include "two_process.hpp"

namespace ncclnet::transport::testing {
namespace {

class SdkSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(NCCLNET_RT_SOCKET, R_OK) != 0) {
      GTEST_SKIP() << "sdk-socket not built: " << NCCLNET_RT_SOCKET;
    }
    setenv("NCCL_SOCKET_IFNAME", "lo", 0);
  }
  TwoProcessScenario base() {
    TwoProcessScenario sc;
    sc.plugin = NCCLNET_RT_SOCKET;
    sc.config.buffSizes[index(Protocol::LL)] = 8 * 4096;
    sc.config.buffSizes[index(Protocol::LL128)] = 8 * 128 * 64;
    sc.config.buffSizes[index(Protocol::Simple)] = 8 * 65536;
    sc.config.p2pChunkSize = 16384;
    return sc;
  }
};

TEST_F(SdkSocket, RingEveryProtocolFourChannels) {
  TwoProcessScenario sc = base();
  sc.links = twoRankRing(4, false);
  sc.phases = {RoundOptions{.protocol = Protocol::Simple}, RoundOptions{.protocol = Protocol::LL},
               RoundOptions{.protocol = Protocol::LL128},
               RoundOptions{.protocol = Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4}};
  sc.maxBytes = 300000;
  EXPECT_EQ(runTwoProcesses(sc), "");
}

TEST_F(SdkSocket, RingNcclDefaultBuffers) {
  TwoProcessScenario sc = base();
  sc.config = TransportConfig();
  sc.links = twoRankRing(2, false);
  sc.phases = {RoundOptions{.protocol = Protocol::Simple},
               RoundOptions{.protocol = Protocol::LL128}, RoundOptions{.protocol = Protocol::LL}};
  sc.rounds = 3;
  sc.maxBytes = 5 << 20;
  EXPECT_EQ(runTwoProcesses(sc), "");
}

TEST_F(SdkSocket, P2pSharedBuffersFourChannels) {
  TwoProcessScenario sc = base();
  sc.links = twoRankRing(4, true);
  sc.phases = {RoundOptions{}};
  sc.rounds = 12;
  EXPECT_EQ(runTwoProcesses(sc), "");
}

TEST_F(SdkSocket, P2pDedicatedBuffersWithLL) {
  TwoProcessScenario sc = base();
  sc.config.sharedBuffers = 0;
  sc.links = twoRankRing(2, true);
  sc.phases = {RoundOptions{}, RoundOptions{.protocol = Protocol::LL}};
  EXPECT_EQ(runTwoProcesses(sc), "");
}

TEST_F(SdkSocket, GroupedReceivesThroughSharedComms) {
  TwoProcessScenario sc = base();
  sc.config.allocP2pNetLLBuffers = true;
  sc.links = fanInLinks(4, 2);
  sc.sendGroupByLocalRank = true;
  sc.phases = {RoundOptions{}, RoundOptions{.protocol = Protocol::LL}};
  sc.rounds = 10;
  EXPECT_EQ(runTwoProcesses(sc), "");
}

}  // namespace
}  // namespace ncclnet::transport::testing
