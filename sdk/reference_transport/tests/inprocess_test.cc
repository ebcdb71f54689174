// SPDX-License-Identifier: Apache-2.0
// End-to-end, in one process: two or more Transports and HostDevicePeers
// over an in-process plugin (the SDK's testnet, or loopnet), NCCL's traffic
// shapes, every byte checked.
#include <gtest/gtest.h>

#include "scenario.hpp"

namespace ncclnet::transport::testing {
namespace {

const char* name(Protocol p) {
  return protocolName(p);
}

class RingPipeline : public ::testing::TestWithParam<Protocol> {};

TEST_P(RingPipeline, RandomSizesOnFourChannels) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(4, /*p2p=*/false, /*useGdr=*/false, &why), ncclSuccess) << why;
  RoundOptions o{.protocol = GetParam()};
  size_t maxBytes = GetParam() == Protocol::Simple ? 600000 : 60000;
  ASSERT_EQ(s.randomRounds(12, maxBytes, o, 1, &why), ncclSuccess) << why;
  // LL/LL128 receives were single, so each carried the optional hint.
  if (GetParam() != Protocol::Simple)
    EXPECT_GT(s.net().optionalHints.load(), 0);
  else
    EXPECT_EQ(s.net().optionalHints.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Protocols, RingPipeline,
                         ::testing::Values(Protocol::Simple, Protocol::LL, Protocol::LL128),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST(RingPipelineSimple, SliceStepsTwoChunkStepsFour) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(3, false, false, &why), ncclSuccess) << why;
  RoundOptions o{.protocol = Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4};
  ASSERT_EQ(s.randomRounds(10, 500000, o, 2, &why), ncclSuccess) << why;
}

TEST(RingPipelineSimple, NcclDefaultBufferSizes) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  for (Protocol p : {Protocol::Simple, Protocol::LL128, Protocol::LL}) {
    RoundOptions o{.protocol = p};
    ASSERT_EQ(s.randomRounds(3, 6 << 20, o, 3, &why), ncclSuccess) << name(p) << ": " << why;
  }
}

TEST(RingPipeline, ThreeRanksMixedProtocolsShareOneProgressThread) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 3, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  for (int i = 0; i < 6; i++) {
    Protocol p = static_cast<Protocol>(i % 3);
    ASSERT_EQ(s.randomRounds(2, 200000, RoundOptions{.protocol = p}, 10 + i, &why), ncclSuccess)
        << name(p) << ": " << why;
  }
}

TEST(P2pSharedBuffers, RandomSizesOnFourChannels) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(4, /*p2p=*/true, false, &why), ncclSuccess) << why;
  for (auto& l : s.links()) {
    ASSERT_TRUE(l->send->shared());
    ASSERT_TRUE(l->recv->shared());
  }
  ASSERT_EQ(s.randomRounds(15, 300000, RoundOptions{}, 4, &why), ncclSuccess) << why;
}

TEST(P2pSharedBuffers, DedicatedWhenSharedBuffersOff) {
  TransportConfig c = TransportConfig::shrunk();
  c.sharedBuffers = 0;
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, true, false, &why), ncclSuccess) << why;
  EXPECT_FALSE(s.links()[0]->send->shared());
  ASSERT_EQ(s.randomRounds(6, 300000, RoundOptions{}, 5, &why), ncclSuccess) << why;
}

TEST(P2pSharedBuffers, PoolIsRegisteredByEveryConnection) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(3, true, false, &why), ncclSuccess) << why;
  // 6 links x 2 ends, SIMPLE only (no p2p LL buffers by default).
  EXPECT_EQ(s.net().regMrs.load(), 12);
  const ConnectMap& m = s.links()[0]->send->map();
  EXPECT_EQ(m.buffs[index(Protocol::Simple)].bank, Bank::SharedHost);
  EXPECT_FALSE(m.buffs[index(Protocol::LL)].used);
  s.dropLinks();
  EXPECT_EQ(s.net().deregMrs.load(), 12);
}

