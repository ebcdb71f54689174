// SPDX-License-Identifier: Apache-2.0
// sdk-ib: unit tests of the pieces — NCCL_IB_HCA, speeds, MTU, the MR
// cache, GID selection and the GPU-memory rule (the MR cache, GIDs and the
// DMA-BUF probe on softverbs, through IbvApi).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "config.hpp"
#include "devices.hpp"
#include "gpu_memory.hpp"
#include "ibv_api.hpp"
#include "mr_cache.hpp"
#include "ncclnet/cuda_driver.hpp"
#include "test_files.hpp"

namespace ncclnet::ib {
namespace {

TEST(PortSpeedTest, WidthTimesLaneRate) {
  EXPECT_EQ(portSpeedMbps(2, 32), 100000);   // 4X EDR
  EXPECT_EQ(portSpeedMbps(2, 64), 200000);   // 4X HDR
  EXPECT_EQ(portSpeedMbps(2, 128), 400000);  // 4X NDR
  EXPECT_EQ(portSpeedMbps(1, 1), 2500);      // 1X SDR
  EXPECT_EQ(portSpeedMbps(16, 64), 100000);  // 2X HDR
  EXPECT_EQ(portSpeedMbps(3, 32), 0);        // unknown width
}

int gWarnings = 0;
void countWarnings(ncclDebugLogLevel level, unsigned long, const char*, int, const char*, ...) {
  if (level == NCCL_LOG_WARN) gWarnings++;
}

TEST(ConfigTest, NcclDefaultsForTheFabricKnobs) {
  for (const char* name :
       {"NCCL_IB_PKEY", "NCCL_IB_USE_INLINE", "NCCL_IB_SPLIT_DATA_ON_QPS",
        "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_AR_THRESHOLD", "NCCL_IB_PCI_RELAXED_ORDERING"}) {
    unsetenv(name);
  }
  ncclnet::ParamTable params(ncclnet::Logger(countWarnings, "NET/sdk-ib"));
  Config c;
  ASSERT_EQ(Config::read(params, &c), ncclSuccess);
  EXPECT_EQ(c.pkeyIndex, 0);
  EXPECT_FALSE(c.useInline);
  EXPECT_FALSE(c.splitDataOnQps);
  EXPECT_EQ(c.adaptiveRouting, -2);
  EXPECT_EQ(c.arThreshold, 8192);
  EXPECT_EQ(c.relaxedOrdering, 2);
}

TEST(ConfigTest, MtuAcceptsBytesOrEnum) {
  ncclnet::ParamTable params(ncclnet::Logger(countWarnings, "NET/sdk-ib"));
  Config c;
  for (auto [given, expected] : {std::pair{"0", 0}, std::pair{"4096", int(IBV_MTU_4096)},
                                 std::pair{"3", int(IBV_MTU_1024)}}) {
    setenv("NCCL_IB_MTU", given, 1);
    ASSERT_EQ(Config::read(params, &c), ncclSuccess) << given;
    EXPECT_EQ(c.mtu, expected) << given;
  }
  setenv("NCCL_IB_MTU", "1500", 1);
  gWarnings = 0;
  EXPECT_EQ(Config::read(params, &c), ncclInvalidUsage);
  EXPECT_EQ(gWarnings, 1) << "one line says what NCCL_IB_MTU accepts";
  unsetenv("NCCL_IB_MTU");
}

TEST(DeviceRulesTest, AdaptiveRoutingDefaultsByLinkLayer) {
  EXPECT_TRUE(adaptiveRoutingFor(-2, IBV_LINK_LAYER_INFINIBAND));
  EXPECT_FALSE(adaptiveRoutingFor(-2, IBV_LINK_LAYER_ETHERNET));
  EXPECT_FALSE(adaptiveRoutingFor(0, IBV_LINK_LAYER_INFINIBAND));
  EXPECT_TRUE(adaptiveRoutingFor(1, IBV_LINK_LAYER_ETHERNET));
}

TEST(DeviceRulesTest, RelaxedOrderingNeedsRegMrIova2) {
  ncclnet::Logger log(countWarnings, "NET/sdk-ib");
  gWarnings = 0;
  EXPECT_FALSE(relaxedOrderingFor(0, true, "libibverbs.so.1", log));
  EXPECT_TRUE(relaxedOrderingFor(2, true, "libibverbs.so.1", log));
  EXPECT_FALSE(relaxedOrderingFor(2, false, "libibverbs.so.1", log));  // auto: quietly off
  EXPECT_TRUE(relaxedOrderingFor(1, true, "libibverbs.so.1", log));
  EXPECT_EQ(gWarnings, 0);
  EXPECT_FALSE(relaxedOrderingFor(1, false, "libibverbs.so.1", log));  // asked for: one line
  EXPECT_EQ(gWarnings, 1);
}

// softverbs opened through the plugin's own dlopen table.
class SoftverbsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(api_.load(ncclnet::ib::testing::softverbsLibrary(), &why)) << why;
    int n = 0;
    ibv_device** list = api_.getDeviceList(&n);
    ASSERT_GE(n, 1);
    ctx_ = api_.openDevice(list[0]);
    path_ = list[0]->ibdev_path;
    api_.freeDeviceList(list);
    ASSERT_NE(ctx_, nullptr);
    pd_ = api_.allocPd(ctx_);
    ASSERT_NE(pd_, nullptr);
    ASSERT_EQ(api_.queryPort(ctx_, 1, &port_), 0);
  }
  void TearDown() override {
    if (pd_ != nullptr) api_.deallocPd(pd_);
    if (ctx_ != nullptr) api_.closeDevice(ctx_);
  }
  int pick(const Config& config) {
    int index = -1;
    ibv_gid gid;
    std::string why;
    EXPECT_TRUE(selectGid(api_, config, ctx_, path_.c_str(), 1, port_, &index, &gid, &why)) << why;
    return index;
  }

