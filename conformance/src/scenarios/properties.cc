// SPDX-License-Identifier: Apache-2.0
// Properties: each field NCCL's topology and proxy read, checked on every
// device, plus the expectations the profile writes for its NICs.
#include <set>
#include <string>
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
// A value of `field` NCCL runs with but which misleads it (rule 49), judged
// after the field's own rule so that a MUST finding is never hidden.
void expectNoneTolerated(Ctx& c, const std::string& field) {
  ncclnet::host::PluginShape shape{c.version(), c.devices(),
                                   c.net().provides(ncclnet::host::Optional::RegMrDmaBuf)};
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    for (const ncclnet::host::PropertyFinding& f :
         ncclnet::host::checkDeviceProperties(shape, d, p)) {
      CONF_EXPECT(f.rule != ncclnet::host::PropertyRule::Tolerated || f.field != field,
                  Rule::PropertiesPlausible, "device %d '%s': %s", d, nameOf(p), f.message.c_str());
    }
  });
}
void latency(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::Latency, Rule::LatencyValid);
  expectNoneTolerated(c, "latency");
}
void maxComms(Ctx& c) {
  expectNone(c, ncclnet::host::PropertyRule::MaxComms, Rule::MaxCommsPositive);
  expectNoneTolerated(c, "maxComms");
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
// NCCL checks maxP2pBytes of the net table (src/transport/net.cc
// sendProxySetup/recvProxySetup) and maxCollBytes of the CollNet table
// (src/transport/coll_net.cc); the net table's maxCollBytes is read by no
// code of NCCL 2.28 or 2.30, so its range is rule 20's (SHOULD).
void maxBytes(Ctx& c) {
  ncclnet::host::PluginShape shape{c.version(), c.devices(),
                                   c.net().provides(ncclnet::host::Optional::RegMrDmaBuf)};
  // Every device's maxP2pBytes first: a MUST finding must not hide behind
  // a SHOULD one.
  for (bool p2p : {true, false}) {
    eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
      for (const ncclnet::host::PropertyFinding& f :
           ncclnet::host::checkDeviceProperties(shape, d, p)) {
        if (f.rule != ncclnet::host::PropertyRule::MaxBytes) continue;
        if ((f.field == "maxCollBytes") == p2p) continue;
        CONF_EXPECT(false, p2p ? Rule::MaxBytesInRange : Rule::NewerFieldsValid,
                    "device %d '%s': %s", d, nameOf(p), f.message.c_str());
      }
    });
  }
}
// Rule 19 is what NCCL reads of a device that devices() reported, i.e. a
// physical one: only the version shims copy its vProps, vProps.ndevs
// entries into the next version's array (NCCL 2.28 src/plugin/net/net_v10.cc
// ncclNet_getProperties; 2.30 net_v9.cc .. net_v11.cc), so a count above the
// ABI's width overruns NCCL's struct. The list itself is read only for
// devices makeVDevice created (src/graph/topo.cc ncclTopoGetVNicParent),
// never for these; NCCL's own Socket transport leaves vProps unwritten. No
// release shims v12 yet (2.30 reads it as it is), so there the width is
// rule 44's too, like the list naming the device itself or existing devices.
void vProps(Ctx& c) {
  int width = c.version() >= 12  ? NCCL_NET_MAX_DEVS_PER_NIC_V12
              : c.version() >= 9 ? NCCL_NET_MAX_DEVS_PER_NIC_V11
                                 : 1;
  Rule overrun = c.version() >= 12 ? Rule::PhysicalDeviceListsItself : Rule::VirtualDevicesValid;
  eachDevice(c, [&](int d, const ncclNetProperties_v12_t& p) {
    CONF_EXPECT(p.vProps.ndevs <= width, overrun,
                "device %d '%s': vProps.ndevs %d is above %d, the width of ABI v%d: NCCL's "
                "version shims copy vProps.ndevs entries into arrays of that width",
                d, nameOf(p), p.vProps.ndevs, width, c.version());
  });
  expectNone(c, ncclnet::host::PropertyRule::VirtualDevices, Rule::PhysicalDeviceListsItself);
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
                 .summary = "latency is finite and above -4 us (MUST), not negative (rule 49)"});
  out.push_back({.area = "Properties",
                 .name = "MaxCommsPositive",
                 .rule = Rule::MaxCommsPositive,
                 .ranks = 1,
                 .run = maxComms,
                 .summary = "maxComms >= 1 (MUST through v6, rule 49 through v7+)"});
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
                 .summary = "maxP2pBytes in (0, 1 TiB]; the net table's maxCollBytes too "
                            "(SHOULD, rule 20)"});
  out.push_back({.area = "Properties",
                 .name = "VirtualDeviceProps",
                 .rule = Rule::VirtualDevicesValid,
                 .ranks = 1,
                 .run = vProps,
                 .summary = "vProps.ndevs within the ABI's width (MUST); the list names the "
                            "device itself or other devices (SHOULD, rule 44)"});
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
