// SPDX-License-Identifier: Apache-2.0
// Properties: each field NCCL's topology and proxy read, checked on every
// device, plus the expectations the profile writes for its NICs.
#include <set>
#include <vector>

#include "ncclnet/host/property_checks.hpp"
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

// The SDK's property checks (ncclnet/host/property_checks.hpp), one rule's
// findings per scenario: the same rules ncclnet-info warns about.
void expectNone(Ctx& c, ncclnet::host::PropertyRule which, Rule rule) {
  ncclnet::host::PluginShape shape{c.version(), c.devices(),
                                   c.net().provides(ncclnet::host::Optional::RegMrDmaBuf)};
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    for (const ncclnet::host::PropertyFinding& f :
         ncclnet::host::checkDeviceProperties(shape, d, p)) {
      CONF_EXPECT(f.rule != which, rule, "device %d '%s': %s", d, nameOf(p), f.message.c_str());
    }
  });
}

void namesUnique(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::Name, Rule::NamesUnique);
  std::vector<const char*> names;
  eachDevice(c, [&](int, const ncclNetProperties_v12_t& p) { names.push_back(p.name); });
  for (const ncclnet::host::PropertyFinding& f : ncclnet::host::checkDeviceNames(names)) {
    CONF_EXPECT(false, Rule::NamesUnique, "device %d: %s", f.device, f.message.c_str());
  }
}

void pciPath(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::PciPath, Rule::PciPathValid);
}
void speed(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::Speed, Rule::SpeedPositive);
}
void latency(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::Latency, Rule::LatencyValid);
}
void maxComms(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::MaxComms, Rule::MaxCommsPositive);
}
void maxRecvs(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::MaxRecvs, Rule::MaxRecvsInRange);
}
void ptrSupport(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::PtrSupport, Rule::PtrSupportCoherent);
}
void deviceType(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::DeviceType, Rule::DeviceTypeKnown);
}
void maxBytes(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::MaxBytes, Rule::MaxBytesInRange);
}
void vProps(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::VirtualDevices, Rule::VirtualDevicesValid);
}
void newerFields(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::NewerFields, Rule::NewerFieldsValid);
}

void profileExpectations(Ctx& c) {
  if (c.profile().expect.empty())
    skip("the profile %s expects nothing of the NICs", c.profile().path.c_str());
  std::set<std::string> absent;
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    for (const DeviceExpectation& e : c.profile().expect) {
      if (!globMatch(e.match, nameOf(p))) continue;
      for (const PropertyCheck& check : e.checks) {
        if (c.version() < ncclnet::host::propertySince(check.field)) {
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
  out.push_back(
      {.area = "Properties",
       .name = "DevicesStable",
       .rule = Rule::DevicesReported,
       .ranks = 1,
       .run = devicesStable,
       .summary = "devices() >= 1 (and the profile's minimum), same count and properties twice"});
  out.push_back({.area = "Properties",
                 .name = "NamesUnique",
                 .rule = Rule::NamesUnique,
                 .ranks = 1,
                 .run = namesUnique,
                 .summary = "every device has its own non-empty name"});
  out.push_back({.area = "Properties",
                 .name = "PciPathResolves",
                 .rule = Rule::PciPathValid,
                 .ranks = 1,
                 .run = pciPath,
                 .summary = "pciPath is NULL or a directory under /sys"});
  out.push_back({.area = "Properties",
                 .name = "SpeedPositive",
                 .rule = Rule::SpeedPositive,
                 .ranks = 1,
                 .run = speed,
                 .summary = "speed > 0 Mbps"});
  out.push_back({.area = "Properties",
                 .name = "LatencyNotNegative",
                 .rule = Rule::LatencyValid,
                 .ranks = 1,
                 .run = latency,
                 .summary = "latency is finite and >= 0"});
  out.push_back({.area = "Properties",
                 .name = "MaxCommsPositive",
                 .rule = Rule::MaxCommsPositive,
                 .ranks = 1,
                 .run = maxComms,
                 .summary = "maxComms >= 1"});
  out.push_back({.area = "Properties",
                 .name = "MaxRecvsInRange",
                 .rule = Rule::MaxRecvsInRange,
                 .ranks = 1,
                 .run = maxRecvs,
                 .summary = "maxRecvs in 1..8"});
  out.push_back({.area = "Properties",
                 .name = "PtrSupportCoherent",
                 .rule = Rule::PtrSupportCoherent,
                 .ranks = 1,
                 .run = ptrSupport,
                 .summary = "HOST set, no unknown bits, DMABUF only with regMrDmaBuf"});
  out.push_back({.area = "Properties",
                 .name = "DeviceTypeAndVersion",
                 .rule = Rule::DeviceTypeKnown,
                 .ranks = 1,
                 .run = deviceType,
                 .summary = "netDeviceType is HOST, or UNPACK at version 7"});
  out.push_back({.area = "Properties",
                 .name = "MaxBytesInRange",
                 .rule = Rule::MaxBytesInRange,
                 .ranks = 1,
                 .run = maxBytes,
                 .summary = "maxP2pBytes, maxCollBytes in (0, 1 TiB]"});
  out.push_back({.area = "Properties",
                 .name = "VirtualDeviceProps",
                 .rule = Rule::VirtualDevicesValid,
                 .ranks = 1,
                 .run = vProps,
                 .summary = "vProps.ndevs within the ABI's width, devs are devices"});
  out.push_back({.area = "Properties",
                 .name = "NewerFieldsValid",
                 .rule = Rule::NewerFieldsValid,
                 .ranks = 1,
                 .needs = {.minAbi = 11},
                 .run = newerFields,
                 .summary = "maxMultiRequestSize >= 1 (v11+), railId/planeId >= -1 (v12)"});
  out.push_back({.area = "Properties",
                 .name = "ProfileExpectations",
                 .rule = Rule::ProfileExpectation,
                 .ranks = 1,
                 .run = profileExpectations,
                 .summary = "each NIC meets the profile's expect.nics checks"});
}

}  // namespace conformance
