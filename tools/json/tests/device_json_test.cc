// SPDX-License-Identifier: Apache-2.0
// A device's properties as the reports write them.
#include <gtest/gtest.h>

#include <limits>

#include "device_json.hpp"

namespace ncclnet::json {
namespace {

DeviceProperties sampleDevice() {
  DeviceProperties d;
  d.index = 1;
  d.name = "nic1";
  d.props.guid = 0xfedcba9876543210ull;
  d.props.ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA;
  d.props.speed = 400000;
  d.props.latency = 0.1f;
  d.props.maxComms = 65536;
  d.props.maxRecvs = 8;
  d.props.netDeviceType = NCCL_NET_DEVICE_UNPACK;
  d.props.vProps.ndevs = 2;
  d.props.vProps.devs[0] = 1;
  d.props.vProps.devs[1] = 3;
  d.props.maxP2pBytes = uint64_t{1} << 40;
  d.props.railId = -1;
  return d;
}

TEST(DeviceJson, WritesEveryPropertyWithItsNames) {
  Json d = devicePropertiesJson(sampleDevice(), 12);
  EXPECT_EQ(d["index"], 1);
  EXPECT_EQ(d["status"], "ncclSuccess");
  EXPECT_EQ(d["name"], "nic1");
  EXPECT_TRUE(d["pciPath"].is_null());
  EXPECT_TRUE(d["guid"].is_number_unsigned());
  EXPECT_EQ(d["guid"].get<uint64_t>(), 0xfedcba9876543210ull);
  EXPECT_EQ(d["ptrSupportText"], "HOST|CUDA");
  EXPECT_EQ(d["netDeviceTypeName"], "UNPACK");
  EXPECT_EQ(d["vProps"], Json({{"ndevs", 2}, {"devs", {1, 3}}}));
  EXPECT_EQ(d["maxP2pBytes"].get<uint64_t>(), uint64_t{1} << 40);
  EXPECT_EQ(d["railId"], -1);
  EXPECT_EQ(d["defaulted"], Json::array());
  // A float property is written as the decimal it was set to.
  EXPECT_NE(jsonText(d).find("\"latency\": 0.1,"), std::string::npos) << jsonText(d);
}

TEST(DeviceJson, NamesTheFieldsAnOlderVersionLacks) {
  Json d = devicePropertiesJson(sampleDevice(), 9);
  EXPECT_EQ(d["defaulted"], Json({"maxMultiRequestSize", "railId", "planeId"}));
  Json v6 = devicePropertiesJson(sampleDevice(), 6);
  EXPECT_EQ(v6["defaulted"].size(), 10u);
  EXPECT_EQ(v6["defaulted"][0], "netDeviceType");
}

TEST(DeviceJson, AFailedDeviceHasOnlyItsIndexAndStatus) {
  DeviceProperties failed = sampleDevice();
  failed.status = ncclInternalError;
  Json d = devicePropertiesJson(failed, 12);
  EXPECT_EQ(d, Json({{"index", 1}, {"status", "ncclInternalError"}}));
}

TEST(DeviceJson, WritesANonFiniteLatencyAsNull) {
  DeviceProperties d = sampleDevice();
  d.props.latency = std::numeric_limits<float>::infinity();
  EXPECT_NE(jsonText(devicePropertiesJson(d, 12)).find("\"latency\": null,"), std::string::npos);
}

}  // namespace
}  // namespace ncclnet::json
