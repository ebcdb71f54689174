// SPDX-License-Identifier: Apache-2.0
// Properties: each field NCCL's topology and proxy read, checked on every
// device, plus the expectations the profile writes for its NICs.
#include <climits>
#include <cmath>
#include <cstdlib>
#include <set>

#include "scenario/registry.hpp"

namespace conformance {

namespace {

template <class F>
void eachDevice(Ctx& c, F&& check) {
  int n = c.devices();
  for (int d = 0; d < n; d++) check(d, c.props(d));
}

const char* nameOf(const ncclNetProperties_v12_t& p) {
  return p.name ? p.name : "(NULL)";
}

void devicesStable(Ctx& c) {
  int n = c.devices();
  int again = 0;
  CONF_OK(c.net().devices(&again), Rule::DevicesReported, "second devices()");
  CONF_EXPECT(again == n, Rule::DevicesReported, "devices() reported %d, then %d", n, again);
  CONF_EXPECT(n >= c.profile().minDevices, Rule::ProfileExpectation,
              "the profile expects at least %d devices, found %d", c.profile().minDevices, n);
  for (int d = 0; d < n; d++) {
    ncclNetProperties_v12_t p{};
    CONF_OK(c.net().getProperties(d, &p), Rule::DevicesReported,
            format("getProperties(%d) again", d));
    const ncclNetProperties_v12_t& first = c.props(d);
    CONF_EXPECT(p.guid == first.guid && p.speed == first.speed && p.ptrSupport == first.ptrSupport,
                Rule::DevicesReported,
                "getProperties(%d) changed between two calls (guid, speed or ptrSupport)", d);
  }
}

void namesUnique(Ctx& c) {
  std::set<std::string> seen;
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    CONF_EXPECT(p.name != nullptr && p.name[0] != '\0', Rule::NamesUnique,
                "device %d has an empty or NULL name", d);
    CONF_EXPECT(
        seen.insert(p.name).second, Rule::NamesUnique,
        "device %d is named '%s' like an earlier device: NCCL's topology finds NICs by name", d,
        p.name);
  });
}

void pciPath(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    if (p.pciPath == nullptr) return;
    char* real = realpath(p.pciPath, nullptr);
    std::string resolved = real ? real : "";
    std::free(real);
    CONF_EXPECT(!resolved.empty(), Rule::PciPathValid,
                "device %d '%s': pciPath '%s' does not exist (NULL is allowed)", d, nameOf(p),
                p.pciPath);
    CONF_EXPECT(resolved.compare(0, 5, "/sys/") == 0, Rule::PciPathValid,
                "device %d '%s': pciPath '%s' resolves to '%s', outside /sys", d, nameOf(p),
                p.pciPath, resolved.c_str());
  });
}

void speed(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    CONF_EXPECT(p.speed > 0, Rule::SpeedPositive,
                "device %d '%s': speed is %d Mbps; NCCL reads <= 0 as 10 Gb/s", d, nameOf(p),
                p.speed);
  });
}

void latency(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    CONF_EXPECT(std::isfinite(p.latency) && p.latency >= 0, Rule::LatencyValid,
                "device %d '%s': latency is %g us", d, nameOf(p), static_cast<double>(p.latency));
  });
}

void maxComms(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    CONF_EXPECT(p.maxComms >= 1, Rule::MaxCommsPositive, "device %d '%s': maxComms is %d", d,
                nameOf(p), p.maxComms);
  });
}

void maxRecvs(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    CONF_EXPECT(p.maxRecvs >= 1 && p.maxRecvs <= 8, Rule::MaxRecvsInRange,
                "device %d '%s': maxRecvs is %d", d, nameOf(p), p.maxRecvs);
  });
}

