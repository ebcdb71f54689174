// SPDX-License-Identifier: Apache-2.0
// End-to-end on a GPU, in one process: the in-process scenario shapes
// (rings on several channels for SIMPLE, LL and LL128, p2p through shared
// and dedicated buffers, fan-in through shared comms) with every rank on
// CUDA device 0 — CudaMemoryProvider memory and CudaDevicePeer kernels that
// produce the pattern and check every received byte on the GPU.
#include "cuda_fixture.hpp"

namespace ncclnet::transport::testing {
namespace {

class CudaRing : public ::testing::TestWithParam<Protocol> {
 protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }
};

TEST_P(CudaRing, RandomSizesOnFourChannels) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(4, /*p2p=*/false, /*useGdr=*/false, &why), ncclSuccess) << why;
  RoundOptions o{.protocol = GetParam()};
  size_t maxBytes = GetParam() == Protocol::Simple ? 600000 : 60000;
  ASSERT_EQ(s.randomRounds(12, maxBytes, o, 1, &why), ncclSuccess) << why;
}

INSTANTIATE_TEST_SUITE_P(Protocols, CudaRing,
                         ::testing::Values(Protocol::Simple, Protocol::LL, Protocol::LL128),
                         [](const auto& info) { return std::string(protocolName(info.param)); });

class CudaScenario : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }
};

TEST_F(CudaScenario, RingSliceStepsTwoChunkStepsFour) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(3, false, false, &why), ncclSuccess) << why;
  RoundOptions o{.protocol = Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4};
  ASSERT_EQ(s.randomRounds(10, 500000, o, 2, &why), ncclSuccess) << why;
}

TEST_F(CudaScenario, RingNcclDefaultBufferSizes) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  for (Protocol p : {Protocol::Simple, Protocol::LL128, Protocol::LL}) {
    RoundOptions o{.protocol = p};
    ASSERT_EQ(s.randomRounds(3, 6 << 20, o, 3, &why), ncclSuccess)
        << protocolName(p) << ": " << why;
  }
}

TEST_F(CudaScenario, RingThreeRanksMixedProtocols) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 3, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  for (int i = 0; i < 6; i++) {
    Protocol p = static_cast<Protocol>(i % 3);
    ASSERT_EQ(s.randomRounds(2, 200000, RoundOptions{.protocol = p}, 10 + i, &why), ncclSuccess)
        << protocolName(p) << ": " << why;
  }
}

TEST_F(CudaScenario, P2pSharedBuffersOnFourChannels) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(4, /*p2p=*/true, false, &why), ncclSuccess) << why;
  for (auto& l : s.links()) ASSERT_TRUE(l->send->shared());
  ASSERT_EQ(s.randomRounds(15, 300000, RoundOptions{}, 4, &why), ncclSuccess) << why;
}

TEST_F(CudaScenario, P2pDedicatedWhenSharedBuffersOff) {
  TransportConfig c = TransportConfig::shrunk();
  c.sharedBuffers = 0;
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, true, false, &why), ncclSuccess) << why;
  EXPECT_FALSE(s.links()[0]->send->shared());
  ASSERT_EQ(s.randomRounds(6, 300000, RoundOptions{}, 5, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(6, 30000, RoundOptions{.protocol = Protocol::LL}, 6, &why), ncclSuccess)
      << why;
}

TEST_F(CudaScenario, GroupedReceivesFourSendersThroughSharedComms) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.fanIn(4, 2, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(12, 100000, RoundOptions{}, 6, &why), ncclSuccess) << why;
  EXPECT_EQ(s.net().maxIrecvN.load(), 4);
  EXPECT_EQ(s.net().irecvConsumeds.load(), s.net().irecvs.load());
}

TEST_F(CudaScenario, GroupedReceivesLLWithP2pLLBuffers) {
  TransportConfig c = TransportConfig::shrunk();
  c.allocP2pNetLLBuffers = true;
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.fanIn(3, 2, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(8, 40000, RoundOptions{.protocol = Protocol::LL}, 7, &why), ncclSuccess)
      << why;
  EXPECT_EQ(s.net().maxIrecvN.load(), 3);
}

// Registered user buffers (pinned host memory here): the kernels write and
// check the payload in the user buffers, the network moves it in maxNetSize
// steps, alongside ordinary rounds on the same connections.
TEST_F(CudaScenario, RegisteredUserBuffersInMaxNetSizeSteps) {
  TransportConfig c = TransportConfig::shrunk();
  c.maxNetSize = 100000;
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, /*p2p=*/true, false, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(6, 700000, RoundOptions{.registered = true}, 13, &why), ncclSuccess)
      << why;
  ASSERT_EQ(s.randomRounds(2, 300000, RoundOptions{}, 14, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(3, 50000, RoundOptions{.registered = true}, 15, &why), ncclSuccess)
      << why;
}

TEST_F(CudaScenario, SizesOnlyModeMovesFlagsAndSizes) {
  Scenario s(OnGpu::ranks());
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
