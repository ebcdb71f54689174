// SPDX-License-Identifier: Apache-2.0
// DMA-BUF registration, on the CPU: a memory provider that "exports" its
// stand-in device memory as memfds, and loopnet-dmabuf, which advertises
// NCCL_PTR_DMABUF. Checks NCCL's rule (GPU-direct buffers through
// regMrDmaBuf when plugin and provider allow, else regMr(NCCL_PTR_CUDA);
// host buffers always regMr), the offset handed over, and that every fd is
// closed right after registration.
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "scenario.hpp"

namespace ncclnet::transport::testing {
namespace {

constexpr const char* kFdName = "rt-dmabuf-export";

// Host memory for both kinds (like HostMemoryProvider); device buffers can
// be exported as a memfd the size of the page-aligned range around them.
class ExportingProvider final : public MemoryProvider {
 public:
  ncclResult_t allocHost(size_t size, Allocation* out) override {
    return host_.allocHost(size, out);
  }
  ncclResult_t allocDevice(size_t size, Allocation* out) override {
    return host_.allocDevice(size, out);
  }
  int devicePtrType() const override { return NCCL_PTR_CUDA; }
  bool canExportDmaBuf() const override { return true; }
  bool exportDmaBuf(const void* data, size_t size, int* fd, uint64_t* offset,
                    std::string* why) override {
    const uintptr_t page = 4096;
    uintptr_t begin = reinterpret_cast<uintptr_t>(data) / page * page;
    uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size + page - 1) / page * page;
    int f = memfd_create(kFdName, MFD_CLOEXEC);
    if (f < 0 || ftruncate(f, static_cast<off_t>(end - begin)) != 0) {
      if (f >= 0) close(f);
      *why = "memfd_create failed";
      return false;
    }
    *fd = f;
    *offset = reinterpret_cast<uintptr_t>(data) - begin;
    exports++;
    return true;
  }
  std::atomic<int> exports{0};

 private:
  HostMemoryProvider host_;
};

// Exported fds still open in this process.
int openExports() {
  int n = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* e = readdir(dir)) {
    char target[256] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t len = readlink(path.c_str(), target, sizeof(target) - 1);
    if (len > 0 && std::string(target).find(kFdName) != std::string::npos) n++;
  }
  closedir(dir);
  return n;
}

RankMaker withProvider(std::shared_ptr<ExportingProvider> provider) {
  return [provider](host::NetView& net, const TransportConfig& config, uint64_t commId, Rank* out,
                    std::string* why) {
    RankOptions options;
    options.transport.config = config;
    options.transport.commId = commId;
    options.transport.memory = provider;
    ncclResult_t res = makeRank(net, std::move(options), out);
    if (res != ncclSuccess) *why = "makeRank failed";
    return res;
  };
}

uint64_t total(const RegistrationCounts& r) {
  return r.host + r.device + r.dmaBuf;
}

TEST(DmaBufRegistration, GpuDirectBuffersGoThroughDmaBufAndFdsAreClosed) {
  auto provider = std::make_shared<ExportingProvider>();
  Scenario s(withProvider(provider));
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("dmabuf"), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, /*p2p=*/false, /*useGdr=*/true, &why), ncclSuccess) << why;
  // 4 links: each send end has LL in host memory and LL128, SIMPLE on the
  // device; each receive end has all three on the device.
  EXPECT_EQ(s.net().regMrDmaBufs.load(), 4 * 2 + 4 * 3);
  EXPECT_EQ(s.net().regMrs.load(), 4);
  EXPECT_EQ(provider->exports.load(), 4 * 2 + 4 * 3);
  EXPECT_EQ(openExports(), 0) << "an exported fd stayed open after regMrDmaBuf";
  RegistrationCounts r0 = s.rank(0).transport->registrations();
  RegistrationCounts r1 = s.rank(1).transport->registrations();
  EXPECT_EQ(r0.dmaBuf + r1.dmaBuf, 20u);
  EXPECT_EQ(r0.host + r1.host, 4u);
  EXPECT_EQ(r0.device + r1.device, 0u);
  ASSERT_EQ(s.randomRounds(4, 100000, RoundOptions{}, 21, &why), ncclSuccess) << why;
  ASSERT_EQ(s.randomRounds(4, 50000, RoundOptions{.protocol = Protocol::LL128}, 22, &why),
            ncclSuccess)
      << why;
}

TEST(DmaBufRegistration, SharedPoolIsExportedPerConnection) {
  auto provider = std::make_shared<ExportingProvider>();
  Scenario s(withProvider(provider));
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("dmabuf"), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(2, /*p2p=*/true, /*useGdr=*/true, &why), ncclSuccess) << why;
  // SIMPLE only (the pool), once per connection end.
  EXPECT_EQ(s.net().regMrDmaBufs.load(), 8);
  EXPECT_EQ(s.net().regMrs.load(), 0);
  EXPECT_EQ(openExports(), 0);
  ASSERT_EQ(s.randomRounds(6, 60000, RoundOptions{}, 23, &why), ncclSuccess) << why;
}

TEST(DmaBufRegistration, RegMrWhenDmaBufDisabled) {
  auto provider = std::make_shared<ExportingProvider>();
  TransportConfig c = TransportConfig::shrunk();
  c.dmaBufEnable = false;  // NCCL_DMABUF_ENABLE=0
  Scenario s(withProvider(provider));
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("dmabuf"), 2, c, &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(1, false, true, &why), ncclSuccess) << why;
  EXPECT_EQ(s.net().regMrDmaBufs.load(), 0);
  EXPECT_EQ(provider->exports.load(), 0);
  RegistrationCounts r = s.rank(0).transport->registrations();
  EXPECT_EQ(r.dmaBuf, 0u);
  EXPECT_GT(r.device, 0u);
}

TEST(DmaBufRegistration, RegMrWhenThePluginDoesNotAdvertiseDmaBuf) {
  auto provider = std::make_shared<ExportingProvider>();
  Scenario s(withProvider(provider));
  std::string why;
  ASSERT_EQ(s.start(loopnetPath(""), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(1, false, true, &why), ncclSuccess) << why;
  EXPECT_EQ(provider->exports.load(), 0);
  EXPECT_EQ(s.rank(0).transport->registrations().dmaBuf, 0u);
  EXPECT_EQ(
      total(s.rank(0).transport->registrations()) + total(s.rank(1).transport->registrations()),
      static_cast<uint64_t>(s.net().regMrs.load()));
}

TEST(DmaBufRegistration, HostBuffersNeverUseDmaBuf) {
  auto provider = std::make_shared<ExportingProvider>();
  Scenario s(withProvider(provider));
  std::string why;
  ASSERT_EQ(s.start(loopnetPath("dmabuf"), 2, TransportConfig::shrunk(), &why), ncclSuccess) << why;
  ASSERT_EQ(s.ring(1, false, /*useGdr=*/false, &why), ncclSuccess) << why;
  EXPECT_EQ(s.net().regMrDmaBufs.load(), 0);
  RegistrationCounts r = s.rank(0).transport->registrations();
  EXPECT_EQ(r.dmaBuf + r.device, 0u);
  EXPECT_EQ(r.host, 6u);  // a send and a receive end, three protocols each
}

}  // namespace
}  // namespace ncclnet::transport::testing
