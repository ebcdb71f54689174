// SPDX-License-Identifier: Apache-2.0
// The CUDA driver loader: a host without a driver gets a clear "not
// available" and nothing else changes; with a driver and a device, the
// memory helpers round-trip bytes. GPU cases skip with the driver's reason.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ncclnet/cuda_driver.hpp"

namespace {

using ncclnet::cuda::DeviceBuffer;
using ncclnet::cuda::Driver;

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

TEST(CudaDriver, MissingLibraryIsNotAvailable) {
  Driver cu("libncclnet-test-no-such-driver.so.1");
  EXPECT_FALSE(cu.available());
  EXPECT_TRUE(startsWith(cu.whyNot(), "not available: cannot load libncclnet-test-no-such-driver"))
      << cu.whyNot();
  EXPECT_EQ(cu.deviceCount(), 0);
  int onTheStack = 0;
  EXPECT_FALSE(cu.isDeviceMemory(&onTheStack));
  EXPECT_FALSE(cu.dmaBufSupported(0));
  std::string why;
  EXPECT_EQ(cu.exportDmaBuf(0x100000, 4096, &why), -1);
  EXPECT_TRUE(startsWith(why, "not available: ")) << why;
  why.clear();
  EXPECT_EQ(DeviceBuffer::allocate(cu, 0, 4096, &why), nullptr);
  EXPECT_TRUE(startsWith(why, "not available: ")) << why;
}

TEST(CudaDriver, LibraryWithoutTheEntryPointsIsNotAvailable) {
  Driver cu("libc.so.6");
  EXPECT_FALSE(cu.available());
  EXPECT_TRUE(startsWith(cu.whyNot(), "not available: libc.so.6 lacks cuInit")) << cu.whyNot();
}

TEST(CudaDriver, ProcessDriverExplainsItsAbsence) {
  const Driver& cu = Driver::get();
  EXPECT_EQ(&cu, &Driver::get());  // one per process
  if (cu.available()) GTEST_SKIP() << "a CUDA driver and " << cu.deviceCount() << " device(s)";
  EXPECT_TRUE(startsWith(cu.whyNot(), "not available: ")) << cu.whyNot();
  EXPECT_EQ(cu.deviceCount(), 0);
  std::vector<char> host(64);
  EXPECT_FALSE(cu.isDeviceMemory(host.data()));
}

// The cases below need a driver and a device; elsewhere they skip, unless
// NCCLNET_REQUIRE_GPU=1 (a GPU machine) makes that a failure.
class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cu_.available()) return;
    const char* require = std::getenv("NCCLNET_REQUIRE_GPU");
    if (require != nullptr && std::string(require) == "1")
      FAIL() << "NCCLNET_REQUIRE_GPU=1, but the CUDA driver is " << cu_.whyNot();
    GTEST_SKIP() << "no GPU: CUDA driver " << cu_.whyNot();
  }
  std::unique_ptr<DeviceBuffer> allocate(size_t bytes) {
    std::string why;
    auto buf = DeviceBuffer::allocate(cu_, 0, bytes, &why);
    EXPECT_NE(buf, nullptr) << why;
    return buf;
  }
  const Driver& cu_ = Driver::get();
};

TEST_F(CudaDevice, CopiesAndFillRoundTrip) {
  constexpr size_t kBytes = (1 << 20) + 3;
  auto buf = allocate(kBytes);
  ASSERT_NE(buf, nullptr);
  std::vector<unsigned char> in(kBytes), out(kBytes);
  for (size_t i = 0; i < kBytes; i++) in[i] = static_cast<unsigned char>(i * 7 + 1);
  std::string why;
  ASSERT_TRUE(buf->upload(0, in.data(), kBytes, &why)) << why;
  ASSERT_TRUE(buf->download(0, out.data(), kBytes, &why)) << why;
  EXPECT_EQ(in, out);
  ASSERT_TRUE(buf->fill(0xab, &why)) << why;
  ASSERT_TRUE(buf->download(5, out.data(), 100, &why)) << why;
  for (size_t i = 0; i < 100; i++) ASSERT_EQ(out[i], 0xab) << "byte " << i;
}