// Registered user buffers: payload straight between user memory and the
// network, in maxNetSize steps, alongside ordinary rounds on the same
// connections; every registration is released again.
TEST(RegisteredBuffers, P2pStepsOfMaxNetSize) {
  TransportConfig c = TransportConfig::shrunk();
  c.maxNetSize = 100000;  // several steps per message
  Scenario s;
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

TEST(RegisteredBuffers, RingConnectionsAndMisuse) {
  TransportConfig c = TransportConfig::shrunk();
  c.maxNetSize = 65536;
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(6, 400000, RoundOptions{.registered = true}, 16, &why), ncclSuccess)
      << why;
  // LL cannot use a registered buffer; an unknown mhandle is refused.
  std::string refused;
  EXPECT_EQ(s.randomRounds(1, 1000, RoundOptions{.protocol = Protocol::LL, .registered = true}, 17,
                           &refused),
            ncclInvalidArgument);
  int dummy = 0;
  EXPECT_EQ(s.links()[0]->send->deregisterBuffer(&dummy), ncclInvalidArgument);
}

TEST(GroupedReceives, FourSendersThroughSharedComms) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.fanIn(4, 2, &why), ncclSuccess) << why;
  // One comm per (peer, channel), connected and accepted once.
  EXPECT_EQ(s.net().connects.load(), 2 * 2);  // the owner's two calls per channel
  EXPECT_EQ(s.net().accepts.load() >= 2, true);
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

TEST(GroupedReceives, LLWithP2pLLBuffers) {
  TransportConfig c = TransportConfig::shrunk();
  c.allocP2pNetLLBuffers = true;  // p2p LL needs its own buffers
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.fanIn(3, 2, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(8, 40000, RoundOptions{.protocol = Protocol::LL}, 7, &why), ncclSuccess)
      << why;
  EXPECT_EQ(s.net().maxIrecvN.load(), 3);
  EXPECT_EQ(s.net().groupedHints.load(), 0);  // the hint only on lone receives
}

TEST(GpuDirectPath, FlushAfterSimpleReceivesOnly) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, /*useGdr=*/true, &why), ncclSuccess) << why;
  const ConnectMap& send = s.links()[0]->send->map();
  const ConnectMap& recv = s.links()[0]->recv->map();
  EXPECT_EQ(send.buffs[index(Protocol::LL)].bank, Bank::Host);  // send LL stays in host memory
  EXPECT_EQ(send.buffs[index(Protocol::LL128)].bank, Bank::Device);
  EXPECT_EQ(recv.buffs[index(Protocol::LL)].bank, Bank::Device);
  ASSERT_EQ(s.randomRounds(4, 100000, RoundOptions{.protocol = Protocol::LL128}, 8, &why),
            ncclSuccess)
      << why;
  EXPECT_EQ(s.net().iflushes.load(), 0);
  ASSERT_EQ(s.randomRounds(4, 100000, RoundOptions{}, 9, &why), ncclSuccess) << why;
  EXPECT_GT(s.net().iflushes.load(), 0);
}

TEST(DeviceHandle, UnpackOnReceiveOnly) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("unpack"), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(1, false, false, &why), ncclSuccess) << why;
  EXPECT_EQ(s.net().deviceHandleAccepts.load(), 2);  // both receive ends, no send end
  Connection& recv = *s.links()[0]->recv;
  ASSERT_NE(recv.device(), nullptr);
  EXPECT_TRUE(recv.device()->hasNetDeviceHandle);
  EXPECT_EQ(recv.device()->netDeviceHandle.netDeviceVersion, NCCL_NET_DEVICE_UNPACK_VERSION);
  EXPECT_FALSE(s.links()[0]->send->device()->hasNetDeviceHandle);
  EXPECT_TRUE(recv.needsProxyProgress());
  // getDeviceMr: each of the 3 buffers on both receive ends, none on sends.
  EXPECT_EQ(s.net().getDeviceMrs.load(), 6);
  // loopnet-unpack gives the handle no unpack queue (handle->handle is
  // NULL): the device peer, which must copy bounce pages before it reads a
  // SIMPLE step, says so instead of reading garbage.
  RoundOptions simple;
  simple.protocol = Protocol::Simple;
  EXPECT_NE(s.randomRounds(1, 100000, simple, 11, &why), ncclSuccess);
  EXPECT_NE(why.find("UNPACK device handle has no unpack queue"), std::string::npos) << why;
}

TEST(Teardown, EverythingClosedOnce) {
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(2, 1000, RoundOptions{}, 12, &why), ncclSuccess) << why;
  s.dropLinks();
  EXPECT_EQ(s.net().closeSends.load(), 4);
  EXPECT_EQ(s.net().closeRecvs.load(), 4);
  EXPECT_EQ(s.net().closeListens.load(), 4);
  EXPECT_EQ(s.net().deregMrs.load(), s.net().regMrs.load());
}

}  // namespace
}  // namespace ncclnet::transport::testing