void ptrSupport(Ctx& c) {
  bool dmabuf = c.net().provides(ncclnet::host::Optional::RegMrDmaBuf);
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    int known = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
    CONF_EXPECT((p.ptrSupport & ~known) == 0, Rule::PtrSupportCoherent,
                "device %d '%s': ptrSupport 0x%x has unknown bits", d, nameOf(p), p.ptrSupport);
    CONF_EXPECT(p.ptrSupport & NCCL_PTR_HOST, Rule::PtrSupportCoherent,
                "device %d '%s': ptrSupport 0x%x lacks NCCL_PTR_HOST", d, nameOf(p), p.ptrSupport);
    if (p.ptrSupport & NCCL_PTR_DMABUF) {
      CONF_EXPECT(dmabuf, Rule::PtrSupportCoherent,
                  "device %d '%s': ptrSupport advertises NCCL_PTR_DMABUF but regMrDmaBuf is NULL",
                  d, nameOf(p));
      CONF_EXPECT(p.ptrSupport & NCCL_PTR_CUDA, Rule::PtrSupportCoherent,
                  "device %d '%s': ptrSupport advertises NCCL_PTR_DMABUF without NCCL_PTR_CUDA", d,
                  nameOf(p));
    }
  });
}

void deviceType(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    bool host = p.netDeviceType == NCCL_NET_DEVICE_HOST &&
                p.netDeviceVersion == NCCL_NET_DEVICE_INVALID_VERSION;
    bool unpack = p.netDeviceType == NCCL_NET_DEVICE_UNPACK &&
                  p.netDeviceVersion == NCCL_NET_DEVICE_UNPACK_VERSION;
    CONF_EXPECT(host || unpack, Rule::DeviceTypeKnown,
                "device %d '%s': netDeviceType %d with netDeviceVersion %d", d, nameOf(p),
                static_cast<int>(p.netDeviceType), p.netDeviceVersion);
  });
}

void maxBytes(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    for (auto [field, value] : {std::pair<const char*, size_t>{"maxP2pBytes", p.maxP2pBytes},
                                {"maxCollBytes", p.maxCollBytes}}) {
      CONF_EXPECT(value > 0 && value <= NCCL_MAX_NET_SIZE_BYTES, Rule::MaxBytesInRange,
                  "device %d '%s': %s is %zu; NCCL's proxy setup fails outside (0, 1 TiB]", d,
                  nameOf(p), field, value);
    }
  });
}

void vProps(Ctx& c) {
  int n = c.devices();
  int width = c.version() >= 12 ? 8 : (c.version() >= 9 ? 4 : 1);
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    CONF_EXPECT(p.vProps.ndevs >= 1 && p.vProps.ndevs <= width, Rule::VirtualDevicesValid,
                "device %d '%s': vProps.ndevs is %d (ABI v%d allows 1..%d)", d, nameOf(p),
                p.vProps.ndevs, c.version(), width);
    for (int i = 0; i < p.vProps.ndevs; i++) {
      CONF_EXPECT(p.vProps.devs[i] >= 0 && p.vProps.devs[i] < n, Rule::VirtualDevicesValid,
                  "device %d '%s': vProps.devs[%d] is %d, not a device", d, nameOf(p), i,
                  p.vProps.devs[i]);
    }
  });
}

void newerFields(Ctx& c) {
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    if (c.version() >= 11) {
      CONF_EXPECT(p.maxMultiRequestSize >= 1, Rule::NewerFieldsValid,
                  "device %d '%s': maxMultiRequestSize is %d", d, nameOf(p), p.maxMultiRequestSize);
    }
    if (c.version() >= 12) {
      CONF_EXPECT(p.railId >= NCCL_NET_ID_UNDEF && p.planeId >= NCCL_NET_ID_UNDEF,
                  Rule::NewerFieldsValid,
                  "device %d '%s': railId %d / planeId %d (NCCL_NET_ID_UNDEF is -1)", d, nameOf(p),
                  p.railId, p.planeId);
    }
  });
}

