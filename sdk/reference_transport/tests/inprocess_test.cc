// SPDX-License-Identifier: Apache-2.0
// End-to-end, in one process, with HostDevicePeers: the traffic shapes
// every device peer runs (shapes_test.cc), and what depends on the plugin
// and the transport alone (pool registration, registered-buffer misuse, the
// GPU-direct flush path, device handles, teardown), every byte checked.
#include <gtest/gtest.h>

#include "scenario.hpp"
#include "shapes.hpp"

namespace ncclnet::transport::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(HostPeer, Shapes,
                         ::testing::Values(DevicePeerKind{"CpuThread", RankMaker(), nullptr}),
                         peerName);

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

// A NULL handle from regMr is a registration NCCL does not use
// (src/transport/net.cc netRegisterBuffer): the round copies through the
// connection's buffers instead, and nothing deregisters the NULL handle.
TEST(RegisteredBuffers, NullHandleFallsBackToConnectionBuffers) {
  TransportConfig c = TransportConfig::shrunk();
  c.maxNetSize = 65536;
  Scenario s;
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  int deregs = s.net().deregMrs.load();
  s.net().nullMhandles = true;
  ASSERT_EQ(s.randomRounds(3, 200000, RoundOptions{.registered = true}, 18, &why), ncclSuccess)
      << why;
  EXPECT_EQ(s.net().deregMrs.load(), deregs);
  s.net().nullMhandles = false;
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
  // Each link's receive fails on its own; which failure the round reports
  // first (this one, or the other link's receive timing out) is a race.
  EXPECT_NE(s.randomRounds(1, 100000, simple, 11, &why), ncclSuccess);
  EXPECT_TRUE(why.find("UNPACK device handle has no unpack queue") != std::string::npos ||
              why.find("device: recv SIMPLE work") != std::string::npos)
      << why;
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
