// SPDX-License-Identifier: Apache-2.0
// softverbs: MRs over CUDA device memory. Every operation that touches MR
// bytes (WRITE landing, READ source and target, SEND into a receive) works
// on device memory, with ibv_reg_mr and with ibv_reg_dmabuf_mr; the DMA-BUF
// probe answers honestly. Without a GPU only the probe runs; the rest skips
// with the driver's reason.
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fixture.hpp"
#include "ncclnet/cuda_driver.hpp"

namespace softverbs::testing {
namespace {

namespace cu = ncclnet::cuda;

using GpuProbeTest = VerbsTest;

// NCCL's probe: a registration with fd -1 fails with EOPNOTSUPP (or
// EPROTONOSUPPORT) when DMA-BUF cannot work, with EBADF when it can. Like
// NCCL, the process loads the CUDA driver before it asks.
TEST_F(GpuProbeTest, DmaBufProbeAnswersHonestly) {
  const cu::Driver& driver = cu::Driver::get();
  errno = 0;
  EXPECT_EQ(ibv_reg_dmabuf_mr(pd_, 0, 0, 0, -1, 0), nullptr);
  int error = errno;
  if (driver.available()) {
    EXPECT_EQ(error, EBADF) << std::strerror(error);
  } else {
    EXPECT_EQ(error, EOPNOTSUPP) << std::strerror(error) << "; CUDA driver " << driver.whyNot();
  }
}

TEST_F(GpuProbeTest, HostMemoryRegistersAsBefore) {
  std::vector<char> host(8192);
  ibv_mr* mr = reg(host.data(), host.size());
  ASSERT_NE(mr, nullptr) << std::strerror(errno);
  EXPECT_EQ(mr->addr, host.data());
}

// A connected pair with a 256 KiB device buffer beside the host ones.
// Without a GPU the tests skip, unless NCCLNET_REQUIRE_GPU=1 (a GPU
// machine) makes that a failure.
class GpuTest : public PairTest {
 protected:
  static constexpr size_t kDevBytes = 256 * 1024;

  void SetUp() override {
    if (!driver_.available()) {
      const char* require = std::getenv("NCCLNET_REQUIRE_GPU");
      if (require != nullptr && std::string(require) == "1")
        FAIL() << "NCCLNET_REQUIRE_GPU=1, but the CUDA driver is " << driver_.whyNot();
      GTEST_SKIP() << "no GPU: CUDA driver " << driver_.whyNot();
    }
    PairTest::SetUp();
    if (HasFatalFailure()) return;
    std::string why;
    dev_ = cu::DeviceBuffer::allocate(driver_, 0, kDevBytes, &why);
    ASSERT_NE(dev_, nullptr) << why;
    ASSERT_TRUE(dev_->fill(0, &why)) << why;
    devMr_ = reg(dev_->data(), kDevBytes);
    ASSERT_NE(devMr_, nullptr) << std::strerror(errno);
  }
  void TearDown() override {
    PairTest::TearDown();  // deregisters before the memory goes
    dev_.reset();
  }

  uint64_t devAddr(size_t offset = 0) const {
    return reinterpret_cast<uintptr_t>(dev_->data()) + offset;
  }
  std::vector<char> download(size_t offset, size_t bytes) {
    std::vector<char> out(bytes);
    std::string why;
    EXPECT_TRUE(dev_->download(offset, out.data(), bytes, &why)) << why;
    return out;
  }
  static void pattern(char* p, size_t bytes, int seed) {
    for (size_t i = 0; i < bytes; i++) p[i] = static_cast<char>(i * 31 + seed);
  }
  void expectSuccess(ibv_cq* cq, ibv_wc_opcode opcode) {
    ibv_wc wc;
    ASSERT_TRUE(pollOne(cq, &wc));
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(wc.opcode, opcode);
  }

  const cu::Driver& driver_ = cu::Driver::get();
  std::unique_ptr<cu::DeviceBuffer> dev_;
  ibv_mr* devMr_ = nullptr;
};

TEST_F(GpuTest, WriteLandsInDeviceMemory) {
  pattern(bufA_.data(), kBytes, 1);
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), kBytes, mrA_->lkey, devAddr(4096),
                      devMr_->rkey, 1),
            0);
  expectSuccess(cqA_, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(download(4096, kBytes), bufA_);
  EXPECT_EQ(download(0, 4096), std::vector<char>(4096, 0));  // nothing before it
}

