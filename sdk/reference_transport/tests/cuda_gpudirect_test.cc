// SPDX-License-Identifier: Apache-2.0
// GPU-direct placement in one process: step buffers in device memory
// (ConnectionSpec::useGdr), registered through DMA-BUF when the GPU can
// export it, else as NCCL_PTR_CUDA, moved by loopnet-cuda (which copies GPU
// memory with the CUDA driver, as a NIC's DMA would) and produced and
// checked by CudaDevicePeer kernels reading and writing device memory.
#include "cuda_fixture.hpp"

namespace ncclnet::transport::testing {
namespace {

class CudaGpuDirect : public ::testing::TestWithParam<Protocol> {
 protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }
};

// Every device buffer went through DMA-BUF when the GPU can export, else
// through regMr(NCCL_PTR_CUDA); the fds are the provider's to close.
void expectDeviceRegistrations(Scenario& s, int ranks) {
  RegistrationCounts all;
  for (int r = 0; r < ranks; r++) {
    RegistrationCounts c = s.rank(r).transport->registrations();
    all.host += c.host;
    all.device += c.device;
    all.dmaBuf += c.dmaBuf;
  }
  std::shared_ptr<CudaMemoryProvider> probe;
  std::string why;
  ASSERT_EQ(CudaMemoryProvider::create(0, &probe, &why), ncclSuccess) << why;
  if (probe->canExportDmaBuf()) {
    EXPECT_GT(all.dmaBuf, 0u);
    EXPECT_EQ(all.device, 0u);
    EXPECT_EQ(static_cast<uint64_t>(s.net().regMrDmaBufs.load()), all.dmaBuf);
  } else {
    EXPECT_EQ(all.dmaBuf, 0u);
    EXPECT_GT(all.device, 0u);
  }
  std::cout << "registrations: host " << all.host << ", CUDA " << all.device << ", DMA-BUF "
            << all.dmaBuf << "\n";
}

TEST_P(CudaGpuDirect, RingOnFourChannels) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("cuda"), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(4, /*p2p=*/false, /*useGdr=*/true, &why), ncclSuccess) << why;
  const ConnectMap& send = s.links()[0]->send->map();
  const ConnectMap& recv = s.links()[0]->recv->map();
  EXPECT_EQ(send.buffs[index(Protocol::LL)].bank, Bank::Host);
  EXPECT_EQ(send.buffs[index(Protocol::Simple)].bank, Bank::Device);
  EXPECT_EQ(recv.buffs[index(GetParam())].bank, Bank::Device);
  ASSERT_NO_FATAL_FAILURE(expectDeviceRegistrations(s, 2));
  RoundOptions o{.protocol = GetParam()};
  size_t maxBytes = GetParam() == Protocol::Simple ? 600000 : 60000;
  ASSERT_EQ(s.randomRounds(12, maxBytes, o, 31, &why), ncclSuccess) << why;
  if (GetParam() == Protocol::Simple) {
    EXPECT_GT(s.net().iflushes.load(), 0);  // the ring's specs ask for a flush
  }
}

INSTANTIATE_TEST_SUITE_P(Protocols, CudaGpuDirect,
                         ::testing::Values(Protocol::Simple, Protocol::LL, Protocol::LL128),
                         [](const auto& info) { return std::string(protocolName(info.param)); });

class CudaGpuDirectShapes : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }
};

TEST_F(CudaGpuDirectShapes, SliceStepsTwoChunkStepsFour) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("cuda"), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, true, &why), ncclSuccess) << why;
  RoundOptions o{.protocol = Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4};
  ASSERT_EQ(s.randomRounds(8, 500000, o, 32, &why), ncclSuccess) << why;
}

TEST_F(CudaGpuDirectShapes, P2pSharedPoolInGpuMemory) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("cuda"), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(4, /*p2p=*/true, /*useGdr=*/true, &why), ncclSuccess) << why;
  EXPECT_EQ(s.links()[0]->send->map().buffs[index(Protocol::Simple)].bank, Bank::SharedDevice);
  ASSERT_NO_FATAL_FAILURE(expectDeviceRegistrations(s, 2));
  ASSERT_EQ(s.randomRounds(12, 300000, RoundOptions{}, 33, &why), ncclSuccess) << why;
}

TEST_F(CudaGpuDirectShapes, NcclDefaultBufferSizesEveryProtocol) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("cuda"), 2, TransportConfig(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, true, &why), ncclSuccess) << why;
  for (Protocol p : {Protocol::Simple, Protocol::LL128, Protocol::LL}) {
    ASSERT_EQ(s.randomRounds(3, 6 << 20, RoundOptions{.protocol = p}, 34, &why), ncclSuccess)
        << protocolName(p) << ": " << why;
  }
}

}  // namespace
}  // namespace ncclnet::transport::testing
