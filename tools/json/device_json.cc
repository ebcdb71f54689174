// SPDX-License-Identifier: Apache-2.0
#include "device_json.hpp"

#include <cstdio>
#include <cstdlib>

#include "ncclnet/host/property_checks.hpp"
#include "ncclnet/result_name.hpp"
#include "property_text.hpp"

namespace ncclnet::json {

namespace {

// The shortest decimal that reads back as the same float, as a double:
// latency 1.5f stays 1.5 and 0.1f becomes 0.1, not 0.10000000149011612.
double shortestDouble(float value) {
  char text[32];
  for (int digits = 1; digits <= 9; digits++) {
    std::snprintf(text, sizeof(text), "%.*g", digits, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value) return std::strtod(text, nullptr);
  }
  return static_cast<double>(value);  // NaN never compares equal; dump writes null
}

}  // namespace

Json devicePropertiesJson(const DeviceProperties& device, int abiVersion) {
  const ncclNetProperties_v12_t& x = device.props;
  Json d = Json::object();
  d["index"] = device.index;
  d["status"] = resultName(device.status);
  if (device.status != ncclSuccess) return d;
  d["name"] = stringOrNull(device.name);
  d["pciPath"] = stringOrNull(device.pciPath);
  d["guid"] = static_cast<uint64_t>(x.guid);  // GUIDs often have the top bit set
  d["ptrSupport"] = x.ptrSupport;
  d["ptrSupportText"] = ptrSupportText(x.ptrSupport);
  d["regIsGlobal"] = x.regIsGlobal;
  d["forceFlush"] = x.forceFlush;
  d["speed"] = x.speed;
  d["port"] = x.port;
  d["latency"] = shortestDouble(x.latency);
  d["maxComms"] = x.maxComms;
  d["maxRecvs"] = x.maxRecvs;
  d["netDeviceType"] = static_cast<int>(x.netDeviceType);
  d["netDeviceTypeName"] = deviceTypeName(x.netDeviceType);
  d["netDeviceVersion"] = x.netDeviceVersion;
  Json devs = Json::array();
  for (int i = 0; i < x.vProps.ndevs && i < NCCL_NET_MAX_DEVS_PER_NIC_V12; i++) {
    devs.push_back(x.vProps.devs[i]);
  }
  d["vProps"] = {{"ndevs", x.vProps.ndevs}, {"devs", devs}};
  d["maxP2pBytes"] = static_cast<uint64_t>(x.maxP2pBytes);
  d["maxCollBytes"] = static_cast<uint64_t>(x.maxCollBytes);
  d["maxMultiRequestSize"] = x.maxMultiRequestSize;
  d["railId"] = static_cast<int>(x.railId);
  d["planeId"] = static_cast<int>(x.planeId);
  Json defaulted = Json::array();
  for (const char* f :
       {"netDeviceType", "netDeviceVersion", "regIsGlobal", "forceFlush", "vProps", "maxP2pBytes",
        "maxCollBytes", "maxMultiRequestSize", "railId", "planeId"}) {
    if (abiVersion < host::propertySince(f)) defaulted.push_back(f);
  }
  d["defaulted"] = defaulted;
  return d;
}

}  // namespace ncclnet::json
