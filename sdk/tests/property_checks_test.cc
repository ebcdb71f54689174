// SPDX-License-Identifier: Apache-2.0
// The property rules shared by ncclnet-info and ncclnet-conformance, in
// particular where the two used to disagree (each decided from NCCL's source).
#include "ncclnet/host/property_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace ncclnet::host {
namespace {

ncclNetProperties_v12_t goodDevice() {
  ncclNetProperties_v12_t p{};
  p.name = const_cast<char*>("nic0");
  p.pciPath = nullptr;
  p.ptrSupport = NCCL_PTR_HOST;
  p.speed = 100000;
  p.latency = 0;
  p.maxComms = 65536;
  p.maxRecvs = 1;
  p.netDeviceType = NCCL_NET_DEVICE_HOST;
  p.netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  p.maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
  p.maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
  p.vProps.ndevs = 1;
  p.vProps.devs[0] = 0;
  p.maxMultiRequestSize = 1;
  p.railId = NCCL_NET_ID_UNDEF;
  p.planeId = NCCL_NET_ID_UNDEF;
  return p;
}

constexpr PluginShape kV12{12, 1, false};

std::vector<PropertyRule> rulesOf(const std::vector<PropertyFinding>& findings) {
  std::vector<PropertyRule> rules;
  for (const PropertyFinding& f : findings) rules.push_back(f.rule);
  return rules;
}

using Rules = std::vector<PropertyRule>;

TEST(PropertyChecks, AGoodDeviceHasNoFindings) {
  EXPECT_TRUE(checkDeviceProperties(kV12, 0, goodDevice()).empty());
}

TEST(PropertyChecks, HostDeviceOfAnyVersionIsAccepted) {
  // src/plugin/net.cc ncclNetCheckDeviceVersion ignores a HOST device's version.
  ncclNetProperties_v12_t p = goodDevice();
  p.netDeviceVersion = 0;
  EXPECT_TRUE(checkDeviceProperties(kV12, 0, p).empty());
}

TEST(PropertyChecks, UnpackNeedsVersion7AndUnknownTypesAreRefused) {
  ncclNetProperties_v12_t p = goodDevice();
  p.netDeviceType = NCCL_NET_DEVICE_UNPACK;
  p.netDeviceVersion = 6;
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::DeviceType});
  p.netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
  EXPECT_TRUE(checkDeviceProperties(kV12, 0, p).empty());
  const int unknownType = 5;  // stored as a plugin would, not through the enum
  std::memcpy(&p.netDeviceType, &unknownType, sizeof(unknownType));
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::DeviceType});
  EXPECT_TRUE(checkDeviceProperties(PluginShape{6, 1, false}, 0, p).empty())
      << "v6 tables carry no device type";
}

TEST(PropertyChecks, DmabufWithoutCudaIsCoherentWithRegMrDmaBuf) {
  // src/graph/topo.cc ncclTopoPopulateNics: GPUDirect from either bit.
  ncclNetProperties_v12_t p = goodDevice();
  p.ptrSupport = NCCL_PTR_HOST | NCCL_PTR_DMABUF;
  p.pciPath = const_cast<char*>("/sys/devices");
  EXPECT_TRUE(checkDeviceProperties(PluginShape{12, 1, true}, 0, p).empty());
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::PtrSupport})
      << "without regMrDmaBuf";
}

TEST(PropertyChecks, PtrSupportNeedsHostAndKnownBits) {
  ncclNetProperties_v12_t p = goodDevice();
  p.ptrSupport = 0x10;
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)),
            (Rules{PropertyRule::PtrSupport, PropertyRule::PtrSupport}));
}

TEST(PropertyChecks, GpuMemoryWithoutPciPathIsAdvice) {
  ncclNetProperties_v12_t p = goodDevice();
  p.ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA;
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::GdrPlacement});
}

// Real NCCL 2.28.9 on either side (scripts/gpu/thresholds.sh): -3 and -2.9
// ran every op; a Ring/LL all-reduce failed at -9 over 2 nodes and at -7
// over 4, as the model predicts; NaN and infinity failed every job.
TEST(PropertyChecks, LatencyFailsWhereNcclsTunerDoes) {
  ncclNetProperties_v12_t p = goodDevice();
  for (float bad : {-4.0f, -4.5f, -1000.0f, INFINITY, -INFINITY, NAN}) {
    p.latency = bad;
    EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::Latency}) << bad;
  }
  for (float tolerated : {-0.5f, -1.0f, -3.9f}) {
    p.latency = tolerated;
    EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::Tolerated})
        << tolerated;
  }
  for (float good : {0.0f, 2.5f, 1e6f}) {
    p.latency = good;
    EXPECT_TRUE(checkDeviceProperties(kV12, 0, p).empty()) << good;
  }
}