TEST_F(GpuTest, WriteFromDeviceMemory) {
  std::vector<char> in(kBytes);
  pattern(in.data(), kBytes, 2);
  std::string why;
  ASSERT_TRUE(dev_->upload(0, in.data(), kBytes, &why)) << why;
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_WRITE, dev_->data(), kBytes, devMr_->lkey, addrB(), mrB_->rkey, 1),
      0);
  expectSuccess(cqA_, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(bufB_, in);
}

TEST_F(GpuTest, ReadFromDeviceMemoryIntoHost) {
  std::vector<char> in(4096);
  pattern(in.data(), in.size(), 3);
  std::string why;
  ASSERT_TRUE(dev_->upload(100, in.data(), in.size(), &why)) << why;
  ibv_sge sge{reinterpret_cast<uintptr_t>(bufA_.data()), 4096, mrA_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 5;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = devAddr(100);
  wr.wr.rdma.rkey = devMr_->rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(a_, &wr, &bad), 0);
  expectSuccess(cqA_, IBV_WC_RDMA_READ);
  EXPECT_EQ(std::vector<char>(bufA_.begin(), bufA_.begin() + 4096), in);
}

TEST_F(GpuTest, ReadFromHostIntoDeviceMemory) {
  pattern(bufB_.data(), kBytes, 4);
  ibv_sge sge{devAddr(8), 1000, devMr_->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = addrB();
  wr.wr.rdma.rkey = mrB_->rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(a_, &wr, &bad), 0);
  expectSuccess(cqA_, IBV_WC_RDMA_READ);
  EXPECT_EQ(download(8, 1000), std::vector<char>(bufB_.begin(), bufB_.begin() + 1000));
}

TEST_F(GpuTest, SendLandsInADeviceReceive) {
  pattern(bufA_.data(), 3000, 5);
  ASSERT_EQ(postRecv(b_, dev_->data(), 4096, devMr_->lkey, 11), 0);
  ASSERT_EQ(postWrite(a_, IBV_WR_SEND_WITH_IMM, bufA_.data(), 3000, mrA_->lkey, 0, 0, 22,
                      IBV_SEND_SIGNALED, htonl(7)),
            0);
  expectSuccess(cqB_, IBV_WC_RECV);
  expectSuccess(cqA_, IBV_WC_SEND);
  EXPECT_EQ(download(0, 3000), std::vector<char>(bufA_.begin(), bufA_.begin() + 3000));
}

TEST_F(GpuTest, InlineDataLandsInDeviceMemory) {
  std::memcpy(bufA_.data(), "inline bytes", 13);
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 13, 0, devAddr(64), devMr_->rkey, 1,
                      IBV_SEND_SIGNALED | IBV_SEND_INLINE),
            0);
  expectSuccess(cqA_, IBV_WC_RDMA_WRITE);
  std::vector<char> out = download(64, 13);
  EXPECT_STREQ(out.data(), "inline bytes");
}

// The CPU reads inline data at post time, as every provider does: device
// memory cannot be its source.
TEST_F(GpuTest, InlineDataFromDeviceMemoryIsRefused) {
  EXPECT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, dev_->data(), 16, 0, addrB(), mrB_->rkey, 1,
                      IBV_SEND_SIGNALED | IBV_SEND_INLINE),
            EINVAL);
}

TEST_F(GpuTest, CopiesLeaveTheThreadsContextAlone) {
  ASSERT_EQ(driver_.ctxSetCurrent(nullptr), cu::kSuccess);
  pattern(bufA_.data(), 4096, 6);
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_WRITE, dev_->data(), 4096, devMr_->lkey, addrB(), mrB_->rkey, 1),
      0);
  expectSuccess(cqA_, IBV_WC_RDMA_WRITE);
  cu::Context current = dev_->context();
  ASSERT_EQ(driver_.ctxGetCurrent(&current), cu::kSuccess);
  EXPECT_EQ(current, nullptr);
}