  IbvApi api_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_port_attr port_{};
  std::string path_;
};

using MrCacheTest = SoftverbsTest;

TEST_F(MrCacheTest, SubRangesShareOneRegistration) {
  MrCache cache(api_, pd_);
  std::vector<char> buf(1 << 20);
  std::string why;
  ibv_mr* whole = cache.acquire(buf.data(), buf.size(), nullptr, &why);
  ASSERT_NE(whole, nullptr) << why;
  ibv_mr* part = cache.acquire(buf.data() + 4096 * 3 + 17, 100, nullptr, &why);
  EXPECT_EQ(part, whole);
  EXPECT_EQ(cache.refsOf(whole), 2);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_TRUE(cache.release(part));
  EXPECT_TRUE(cache.release(whole));
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_FALSE(cache.release(whole));
}

TEST_F(MrCacheTest, RegistrationsArePageAligned) {
  MrCache cache(api_, pd_);
  std::vector<char> buf(3 * 4096);
  std::string why;
  ibv_mr* mr = cache.acquire(buf.data() + 10, 50, nullptr, &why);
  ASSERT_NE(mr, nullptr);
  long page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mr->addr) % page, 0u);
  EXPECT_EQ(mr->length % page, 0u);
  EXPECT_LE(reinterpret_cast<uintptr_t>(mr->addr), reinterpret_cast<uintptr_t>(buf.data() + 10));
  EXPECT_TRUE(cache.release(mr));
}

TEST_F(MrCacheTest, DisjointBuffersGetTheirOwn) {
  MrCache cache(api_, pd_);
  std::vector<char> a(1 << 16);
  std::vector<char> b(1 << 16);
  std::string why;
  ibv_mr* ma = cache.acquire(a.data(), a.size(), nullptr, &why);
  ibv_mr* mb = cache.acquire(b.data(), b.size(), nullptr, &why);
  EXPECT_NE(ma, mb);
  EXPECT_EQ(cache.entries(), 2u);
  cache.release(ma);
  cache.release(mb);
}

// softverbs refuses IBV_ACCESS_RELAXED_ORDERING through the IBVERBS_1.1
// ibv_reg_mr (verbs.h never sends optional flags there): the cache must
// register through ibv_reg_mr_iova2.
TEST_F(MrCacheTest, RelaxedOrderingRegistersThroughIova2) {
  ASSERT_NE(api_.regMrIova2, nullptr);
  MrCache cache(api_, pd_, true);
  EXPECT_TRUE(cache.relaxedOrdering());
  std::vector<char> buf(1 << 16);
  std::string why;
  ibv_mr* mr = cache.acquire(buf.data(), buf.size(), nullptr, &why);
  ASSERT_NE(mr, nullptr) << why;
  EXPECT_TRUE(cache.release(mr));
}

