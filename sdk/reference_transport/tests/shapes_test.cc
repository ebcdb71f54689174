// SPDX-License-Identifier: Apache-2.0
// End-to-end, in one process, with every device peer (shapes.hpp): two or
// more Transports over an in-process plugin (the SDK's testnet, or
// loopnet), NCCL's traffic shapes, every byte checked by the device peer.
// Plugin-side counts (hints, registrations, grouped receives) must come out
// the same whichever peer plays NCCL's kernels.
#include "shapes.hpp"

namespace ncclnet::transport::testing {
namespace {

TEST_P(Shapes, RingRandomSizesOnFourChannelsEveryProtocol) {
  for (Protocol p : {Protocol::Simple, Protocol::LL, Protocol::LL128}) {
    SCOPED_TRACE(protocolName(p));
    Scenario s(ranks());
    std::string why;
    ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
    ASSERT_EQ(s.ring(4, /*p2p=*/false, /*useGdr=*/false, &why), ncclSuccess) << why;
    size_t maxBytes = p == Protocol::Simple ? 600000 : 60000;
    ASSERT_EQ(s.randomRounds(12, maxBytes, RoundOptions{.protocol = p}, 1, &why), ncclSuccess)
        << why;
    // LL/LL128 receives were single, so each carried the optional hint.
    if (p != Protocol::Simple)
      EXPECT_GT(s.net().optionalHints.load(), 0);
    else
      EXPECT_EQ(s.net().optionalHints.load(), 0);
  }
}

TEST_P(Shapes, RingSliceStepsTwoChunkStepsFour) {
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(3, false, false, &why), ncclSuccess) << why;
  RoundOptions o{.protocol = Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4};
  ASSERT_EQ(s.randomRounds(10, 500000, o, 2, &why), ncclSuccess) << why;
}

TEST_P(Shapes, RingNcclDefaultBufferSizes) {
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  for (Protocol p : {Protocol::Simple, Protocol::LL128, Protocol::LL}) {
    ASSERT_EQ(s.randomRounds(3, 6 << 20, RoundOptions{.protocol = p}, 3, &why), ncclSuccess)
        << protocolName(p) << ": " << why;
  }
}

TEST_P(Shapes, RingThreeRanksMixedProtocolsShareOneProgressThread) {
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 3, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  for (int i = 0; i < 6; i++) {
    Protocol p = static_cast<Protocol>(i % 3);
    ASSERT_EQ(s.randomRounds(2, 200000, RoundOptions{.protocol = p}, 10 + i, &why), ncclSuccess)
        << protocolName(p) << ": " << why;
  }
}

TEST_P(Shapes, P2pSharedBuffersOnFourChannels) {
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(4, /*p2p=*/true, false, &why), ncclSuccess) << why;
  for (auto& l : s.links()) {
    ASSERT_TRUE(l->send->shared());
    ASSERT_TRUE(l->recv->shared());
  }
  ASSERT_EQ(s.randomRounds(15, 300000, RoundOptions{}, 4, &why), ncclSuccess) << why;
}

TEST_P(Shapes, P2pDedicatedWhenSharedBuffersOff) {
  TransportConfig c = TransportConfig::shrunk();
  c.sharedBuffers = 0;
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, true, false, &why), ncclSuccess) << why;
  EXPECT_FALSE(s.links()[0]->send->shared());
  ASSERT_EQ(s.randomRounds(6, 300000, RoundOptions{}, 5, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(6, 30000, RoundOptions{.protocol = Protocol::LL}, 6, &why), ncclSuccess)
      << why;
}

TEST_P(Shapes, GroupedReceivesFourSendersThroughSharedComms) {
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.fanIn(4, 2, &why), ncclSuccess) << why;
  // One comm per (peer, channel), connected and accepted once.
  EXPECT_EQ(s.net().connects.load(), 2 * 2);  // the owner's two calls per channel
  EXPECT_GE(s.net().accepts.load(), 2);
  void* comm0 = s.links()[0]->recv->netComm();
  for (int i = 0; i < 4; i++) {
    EXPECT_TRUE(s.links()[i]->recv->usesSharedComm());
    EXPECT_EQ(s.links()[i]->recv->netComm(), comm0);
  }
  EXPECT_NE(s.links()[4]->recv->netComm(), comm0);
  ASSERT_EQ(s.randomRounds(12, 100000, RoundOptions{}, 6, &why), ncclSuccess) << why;
  EXPECT_EQ(s.net().maxIrecvN.load(), 4);  // grouped up to maxRecvs
  EXPECT_EQ(s.net().irecvConsumeds.load(), s.net().irecvs.load());
  // Listens: every one closed, accepted or not.
  s.dropLinks();
  EXPECT_EQ(s.net().closeListens.load(), s.net().listens.load());
  EXPECT_EQ(s.net().closeSends.load(), 2);  // one shared sendComm per channel
  EXPECT_EQ(s.net().closeRecvs.load(), 2);
}

TEST_P(Shapes, GroupedReceivesLLWithP2pLLBuffers) {
  TransportConfig c = TransportConfig::shrunk();
  c.allocP2pNetLLBuffers = true;  // p2p LL needs its own buffers
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.fanIn(3, 2, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(8, 40000, RoundOptions{.protocol = Protocol::LL}, 7, &why), ncclSuccess)
      << why;
  EXPECT_EQ(s.net().maxIrecvN.load(), 3);
  EXPECT_EQ(s.net().groupedHints.load(), 0);  // the hint only on lone receives
}

// Registered user buffers: payload straight between user memory and the
// network, in maxNetSize steps, alongside ordinary rounds on the same
// connections; every registration is released again.
TEST_P(Shapes, RegisteredBuffersInMaxNetSizeSteps) {
  TransportConfig c = TransportConfig::shrunk();
  c.maxNetSize = 100000;  // several steps per message
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, /*p2p=*/true, false, &why), ncclSuccess) << why;
  int before = s.net().regMrs.load();
  ASSERT_EQ(s.randomRounds(8, 700000, RoundOptions{.registered = true}, 13, &why), ncclSuccess)
      << why;
  ASSERT_EQ(s.randomRounds(2, 300000, RoundOptions{}, 14, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(4, 50000, RoundOptions{.registered = true}, 15, &why), ncclSuccess)
      << why;
  // Two ends per link, 4 links, 12 registered rounds.
  EXPECT_EQ(s.net().regMrs.load() - before, 2 * 4 * 12);
  EXPECT_EQ(s.net().deregMrs.load(), s.net().regMrs.load() - before);
}

TEST_P(Shapes, SizesOnlyModeMovesFlagsAndSizes) {
  Scenario s(ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  for (Protocol p : {Protocol::Simple, Protocol::LL, Protocol::LL128}) {
    RoundOptions o{.protocol = p, .mode = DataMode::None};
    ASSERT_EQ(s.randomRounds(4, 100000, o, 8, &why), ncclSuccess) << protocolName(p) << ": " << why;
  }
}

}  // namespace
}  // namespace ncclnet::transport::testing