// What upload and fill wrote is there for a reader that does not wait for
// the legacy default stream: a non-blocking stream (softverbs' copies) or a
// NIC. cuMemcpyHtoD from pageable memory returns before its DMA lands, and
// cuMemsetD8 before it runs; on an H200 a 64 KiB upload read back at once
// on a non-blocking stream came back stale nearly every time.
TEST_F(CudaDevice, UploadAndFillAreDoneForOtherStreams) {
  constexpr size_t kBytes = 65536;
  constexpr size_t kOffset = 8193;  // where the failing H200 message sat
  constexpr size_t kSize = kBytes + 16384;
  auto buf = allocate(kSize);
  ASSERT_NE(buf, nullptr);
  ncclnet::cuda::ScopedContext scope(cu_, buf->context());
  ASSERT_TRUE(scope.ok());
  ncclnet::cuda::Stream stream = nullptr;
  ASSERT_EQ(cu_.streamCreate(&stream, ncclnet::cuda::kStreamNonBlocking), ncclnet::cuda::kSuccess);
  auto readOnStream = [&](size_t offset, size_t bytes) {
    std::vector<unsigned char> out(bytes);
    EXPECT_EQ(cu_.memcpyDtoHAsync(out.data(), buf->ptr() + offset, bytes, stream),
              ncclnet::cuda::kSuccess);
    EXPECT_EQ(cu_.streamSynchronize(stream), ncclnet::cuda::kSuccess);
    return out;
  };
  std::string why;
  ASSERT_TRUE(buf->fill(0x5a, &why)) << why;
  EXPECT_EQ(readOnStream(0, kSize), std::vector<unsigned char>(kSize, 0x5a));
  for (int round = 0; round < 3; round++) {
    std::vector<unsigned char> in(kBytes);
    for (size_t i = 0; i < kBytes; i++) in[i] = static_cast<unsigned char>(i * 131 + round * 7 + 1);
    ASSERT_TRUE(buf->upload(kOffset, in.data(), kBytes, &why)) << why;
    EXPECT_EQ(readOnStream(kOffset, kBytes), in) << "round " << round;
  }
  EXPECT_EQ(cu_.streamDestroy(stream), ncclnet::cuda::kSuccess);
}

TEST_F(CudaDevice, CopiesOutsideTheBufferFail) {
  auto buf = allocate(4096);
  ASSERT_NE(buf, nullptr);
  char byte = 0;
  std::string why;
  EXPECT_FALSE(buf->upload(4096, &byte, 1, &why));
  EXPECT_NE(why.find("outside"), std::string::npos) << why;
}

TEST_F(CudaDevice, PointerAttributesTellDeviceFromHost) {
  auto buf = allocate(1 << 16);
  ASSERT_NE(buf, nullptr);
  ncclnet::cuda::Context owner = nullptr;
  int ordinal = -1;
  EXPECT_TRUE(cu_.isDeviceMemory(static_cast<char*>(buf->data()) + 100, &owner, &ordinal));
  EXPECT_EQ(owner, buf->context());
  EXPECT_EQ(ordinal, 0);
  std::vector<char> host(4096);
  EXPECT_FALSE(cu_.isDeviceMemory(host.data()));
}

TEST_F(CudaDevice, ScopedContextPutsBackTheCallersContext) {
  auto buf = allocate(4096);
  ASSERT_NE(buf, nullptr);
  ASSERT_EQ(cu_.ctxSetCurrent(nullptr), ncclnet::cuda::kSuccess);
  {
    ncclnet::cuda::ScopedContext scope(cu_, buf->context());
    ASSERT_TRUE(scope.ok());
    ncclnet::cuda::Context current = nullptr;
    ASSERT_EQ(cu_.ctxGetCurrent(&current), ncclnet::cuda::kSuccess);
    EXPECT_EQ(current, buf->context());
  }
  ncclnet::cuda::Context after = buf->context();
  ASSERT_EQ(cu_.ctxGetCurrent(&after), ncclnet::cuda::kSuccess);
  EXPECT_EQ(after, nullptr);
}

TEST_F(CudaDevice, DmaBufExportGivesAFileDescriptor) {
  if (!cu_.dmaBufSupported(0)) GTEST_SKIP() << "device 0 cannot export DMA-BUF handles";
  constexpr size_t kBytes = 2 << 20;
  auto buf = allocate(kBytes);
  ASSERT_NE(buf, nullptr);
  std::string why;
  int fd = cu_.exportDmaBuf(buf->ptr(), kBytes, &why);
  ASSERT_GE(fd, 0) << why;
  struct stat st;
  EXPECT_EQ(fstat(fd, &st), 0);
  close(fd);
}

TEST_F(CudaDevice, ForkedChildIsToldWhy) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const Driver& cu = Driver::get();
    bool ok = !cu.available() && cu.whyNot().find("fork()") != std::string::npos;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#ifdef NCCLNET_CUDA_STUB
// The toolkit's stub libcuda exports every entry point (so every name the
// loader binds is right) but has no device behind it. Last: its soname is
// libcuda.so.1, and a process that loaded it finds it under that name.
TEST(CudaDriver, StubDriverBindsEverythingButHasNoDevice) {
  if (access(NCCLNET_CUDA_STUB, R_OK) != 0) GTEST_SKIP() << NCCLNET_CUDA_STUB " is not here";
  Driver cu(NCCLNET_CUDA_STUB);
  EXPECT_FALSE(cu.available());
  EXPECT_TRUE(startsWith(cu.whyNot(), "not available: cuInit failed: ")) << cu.whyNot();
}
#endif

}  // namespace