// An application may free its memory and drop its last reference on the
// primary context before it deregisters (a failed conformance scenario
// unwinding does). Without a reference of the MR's own, the context goes
// with it, and the MR's copies and its deregistration use a dangling
// stream, which the driver may crash on. With one, the copies fail cleanly
// (as on an HCA whose peer memory was invalidated), and deregistering works.
TEST_F(GpuTest, DeregistrationAfterTheMemoryAndItsContextWereReleased) {
  // Only the buffer below may hold the primary context.
  ASSERT_EQ(ibv_dereg_mr(devMr_), 0);
  mrs_.erase(std::find(mrs_.begin(), mrs_.end(), devMr_));
  devMr_ = nullptr;
  dev_.reset();
  std::string why;
  auto dev = cu::DeviceBuffer::allocate(driver_, 0, kDevBytes, &why);
  ASSERT_NE(dev, nullptr) << why;
  std::vector<char> in(4096);
  pattern(in.data(), in.size(), 8);
  ASSERT_TRUE(dev->upload(0, in.data(), in.size(), &why)) << why;
  ibv_mr* mr = ibv_reg_mr(pd_, dev->data(), kDevBytes, kFullAccess);
  ASSERT_NE(mr, nullptr) << std::strerror(errno);
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, dev->data(), 4096, mr->lkey, addrB(), mrB_->rkey, 1),
            0);
  expectSuccess(cqA_, IBV_WC_RDMA_WRITE);  // the MR's stream has been used
  EXPECT_EQ(std::vector<char>(bufB_.begin(), bufB_.begin() + 4096), in);

  void* freed = dev->data();
  dev.reset();  // cuMemFree, then the application's last cuDevicePrimaryCtxRelease
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, freed, 4096, mr->lkey, addrB(), mrB_->rkey, 2), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);

  // Device memory allocated afterwards registers as before.
  dev_ = cu::DeviceBuffer::allocate(driver_, 0, kDevBytes, &why);
  ASSERT_NE(dev_, nullptr) << why;
  EXPECT_NE(reg(dev_->data(), kDevBytes), nullptr) << std::strerror(errno);
}

TEST_F(GpuTest, DmaBufRegistrationReachesTheMemory) {
  if (!driver_.dmaBufSupported(0)) GTEST_SKIP() << "device 0 cannot export DMA-BUF handles";
  std::string why;
  auto dev = cu::DeviceBuffer::allocate(driver_, 0, 2 << 20, &why);
  ASSERT_NE(dev, nullptr) << why;
  ASSERT_TRUE(dev->fill(0, &why)) << why;
  int fd = driver_.exportDmaBuf(dev->ptr(), dev->size(), &why);
  ASSERT_GE(fd, 0) << why;
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd_, 4096, 65536, dev->ptr() + 4096, fd, kFullAccess);
  int saved = errno;
  close(fd);  // as NCCL does, right after the call
  ASSERT_NE(mr, nullptr) << std::strerror(saved);
  mrs_.push_back(mr);
  pattern(bufA_.data(), 65536, 7);
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 65536, mrA_->lkey, dev->ptr() + 4096,
                      mr->rkey, 1),
            0);
  expectSuccess(cqA_, IBV_WC_RDMA_WRITE);
  std::vector<char> out(65536);
  ASSERT_TRUE(dev->download(4096, out.data(), out.size(), &why)) << why;
  EXPECT_EQ(out, std::vector<char>(bufA_.begin(), bufA_.begin() + 65536));
  ASSERT_EQ(ibv_dereg_mr(mr), 0);
  mrs_.pop_back();
}

TEST_F(GpuTest, DmaBufOverHostMemoryIsRefused) {
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  errno = 0;
  EXPECT_EQ(
      ibv_reg_dmabuf_mr(pd_, 0, 4096, reinterpret_cast<uintptr_t>(bufA_.data()), fd, kFullAccess),
      nullptr);
  EXPECT_EQ(errno, EINVAL);
  close(fd);
}

TEST_F(GpuTest, WithoutPeerMemoryRegMrRefusesDeviceMemory) {
  setenv("SOFTVERBS_PEERMEM", "0", 1);
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(pd_, dev_->data(), 4096, kFullAccess);
  int saved = errno;
  ibv_mr* host = reg(bufA_.data(), 4096);
  unsetenv("SOFTVERBS_PEERMEM");
  EXPECT_EQ(mr, nullptr);
  EXPECT_EQ(saved, EFAULT);
  EXPECT_NE(host, nullptr);
}

}  // namespace
}  // namespace softverbs::testing