// The first ABI version whose properties carry `field` (older tables leave
// it at its default, so a check of it says nothing about the NIC).
int firstVersionWith(const std::string& field) {
  if (field == "netDeviceType" || field == "netDeviceVersion") return 7;
  if (field == "regIsGlobal") return 8;
  if (field == "forceFlush" || field == "maxP2pBytes" || field == "maxCollBytes" ||
      field == "vDevs")
    return 9;
  if (field == "maxMultiRequestSize") return 11;
  if (field == "railId" || field == "planeId") return 12;
  return 6;
}

void profileExpectations(Ctx& c) {
  if (c.profile().expect.empty())
    skip("the profile %s expects nothing of the NICs", c.profile().path.c_str());
  std::set<std::string> absent;
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    for (const DeviceExpectation& e : c.profile().expect) {
      if (!globMatch(e.match, nameOf(p))) continue;
      for (const PropertyCheck& check : e.checks) {
        if (c.version() < firstVersionWith(check.field)) {
          if (absent.insert(check.field).second) {
            c.note(format("'%s' not checked: ncclNetPlugin_v%d has no %s", check.text.c_str(),
                          c.version(), check.field.c_str()));
          }
          continue;
        }
        std::string found = evaluate(check, p);
        CONF_EXPECT(found.empty(), Rule::ProfileExpectation,
                    "device %d '%s': expected '%s' (%s line %d), but %s", d, nameOf(p),
                    check.text.c_str(), c.profile().path.c_str(), check.line, found.c_str());
      }
    }
  });
}

}  // namespace

void addPropertiesScenarios(std::vector<Scenario>& out) {
  out.push_back({"Properties", "DevicesStable", Rule::DevicesReported, 1, 6, devicesStable,
                 "devices() >= 1 (and the profile's minimum), same count and properties twice"});
  out.push_back({"Properties", "NamesUnique", Rule::NamesUnique, 1, 6, namesUnique,
                 "every device has its own non-empty name"});
  out.push_back({"Properties", "PciPathResolves", Rule::PciPathValid, 1, 6, pciPath,
                 "pciPath is NULL or a path under /sys"});
  out.push_back(
      {"Properties", "SpeedPositive", Rule::SpeedPositive, 1, 6, speed, "speed > 0 Mbps"});
  out.push_back({"Properties", "LatencyNotNegative", Rule::LatencyValid, 1, 6, latency,
                 "latency is finite and >= 0"});
  out.push_back(
      {"Properties", "MaxCommsPositive", Rule::MaxCommsPositive, 1, 6, maxComms, "maxComms >= 1"});
  out.push_back(
      {"Properties", "MaxRecvsInRange", Rule::MaxRecvsInRange, 1, 6, maxRecvs, "maxRecvs in 1..8"});
  out.push_back({"Properties", "PtrSupportCoherent", Rule::PtrSupportCoherent, 1, 6, ptrSupport,
                 "HOST set, no unknown bits, DMABUF only with CUDA and regMrDmaBuf"});
  out.push_back({"Properties", "DeviceTypeAndVersion", Rule::DeviceTypeKnown, 1, 6, deviceType,
                 "netDeviceType/Version is HOST/INVALID or UNPACK/7"});
  out.push_back({"Properties", "MaxBytesInRange", Rule::MaxBytesInRange, 1, 6, maxBytes,
                 "maxP2pBytes, maxCollBytes in (0, 1 TiB]"});
  out.push_back({"Properties", "VirtualDeviceProps", Rule::VirtualDevicesValid, 1, 6, vProps,
                 "vProps.ndevs within the ABI's width, devs are devices"});
  out.push_back({"Properties", "NewerFieldsValid", Rule::NewerFieldsValid, 1, 11, newerFields,
                 "maxMultiRequestSize >= 1 (v11+), railId/planeId >= -1 (v12)"});
  out.push_back({"Properties", "ProfileExpectations", Rule::ProfileExpectation, 1, 6,
                 profileExpectations, "each NIC meets the profile's expect.nics checks"});
}

}  // namespace conformance