// NCCL up to 2.18.1 (v6 tables at most) leaves a NIC with maxComms 0 out of
// its graph; NCCL 2.28.9 ran every op with 0 and -1.
TEST(PropertyChecks, MaxCommsBelowOneBreaksOnlyThroughV6) {
  ncclNetProperties_v12_t p = goodDevice();
  p.maxComms = 0;
  PluginShape v6 = kV12;
  v6.version = 6;
  EXPECT_EQ(rulesOf(checkDeviceProperties(v6, 0, p)), Rules{PropertyRule::MaxComms});
  PluginShape v7 = kV12;
  v7.version = 7;
  EXPECT_EQ(rulesOf(checkDeviceProperties(v7, 0, p)), Rules{PropertyRule::Tolerated});
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::Tolerated});
}

TEST(PropertyChecks, PciPathIsADirectoryUnderSys) {
  ncclNetProperties_v12_t p = goodDevice();
  for (const char* bad : {"/nonexistent/0000:00:00.0", "/proc/self/status", "/tmp"}) {
    p.pciPath = const_cast<char*>(bad);
    EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::PciPath}) << bad;
  }
  p.pciPath = const_cast<char*>("/sys/devices");
  EXPECT_TRUE(checkDeviceProperties(kV12, 0, p).empty());
}

TEST(PropertyChecks, NamesAreNonEmptyAndUnique) {
  ncclNetProperties_v12_t p = goodDevice();
  p.name = const_cast<char*>("");
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::Name});
  p.name = nullptr;
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)), Rules{PropertyRule::Name});
  std::vector<PropertyFinding> dup = checkDeviceNames({"a", "b", nullptr, "a"});
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_EQ(dup[0].device, 3);
  EXPECT_NE(dup[0].message.find("also the name of device 0"), std::string::npos);
}

TEST(PropertyChecks, FieldsAreCheckedOnlyFromTheirAbiVersion) {
  ncclNetProperties_v12_t p = goodDevice();
  p.maxP2pBytes = 0;
  p.maxMultiRequestSize = 0;
  p.railId = -5;
  EXPECT_TRUE(checkDeviceProperties(PluginShape{8, 1, false}, 0, p).empty());
  EXPECT_EQ(rulesOf(checkDeviceProperties(kV12, 0, p)),
            (Rules{PropertyRule::MaxBytes, PropertyRule::NewerFields, PropertyRule::NewerFields}));
  EXPECT_EQ(propertySince("vDevs"), propertySince("vProps"));
}

// propertySince reads the structs of the ABI headers; the versions that
// added each field, written out (docs/abi.md's table of versions).
TEST(PropertyChecks, FieldsAreDatedByTheVersionThatAddedThem) {
  EXPECT_EQ(propertySince("name"), 6);
  EXPECT_EQ(propertySince("maxRecvs"), 6);
  EXPECT_EQ(propertySince("netDeviceType"), 7);
  EXPECT_EQ(propertySince("netDeviceVersion"), 7);
  EXPECT_EQ(propertySince("regIsGlobal"), 8);
  for (const char* field : {"forceFlush", "vProps", "vDevs", "maxP2pBytes", "maxCollBytes"}) {
    EXPECT_EQ(propertySince(field), 9) << field;
  }
  EXPECT_EQ(propertySince("maxMultiRequestSize"), 11);
  EXPECT_EQ(propertySince("railId"), 12);
  EXPECT_EQ(propertySince("planeId"), 12);
}

TEST(PropertyChecks, VirtualDevicesFitTheAbiWidth) {
  ncclNetProperties_v12_t p = goodDevice();
  p.vProps.ndevs = 5;
  for (int i = 0; i < 5; i++) p.vProps.devs[i] = i;
  EXPECT_TRUE(checkDeviceProperties(PluginShape{12, 5, false}, 0, p).empty());
  EXPECT_EQ(rulesOf(checkDeviceProperties(PluginShape{10, 5, false}, 0, p)),
            Rules{PropertyRule::VirtualDevices});
  p.vProps.ndevs = 1;
  p.vProps.devs[0] = 7;
  EXPECT_EQ(rulesOf(checkDeviceProperties(PluginShape{12, 5, false}, 0, p)),
            Rules{PropertyRule::VirtualDevices});
}

}  // namespace
}  // namespace ncclnet::host
