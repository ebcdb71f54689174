// SPDX-License-Identifier: Apache-2.0
// The CUDA device peer's failure paths: a wrong byte is named (step, offset,
// got/expected), a wait that cannot progress gives up after the launch's
// timeout and says what it waited for, destroying the peer stops a running
// kernel, and memory the GPU cannot reach is refused before any launch.
#include <cuda_runtime_api.h>

#include <chrono>

#include "cuda_fixture.hpp"

namespace ncclnet::transport::testing {
namespace {

using Clock = std::chrono::steady_clock;

class CudaPeerFailures : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }

  // Two GPU ranks, one SIMPLE ring channel on testnet.
  void startRing(Scenario& s) {
    std::string why;
    ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
    ASSERT_EQ(s.ring(1, false, false, &why), ncclSuccess) << why;
  }

  // A device work on one end of link 0 with no proxy operation behind it.
  static DeviceWork loneWork(Scenario& s, bool send, size_t nbytes) {
    Link& l = *s.links()[0];
    Connection& c = send ? *l.send : *l.recv;
    Rank& r = send ? s.senderOf(l) : s.receiverOf(l);
    return DeviceWork{.connection = c.device(),
                      .protocol = Protocol::Simple,
                      .sliceSteps = 1,
                      .chunkSteps = 1,
                      .nbytes = nbytes,
                      .sliceCapacity = r.transport->sliceCapacity(c, Protocol::Simple, 1),
                      .seed = 5};
  }
};

TEST_F(CudaPeerFailures, EarlyCompletionIsCaughtWithTheWrongByte) {
  Scenario s(OnGpu::ranks());
  std::string why;
  TransportConfig c = TransportConfig::shrunk();
  ASSERT_EQ(s.start(loopnetPath("early-completion"), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  EXPECT_NE(s.randomRounds(10, 400000, RoundOptions{}, 21, &why), ncclSuccess);
  EXPECT_NE(why.find("device:"), std::string::npos) << why;
  EXPECT_NE(why.find("expected 0x"), std::string::npos) << why;
  std::cout << "caught: " << why << "\n";
}

TEST_F(CudaPeerFailures, ReorderedSendsAreCaught) {
  Scenario s(OnGpu::ranks());
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("reorder-sends"), 2, TransportConfig::shrunk(), &why), ncclSuccess)
      << why;
  ASSERT_EQ(s.ring(2, false, false, &why), ncclSuccess) << why;
  EXPECT_NE(s.randomRounds(10, 400000, RoundOptions{}, 21, &why), ncclSuccess);
  EXPECT_NE(why.find("device:"), std::string::npos) << why;
  std::cout << "caught: " << why << "\n";
}

TEST_F(CudaPeerFailures, ReceiveWithoutProxyTimesOutWaitingForTheTail) {
  Scenario s(OnGpu::ranks());
  ASSERT_NO_FATAL_FAILURE(startRing(s));
  std::shared_ptr<DeviceCompletion> kernel;
  DeviceWork w = loneWork(s, /*send=*/false, 1000);
  ASSERT_EQ(
      s.receiverOf(*s.links()[0]).device->launch({w}, std::chrono::milliseconds(300), &kernel),
      ncclSuccess);
  std::string detail;
  EXPECT_EQ(kernel->wait(std::chrono::seconds(30), &detail), ncclTimeout);
  EXPECT_NE(detail.find("timed out waiting for tail from the proxy"), std::string::npos) << detail;
  EXPECT_NE(detail.find("recv SIMPLE work 0, slice 0/1"), std::string::npos) << detail;
}

TEST_F(CudaPeerFailures, SendBeyondItsCreditsTimesOutWaitingForTheHead) {
  Scenario s(OnGpu::ranks());
  ASSERT_NO_FATAL_FAILURE(startRing(s));
  DeviceWork w = loneWork(s, /*send=*/true, 0);
  w.nbytes = w.sliceCapacity * (kSteps + 2);  // 8 steps of credit, then nothing
  std::shared_ptr<DeviceCompletion> kernel;
  ASSERT_EQ(s.senderOf(*s.links()[0]).device->launch({w}, std::chrono::milliseconds(300), &kernel),
            ncclSuccess);
  std::string detail;
  EXPECT_EQ(kernel->wait(std::chrono::seconds(30), &detail), ncclTimeout);
  EXPECT_NE(detail.find("head credit from the proxy"), std::string::npos) << detail;
  EXPECT_NE(detail.find("slice 8/10"), std::string::npos) << detail;
}

