// SPDX-License-Identifier: Apache-2.0
// sdk-ib: what NCCL sees of the devices — filtering, order, properties,
// and the plugin on a host without a usable verbs library.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "ncclnet/cuda_driver.hpp"

namespace ncclnet::ib::testing {
namespace {

int deviceCount(Session& s) {
  int n = -1;
  EXPECT_EQ(s.net().devices(&n), ncclSuccess);
  return n;
}

std::string nameOf(Session& s, int dev) {
  ncclNetProperties_v12_t p;
  EXPECT_EQ(s.net().getProperties(dev, &p), ncclSuccess);
  return p.name ? p.name : "";
}

TEST(IbDevices, PropertiesAreHonest) {
  // The CUDA driver first, as in NCCL: softverbs offers GPU memory only to
  // a process that has it.
  const ncclnet::cuda::Driver& cuda = ncclnet::cuda::Driver::get();
  Session s(11);
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_EQ(deviceCount(s), 1);
  ncclNetProperties_v12_t p;
  ASSERT_EQ(s.net().getProperties(0, &p), ncclSuccess);
  EXPECT_STREQ(p.name, "softverbs0");
  EXPECT_EQ(p.pciPath, nullptr);  // a software device has no PCI function
  EXPECT_EQ(p.speed, 4 * 25000);  // 4X EDR
  EXPECT_EQ(p.port, 1);
  // GPU memory: DMA-BUF exactly when softverbs can reach the memory (a
  // CUDA driver and device here), and CUDA with it.
  EXPECT_TRUE(p.ptrSupport & NCCL_PTR_HOST);
  EXPECT_EQ((p.ptrSupport & NCCL_PTR_DMABUF) != 0, cuda.available()) << cuda.whyNot();
  EXPECT_TRUE(!(p.ptrSupport & NCCL_PTR_DMABUF) || (p.ptrSupport & NCCL_PTR_CUDA));
  EXPECT_EQ(p.regIsGlobal, 1);
  EXPECT_EQ(p.maxRecvs, 8);
  EXPECT_EQ(p.maxComms, 16384);  // the device's max_qp
  EXPECT_NE(p.guid, 0u);
  EXPECT_EQ(p.netDeviceType, NCCL_NET_DEVICE_HOST);
}

TEST(IbDevices, InactivePortsAreSkipped) {
  ScopedEnv env;
  env.set("SOFTVERBS_DEVICES", "3");
  env.set("SOFTVERBS_DOWN_DEVICES", "1");
  Session s(11);
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_EQ(deviceCount(s), 2);
  EXPECT_EQ(nameOf(s, 0), "softverbs0");
  EXPECT_EQ(nameOf(s, 1), "softverbs2");
}

TEST(IbDevices, HcaFilterExcludesAndSelects) {
  ScopedEnv env;
  env.set("SOFTVERBS_DEVICES", "3");
  {
    env.set("NCCL_IB_HCA", "^softverbs1");
    Session s(11);
    ASSERT_TRUE(s.ok()) << s.error();
    ASSERT_EQ(deviceCount(s), 2);
    EXPECT_EQ(nameOf(s, 1), "softverbs2");
  }
  {
    env.set("NCCL_IB_HCA", "softverbs2:1");
    Session s(11);
    ASSERT_EQ(deviceCount(s), 1);
    EXPECT_EQ(nameOf(s, 0), "softverbs2");
  }
}

// NCCL's own IB transport succeeds with no device and lets NCCL skip it;
// sdk-ib's init fails instead (docs/abi.md), with one line saying why.
TEST(IbDevices, InitFailsWhenTheHcaFilterLeavesNothing) {
  for (const char* filter : {"nosuch", "=softverbs"}) {  // '=': exact, no device is named that
    ScopedEnv env;
    env.set("NCCL_IB_HCA", filter);
    size_t mark = logMark();
    Session s(11);
    EXPECT_FALSE(s.ok()) << filter;
    std::vector<std::string> warnings = warningsSince(mark);
    ASSERT_EQ(warnings.size(), 1u) << filter;
    EXPECT_NE(warnings[0].find("no usable device"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("softverbs0:1(NCCL_IB_HCA)"), std::string::npos) << warnings[0];
  }
}

TEST(IbDevices, OrderedByPciPath) {
  // A fake sysfs where softverbs1 sits on an earlier PCI function.
  char dir[] = "/tmp/ncclnet::ib-sysfs-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string root = dir;
  std::string pci = root + "/devices/pci0000:00";
  ASSERT_EQ(system(("mkdir -p " + pci + "/0000:00:01.0 " + pci + "/0000:00:02.0 " + root +
                    "/class/infiniband/softverbs0 " + root + "/class/infiniband/softverbs1")
                       .c_str()),
            0);
  ASSERT_EQ(symlink((pci + "/0000:00:02.0").c_str(),
                    (root + "/class/infiniband/softverbs0/device").c_str()),
            0);
  ASSERT_EQ(symlink((pci + "/0000:00:01.0").c_str(),
                    (root + "/class/infiniband/softverbs1/device").c_str()),
            0);
  {
    ScopedEnv env;
    env.set("SOFTVERBS_DEVICES", "2");
    env.set("SOFTVERBS_SYSFS", root);
    Session s(11);
    ASSERT_TRUE(s.ok()) << s.error();
    ASSERT_EQ(deviceCount(s), 2);
    ncclNetProperties_v12_t p;
    ASSERT_EQ(s.net().getProperties(0, &p), ncclSuccess);
    EXPECT_STREQ(p.name, "softverbs1");
    ASSERT_NE(p.pciPath, nullptr);
    EXPECT_EQ(std::string(p.pciPath), pci + "/0000:00:01.0");
  }
  ASSERT_EQ(system(("rm -rf " + root).c_str()), 0);
}

TEST(IbDevices, MissingVerbsLibraryFailsInitWithOneLine) {
  ScopedEnv env;
  env.set("NCCL_IBVERBS_LIB", "/nonexistent/libibverbs.so.1");
  size_t mark = logMark();
  Session s(11);
  EXPECT_FALSE(s.ok()) << "the plugin loads, but init has nothing to offer";
  std::vector<std::string> warnings = warningsSince(mark);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("/nonexistent/libibverbs.so.1"), std::string::npos) << warnings[0];
}

TEST(IbDevices, OlderAbiSeesTheSameDevice) {
  Session s(8);
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_EQ(deviceCount(s), 1);
  EXPECT_EQ(nameOf(s, 0), "softverbs0");
}

}  // namespace
}  // namespace ncclnet::ib::testing