// A dma-buf registration through the cache. Where softverbs cannot reach
// GPU memory (no CUDA driver), ibv_reg_dmabuf_mr fails and the reason
// comes back; nothing is cached.
TEST_F(MrCacheTest, DmaBufFailureIsExplainedAndNotCached) {
  if (probeDmaBuf(api_, pd_)) GTEST_SKIP() << "softverbs can register dma-bufs here (a GPU)";
  MrCache cache(api_, pd_);
  std::vector<char> buf(8192);
  DmaBufRange range{0, 0};  // fd 0: valid, but nothing can be imported
  std::string why;
  EXPECT_EQ(cache.acquire(buf.data(), buf.size(), &range, &why), nullptr);
  EXPECT_NE(why.find("ibv_reg_dmabuf_mr failed"), std::string::npos) << why;
  EXPECT_EQ(cache.entries(), 0u);
}

using GpuRuleTest = SoftverbsTest;

// NCCL's probe, on softverbs: DMA-BUF works exactly when a CUDA driver and
// device are there for softverbs to reach the memory through.
TEST_F(GpuRuleTest, DmaBufProbeFollowsTheCudaDriver) {
  const ncclnet::cuda::Driver& driver = ncclnet::cuda::Driver::get();  // first, as NCCL does
  EXPECT_EQ(probeDmaBuf(api_, pd_), driver.available()) << "CUDA driver " << driver.whyNot();
}

TEST(GpuRule, CudaWithPeerMemoryOrDmaBuf) {
  EXPECT_EQ(ptrSupportFor(false, false), NCCL_PTR_HOST);
  EXPECT_EQ(ptrSupportFor(true, false), NCCL_PTR_HOST | NCCL_PTR_CUDA);
  EXPECT_EQ(ptrSupportFor(false, true), NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
  EXPECT_EQ(ptrSupportFor(true, true), NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
}

TEST(GpuRule, PeerMemoryModulesAreTheOnesNcclChecks) {
  char root[] = "/tmp/ncclnet::ib-sysfs-XXXXXX";
  ASSERT_NE(mkdtemp(root), nullptr);
  std::string base = root;
  EXPECT_FALSE(peerMemoryLoaded(base));
  ASSERT_EQ(system(("mkdir -p " + base + "/sys/module/nvidia_peermem").c_str()), 0);
  std::ofstream(base + "/sys/module/nvidia_peermem/version") << "1.0\n";
  EXPECT_TRUE(peerMemoryLoaded(base));
  ASSERT_EQ(system(("rm -rf " + base).c_str()), 0);
}

using GidTest = SoftverbsTest;

TEST_F(GidTest, DefaultIsIpv4RoceV2) {
  Config c = Config::defaults();
  c.addrFamily = AF_INET;
  EXPECT_EQ(pick(c), 3);
}

TEST_F(GidTest, FamilyAndVersionSteerTheChoice) {
  Config c = Config::defaults();
  c.addrFamily = AF_INET;
  c.roceVersion = 1;
  EXPECT_EQ(pick(c), 2);
  c.addrFamily = AF_INET6;
  c.roceVersion = 2;
  EXPECT_EQ(pick(c), 1);
}

TEST_F(GidTest, ExplicitIndexWins) {
  Config c = Config::defaults();
  c.addrFamily = AF_INET;
  c.gidIndex = 0;
  EXPECT_EQ(pick(c), 0);
  c.gidIndex = 9;
  int index = -1;
  ibv_gid gid;
  std::string why;
  EXPECT_FALSE(selectGid(api_, c, ctx_, path_.c_str(), 1, port_, &index, &gid, &why));
  EXPECT_NE(why.find("NCCL_IB_GID_INDEX"), std::string::npos);
}

TEST(IbvApiTest, MissingLibraryExplainsItself) {
  IbvApi api;
  std::string why;
  EXPECT_FALSE(api.load("/nonexistent/libibverbs.so.1", &why));
  EXPECT_NE(why.find("NCCL_IBVERBS_LIB"), std::string::npos);
}

}  // namespace
}  // namespace ncclnet::ib