TEST_F(CudaPeerFailures, WorksBehindAFailedOneOnTheSameConnectionAreNotStarted) {
  Scenario s(OnGpu::ranks());
  ASSERT_NO_FATAL_FAILURE(startRing(s));
  DeviceWork w = loneWork(s, /*send=*/false, 1000);
  std::shared_ptr<DeviceCompletion> kernel;
  ASSERT_EQ(
      s.receiverOf(*s.links()[0]).device->launch({w, w}, std::chrono::milliseconds(300), &kernel),
      ncclSuccess);
  std::string detail;
  EXPECT_EQ(kernel->wait(std::chrono::seconds(30), &detail), ncclTimeout);
  EXPECT_NE(detail.find("recv SIMPLE work 1"), std::string::npos) << detail;
  EXPECT_NE(detail.find("an earlier work on its connection failed"), std::string::npos) << detail;
}

TEST_F(CudaPeerFailures, DestroyingThePeerStopsARunningKernel) {
  Scenario s(OnGpu::ranks());
  ASSERT_NO_FATAL_FAILURE(startRing(s));
  Rank& receiver = s.receiverOf(*s.links()[0]);
  std::shared_ptr<DeviceCompletion> kernel;
  ASSERT_EQ(receiver.device->launch({loneWork(s, false, 1000)}, std::chrono::minutes(5), &kernel),
            ncclSuccess);
  std::string detail;
  EXPECT_EQ(kernel->wait(std::chrono::milliseconds(200), &detail), ncclTimeout);
  EXPECT_NE(detail.find("still running"), std::string::npos) << detail;
  EXPECT_NE(detail.find("waiting for tail from the proxy"), std::string::npos) << detail;
  auto start = Clock::now();
  receiver.device.reset();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(kernel->wait(std::chrono::seconds(5), &detail), ncclSuccess);
  EXPECT_NE(detail.find("stopped while waiting for tail"), std::string::npos) << detail;
}

TEST_F(CudaPeerFailures, HostMemoryThatTheGpuCannotReachIsRefused) {
  int pageable = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0), cudaSuccess);
  if (pageable) GTEST_SKIP() << "this GPU reaches pageable host memory (HMM/ATS)";
  Scenario s;  // host memory, host peers
  std::string why;
  ASSERT_EQ(s.start(testnetPath(), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(1, false, false, &why), ncclSuccess) << why;
  std::unique_ptr<CudaDevicePeer> peer;
  ASSERT_EQ(CudaDevicePeer::create(0, &peer, &why), ncclSuccess) << why;
  Link& l = *s.links()[0];
  DeviceWork w{.connection = l.recv->device(),
               .protocol = Protocol::Simple,
               .sliceSteps = 1,
               .chunkSteps = 1,
               .nbytes = 100,
               .sliceCapacity = 1000,
               .seed = 1};
  std::shared_ptr<DeviceCompletion> kernel;
  EXPECT_EQ(peer->launch({w}, std::chrono::seconds(1), &kernel), ncclInvalidUsage);
}

TEST_F(CudaPeerFailures, MalformedWorksAreRejected) {
  std::unique_ptr<CudaDevicePeer> peer;
  std::string why;
  ASSERT_EQ(CudaDevicePeer::create(0, &peer, &why), ncclSuccess) << why;
  std::shared_ptr<DeviceCompletion> kernel;
  EXPECT_EQ(peer->launch({DeviceWork{}}, std::chrono::seconds(1), &kernel), ncclInvalidArgument);
  ASSERT_EQ(peer->launch({}, std::chrono::seconds(1), &kernel), ncclSuccess);
  EXPECT_EQ(kernel->wait(std::chrono::seconds(1), nullptr), ncclSuccess);
}

TEST(CudaPeerWithoutGpu, CreationSaysWhy) {
  if (OnGpu::whyNoGpu().empty()) GTEST_SKIP() << "a GPU is present";
  std::unique_ptr<CudaDevicePeer> peer;
  std::shared_ptr<CudaMemoryProvider> memory;
  std::string why;
  EXPECT_NE(CudaDevicePeer::create(0, &peer, &why), ncclSuccess);
  EXPECT_FALSE(why.empty());
  why.clear();
  EXPECT_NE(CudaMemoryProvider::create(0, &memory, &why), ncclSuccess);
  EXPECT_FALSE(why.empty());
  RankOptions options;
  EXPECT_NE(useCudaDevice(0, &options, &why), ncclSuccess);
  std::cout << "without a GPU: " << why << "\n";
}

}  // namespace
}  // namespace ncclnet::transport::testing
