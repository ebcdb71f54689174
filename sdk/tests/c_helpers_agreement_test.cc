// SPDX-License-Identifier: Apache-2.0
// The C helpers (<ncclnet/c/plugin_helpers.h>) agree with the C++ export
// layer's own conversions (detail/properties.hpp, detail/exports.hpp) for every ABI
// version: same result, same reason, same fields.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "ncclnet/c/plugin_helpers.h"
#include "ncclnet/plugin.hpp"

namespace {

using ncclnet::detail::has_maxMultiRequestSize_v;
using ncclnet::detail::has_netDeviceType_v;
using ncclnet::detail::has_railId_v;
using ncclnet::detail::has_regIsGlobal_v;
using ncclnet::detail::has_vProps_v;

char kName[] = "nic";
char kPci[] = "/sys/devices/pci0000:00/0000:00:02.0";

// Every field of every version, checked one by one so a failure names it;
// then the whole struct byte by byte (both sides zero it first), which also
// catches a field this list would miss.
template <class Props>
void expectSameProps(const Props& c, const Props& cpp, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(c.name, cpp.name);
  EXPECT_EQ(c.pciPath, cpp.pciPath);
  EXPECT_EQ(c.guid, cpp.guid);
  EXPECT_EQ(c.ptrSupport, cpp.ptrSupport);
  EXPECT_EQ(c.speed, cpp.speed);
  EXPECT_EQ(c.port, cpp.port);
  EXPECT_EQ(c.latency, cpp.latency);
  EXPECT_EQ(c.maxComms, cpp.maxComms);
  EXPECT_EQ(c.maxRecvs, cpp.maxRecvs);
  if constexpr (has_netDeviceType_v<Props>) {
    EXPECT_EQ(c.netDeviceType, cpp.netDeviceType);
    EXPECT_EQ(c.netDeviceVersion, cpp.netDeviceVersion);
  }
  if constexpr (has_regIsGlobal_v<Props>) {
    EXPECT_EQ(c.regIsGlobal, cpp.regIsGlobal);
  }
  if constexpr (has_vProps_v<Props>) {
    EXPECT_EQ(c.forceFlush, cpp.forceFlush);
    EXPECT_EQ(c.vProps.ndevs, cpp.vProps.ndevs);
    for (size_t i = 0; i < sizeof(c.vProps.devs) / sizeof(int); i++) {
      EXPECT_EQ(c.vProps.devs[i], cpp.vProps.devs[i]) << "vProps.devs[" << i << "]";
    }
    EXPECT_EQ(c.maxP2pBytes, cpp.maxP2pBytes);
    EXPECT_EQ(c.maxCollBytes, cpp.maxCollBytes);
  }
  if constexpr (has_maxMultiRequestSize_v<Props>) {
    EXPECT_EQ(c.maxMultiRequestSize, cpp.maxMultiRequestSize);
  }
  if constexpr (has_railId_v<Props>) {
    EXPECT_EQ(c.railId, cpp.railId);
    EXPECT_EQ(c.planeId, cpp.planeId);
  }
  EXPECT_EQ(std::memcmp(&c, &cpp, sizeof(Props)), 0) << "bytes differ";
}

// v12 properties in which every field holds its own value.
ncclNetProperties_v12_t sampleV12(int ndevs, ncclNetDeviceType deviceType = NCCL_NET_DEVICE_HOST) {
  ncclNetProperties_v12_t p;
  std::memset(static_cast<void*>(&p), 0, sizeof(p));
  p.name = kName;
  p.pciPath = kPci;
  p.guid = 0x1122334455667788ull;
  p.ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA;
  p.regIsGlobal = 1;
  p.forceFlush = 1;
  p.speed = 400000;
  p.port = 2;
  p.latency = 1.5f;
  p.maxComms = 65536;
  p.maxRecvs = 8;
  p.netDeviceType = deviceType;
  p.netDeviceVersion = deviceType == NCCL_NET_DEVICE_HOST ? 0 : 7;
  p.vProps.ndevs = ndevs;
  for (int i = 0; i < NCCL_NET_MAX_DEVS_PER_NIC_V12; i++) p.vProps.devs[i] = 10 + i;
  p.maxP2pBytes = 3ull << 30;
  p.maxCollBytes = 5ull << 28;
  p.maxMultiRequestSize = 4;
  p.railId = 6;
  p.planeId = 1;
  return p;
}

template <class Props>
using DownHelper = ncclResult_t (*)(const ncclNetProperties_v12_t*, Props*, const char**);

template <class Props>
void expectDownAgrees(DownHelper<Props> helper, const ncclNetProperties_v12_t& in,
                      const std::string& where) {
  Props fromC;
  Props fromCpp;
  std::memset(static_cast<void*>(&fromC), 0xa5, sizeof(fromC));  // the helper must clear it
  const char* whyC = "";
  const char* whyCpp = "";
  ncclResult_t resC = helper(&in, &fromC, &whyC);
  ncclResult_t resCpp = ncclnet::detail::propertiesFromV12(in, &fromCpp, &whyCpp);
  ASSERT_EQ(resC, resCpp) << where;
  EXPECT_STREQ(whyC, whyCpp) << where;
  if (resCpp == ncclSuccess) expectSameProps(fromC, fromCpp, where);
}

template <class Props>
void expectDownAgreesForAll(DownHelper<Props> helper, const char* version) {
  for (int ndevs : {-1, 0, 1, 4, 5, 8}) {
    for (ncclNetDeviceType type : {NCCL_NET_DEVICE_HOST, NCCL_NET_DEVICE_UNPACK}) {
      expectDownAgrees(helper, sampleV12(ndevs, type),
                       std::string(version) + " ndevs " + std::to_string(ndevs) + " type " +
                           std::to_string(type));
    }
  }
}

TEST(CHelpers, PropertiesDownAgreeForEveryVersion) {
  expectDownAgreesForAll<ncclNetProperties_v6_t>(ncclnetPropertiesV12ToV6, "v6");
  expectDownAgreesForAll<ncclNetProperties_v7_t>(ncclnetPropertiesV12ToV7, "v7");
  expectDownAgreesForAll<ncclNetProperties_v8_t>(ncclnetPropertiesV12ToV8, "v8");
  expectDownAgreesForAll<ncclNetProperties_v9_t>(ncclnetPropertiesV12ToV9, "v9");
  expectDownAgreesForAll<ncclNetProperties_v10_t>(ncclnetPropertiesV12ToV10, "v10");
  expectDownAgreesForAll<ncclNetProperties_v11_t>(ncclnetPropertiesV12ToV11, "v11");
}

TEST(CHelpers, PropertiesDownRefuseWhatTheOlderStructCannotHold) {
  const char* why = "";
  const ncclNetProperties_v12_t unpack = sampleV12(1, NCCL_NET_DEVICE_UNPACK);
  ncclNetProperties_v6_t v6;
  EXPECT_EQ(ncclnetPropertiesV12ToV6(&unpack, &v6, &why), ncclInternalError);
  EXPECT_NE(std::string(why).find("netDeviceType"), std::string::npos) << why;
  const ncclNetProperties_v12_t fiveWide = sampleV12(5);
  const ncclNetProperties_v12_t fourWide = sampleV12(4);
  ncclNetProperties_v11_t v11;
  EXPECT_EQ(ncclnetPropertiesV12ToV11(&fiveWide, &v11, &why), ncclInternalError);
  EXPECT_NE(std::string(why).find("vProps.ndevs"), std::string::npos) << why;
  EXPECT_EQ(ncclnetPropertiesV12ToV11(&fourWide, &v11, &why), ncclSuccess);
  EXPECT_EQ(v11.vProps.ndevs, 4);
  EXPECT_EQ(v11.vProps.devs[3], 13);
}

// An older struct in which every field it has holds its own value.
template <class Props>
Props sampleOlder() {
  ncclNetProperties_v12_t v12 = sampleV12(3, NCCL_NET_DEVICE_UNPACK);
  Props p;
  const char* why = "";
  if constexpr (!has_netDeviceType_v<Props>) v12.netDeviceType = NCCL_NET_DEVICE_HOST;
  EXPECT_EQ(ncclnet::detail::propertiesFromV12(v12, &p, &why), ncclSuccess) << why;
  return p;
}

template <class Props>
using UpHelper = void (*)(const Props*, int, ncclNetProperties_v12_t*);

template <class Props>
void expectUpAgrees(UpHelper<Props> helper, const char* version) {
  const Props in = sampleOlder<Props>();
  ncclNetProperties_v12_t fromC;
  ncclNetProperties_v12_t fromCpp;
  std::memset(static_cast<void*>(&fromC), 0xa5, sizeof(fromC));
  helper(&in, 7, &fromC);
  ncclnet::detail::propertiesToV12(in, 7, &fromCpp);
  expectSameProps(fromC, fromCpp, version);
}

TEST(CHelpers, PropertiesUpAgreeForEveryVersion) {
  expectUpAgrees<ncclNetProperties_v6_t>(ncclnetPropertiesV6ToV12, "v6");
  expectUpAgrees<ncclNetProperties_v7_t>(ncclnetPropertiesV7ToV12, "v7");
  expectUpAgrees<ncclNetProperties_v8_t>(ncclnetPropertiesV8ToV12, "v8");
  expectUpAgrees<ncclNetProperties_v9_t>(ncclnetPropertiesV9ToV12, "v9");
  expectUpAgrees<ncclNetProperties_v10_t>(ncclnetPropertiesV10ToV12, "v10");
  expectUpAgrees<ncclNetProperties_v11_t>(ncclnetPropertiesV11ToV12, "v11");
}

// The defaults are what the SDK gives the fields a v6 plugin cannot report.
TEST(CHelpers, PropertiesInitIsTheSdksDefaults) {
  ncclNetProperties_v6_t empty;
  std::memset(static_cast<void*>(&empty), 0, sizeof(empty));
  ncclNetProperties_v12_t fromC;
  ncclNetProperties_v12_t fromCpp;
  ncclnetPropertiesInit(&fromC, 5);
  ncclnet::detail::propertiesToV12(empty, 5, &fromCpp);
  expectSameProps(fromC, fromCpp, "defaults");
  EXPECT_EQ(fromC.vProps.ndevs, 1);
  EXPECT_EQ(fromC.vProps.devs[0], 5);
  EXPECT_EQ(fromC.maxP2pBytes, NCCL_MAX_NET_SIZE);
  EXPECT_EQ(fromC.railId, NCCL_NET_ID_UNDEF);
}

template <class VProps>
VProps vPropsWith(int ndevs) {
  VProps v;
  std::memset(static_cast<void*>(&v), 0, sizeof(v));
  v.ndevs = ndevs;
  for (size_t i = 0; i < sizeof(v.devs) / sizeof(int); i++) v.devs[i] = 20 + static_cast<int>(i);
  return v;
}

template <class VProps>
void expectVPropsAgree(ncclResult_t (*up)(const VProps*, ncclNetVDeviceProps_v12_t*),
                       ncclResult_t (*down)(const ncclNetVDeviceProps_v12_t*, VProps*),
                       const char* version) {
  for (int ndevs : {-1, 0, 1, 4, 5, 8, 9}) {
    SCOPED_TRACE(std::string(version) + " ndevs " + std::to_string(ndevs));
    {
      const VProps older = vPropsWith<VProps>(ndevs);
      ncclNetVDeviceProps_v12_t c, cpp;
      ncclResult_t res = up(&older, &c);
      ASSERT_EQ(res, ncclnet::detail::vPropsToV12(older, &cpp));
      if (res == ncclSuccess) {
        EXPECT_EQ(std::memcmp(&c, &cpp, sizeof(c)), 0);
      }
    }
    if (ndevs <= NCCL_NET_MAX_DEVS_PER_NIC_V12) {
      const auto v12 = vPropsWith<ncclNetVDeviceProps_v12_t>(ndevs);
      VProps c, cpp;
      ncclResult_t res = down(&v12, &c);
      ASSERT_EQ(res, ncclnet::detail::vPropsFromV12(v12, &cpp));
      if (res == ncclSuccess) {
        EXPECT_EQ(std::memcmp(&c, &cpp, sizeof(c)), 0);
      }
    }
  }
}

TEST(CHelpers, VirtualDevicesAgreeForEveryVersion) {
  expectVPropsAgree<ncclNetVDeviceProps_v9_t>(ncclnetVDevicePropsV9ToV12,
                                              ncclnetVDevicePropsV12ToV9, "v9/v10");
  expectVPropsAgree<ncclNetVDeviceProps_v11_t>(ncclnetVDevicePropsV11ToV12,
                                               ncclnetVDevicePropsV12ToV11, "v11");
}

// The size helpers refuse exactly what the rows of every int-size version
// (detail/abi_versions.hpp) refuse, at the edge values of each limit.
TEST(CHelpers, SizesAgreeWithEveryIntSizeRow) {
  using namespace ncclnet::detail;
  const int ints[] = {INT_MIN, -1, 0, 1, 1 << 30, (1 << 30) + 1, INT_MAX};
  const size_t wides[] = {
      0, 1, size_t{1} << 30, (size_t{1} << 30) + 1, size_t{INT_MAX}, size_t{INT_MAX} + 1, SIZE_MAX};
  for (const AbiVersion& abi : kAbiVersions) {
    SCOPED_TRACE("v" + std::to_string(abi.version));
    if (abi.intMessageSizes) {
      for (int in : ints) {
        size_t out = 0;
        EXPECT_EQ(ncclnetWidenSize(in, &out) == ncclSuccess,
                  refuseIntSize(in, abi.maxMessageSize) == nullptr)
            << in;
      }
      for (size_t in : wides) {
        int out = 0;
        EXPECT_EQ(ncclnetNarrowSize(in, &out) == ncclSuccess, refuseMessageSize(abi, in) == nullptr)
            << in;
      }
      for (int n : {-1, 0, 1, 3, 64, 65}) {
        int in[65];
        for (int i = 0; i < 65; i++) in[i] = i * 1000;
        size_t c[65] = {}, cpp[65] = {};
        ncclResult_t res = ncclnetWidenSizes(n, in, c);
        EXPECT_EQ(res == ncclSuccess, widenRecvSizes(abi, n, in, cpp) == nullptr) << "n " << n;
        EXPECT_EQ(std::memcmp(c, cpp, sizeof(c)), 0) << "n " << n;
      }
      for (int bad : {-1, (1 << 30) + 1}) {
        int in[2] = {5, bad};
        size_t out[2];
        EXPECT_EQ(ncclnetWidenSizes(2, in, out), ncclInternalError) << bad;
        EXPECT_NE(widenRecvSizes(abi, 2, in, out), nullptr) << bad;
      }
      size_t out[1];
      EXPECT_EQ(ncclnetWidenSizes(1, nullptr, out), ncclInternalError);
      EXPECT_NE(widenRecvSizes(abi, 1, nullptr, out), nullptr);
    }
    if (abi.intRegMrSize) {
      for (int in : ints) {
        size_t out = 0;
        EXPECT_EQ(ncclnetWidenRegMrSize(in, &out) == ncclSuccess,
                  refuseIntSize(in, abi.maxRegMrSize) == nullptr)
            << in;
      }
      for (size_t in : wides) {
        int out = 0;
        EXPECT_EQ(ncclnetNarrowRegMrSize(in, &out) == ncclSuccess,
                  refuseRegMrSize(abi, in) == nullptr)
            << in;
      }
    }
  }
}

TEST(CHelpers, RefusedSizesLeaveTheOutputAlone) {
  int out = -7;
  EXPECT_EQ(ncclnetNarrowSize(size_t{1} << 30, &out), ncclSuccess);
  EXPECT_EQ(out, 1 << 30);
  out = -7;
  EXPECT_EQ(ncclnetNarrowSize((size_t{1} << 30) + 1, &out), ncclInternalError);
  EXPECT_EQ(ncclnetNarrowRegMrSize(size_t{INT_MAX} + 1, &out), ncclInternalError);
  EXPECT_EQ(out, -7) << "a refused size must leave the output alone";
  EXPECT_EQ(ncclnetNarrowRegMrSize(size_t{INT_MAX}, &out), ncclSuccess);
  EXPECT_EQ(out, INT_MAX);
}

}  // namespace
