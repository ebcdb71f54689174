// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): the property rules. Each cites where NCCL reads the
// field (NCCL 2.30, commit 5067397c).
#include "ncclnet/host/property_checks.hpp"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/properties.hpp"

namespace ncclnet::host {

namespace {

// NCCL's IB transport groups 8 receives; nothing in NCCL uses more, and
// NCCL sizes its request slots as 32 x maxRecvs per comm.
constexpr int kMaxRecvs = 8;
constexpr int kKnownPtrBits = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;

std::string hex(int v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%x", static_cast<unsigned>(v));
  return buf;
}

class DeviceChecks {
 public:
  DeviceChecks(const PluginShape& shape, int device, const ncclNetProperties_v12_t& props)
      : shape_(shape), device_(device), p_(props) {}

  std::vector<PropertyFinding> run() {
    name();
    pciPath();
    performance();
    memory();
    deviceType();
    sizes();
    virtualDevices();
    newerFields();
    return std::move(out_);
  }

 private:
  void add(PropertyRule rule, const std::string& field, const std::string& message) {
    out_.push_back(PropertyFinding{device_, rule, field, message});
  }
  bool has(const char* field) const { return shape_.version >= propertySince(field); }

  // src/graph/topo.cc ncclTopoPopulateNics: NICs are found and merged by name.
  void name() {
    if (p_.name == nullptr || p_.name[0] == '\0') {
      add(PropertyRule::Name, "name",
          std::string("name is ") + (p_.name ? "empty" : "NULL") +
              "; NCCL keys its topology by device name");
    }
  }

  // src/graph/topo.cc ncclTopoFillNet: a non-NULL pciPath is resolved and
  // its /sys attributes read to place the NIC in the PCI tree.
  void pciPath() {
    if (p_.pciPath == nullptr) return;
    struct stat st;
    char* real = realpath(p_.pciPath, nullptr);
    std::string resolved = real ? real : "";
    std::free(real);
    if (resolved.empty() || stat(resolved.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      add(PropertyRule::PciPath, "pciPath",
          std::string("pciPath '") + p_.pciPath +
              "' is not an existing directory; NCCL places the NIC in the PCI topology from "
              "this /sys path (use NULL for a virtual NIC)");
    } else if (resolved.compare(0, 5, "/sys/") != 0) {
      add(PropertyRule::PciPath, "pciPath",
          std::string("pciPath '") + p_.pciPath + "' resolves to '" + resolved +
              "', outside /sys; NCCL reads the NIC's PCI attributes there");
    }
  }

  void performance() {
    // src/graph/topo.cc ncclTopoPopulateNics writes speed, latency and
    // maxComms into the topology XML; a speed <= 0 reads as 10 Gb/s.
    if (p_.speed <= 0) {
      add(PropertyRule::Speed, "speed",
          "speed " + std::to_string(p_.speed) +
              " Mb/s is not positive; NCCL then assumes 10000 Mb/s");
    }
    // The latency goes through xmlInitAttrInt: NaN or infinity converts to
    // INT_MIN on x86, a fraction is dropped.
    if (!std::isfinite(p_.latency) || std::trunc(p_.latency) <= kLatencyFailsAt) {
      add(PropertyRule::Latency, "latency",
          "latency " + std::to_string(p_.latency) +
              " us is not finite or too negative: NCCL's tuner then predicts negative times and "
              "fails small collectives (ncclInternalError); use 0 to let NCCL choose");
    } else if (p_.latency < 0) {
      add(PropertyRule::Tolerated, "latency",
          "latency " + std::to_string(p_.latency) +
              " us is negative: NCCL takes it off every inter-node step of its model and "
              "misjudges algorithms; use 0 to let NCCL choose");
    }
    // NCCL up to 2.18.1, which loads v6 tables at most, skips a NIC whose
    // maxComms is 0 in its graph search and caps its channels at maxComms
    // (src/graph/search.cc); 2.18.3 and later store it and never read it.
    if (p_.maxComms < 1) {
      bool read = shape_.version <= 6;
      add(read ? PropertyRule::MaxComms : PropertyRule::Tolerated, "maxComms",
          "maxComms " + std::to_string(p_.maxComms) + " is below 1; " +
              (read ? "NCCL up to 2.18.1 then leaves the NIC out of its graph"
                    : "NCCL 2.18.3 and later ignore it, older releases leave the NIC out"));
    }
    // src/transport/net.cc recvProxyProgress groups up to maxRecvs receives.
    if (p_.maxRecvs < 1 || p_.maxRecvs > kMaxRecvs) {
      add(PropertyRule::MaxRecvs, "maxRecvs",
          "maxRecvs " + std::to_string(p_.maxRecvs) + " is outside 1.." +
              std::to_string(kMaxRecvs) +
              "; NCCL groups up to maxRecvs receives in one irecv and expects 32 x maxRecvs "
              "send requests per comm");
    }
  }

  void memory() {
    int ptr = p_.ptrSupport;
    if (ptr & ~kKnownPtrBits) {
      add(PropertyRule::PtrSupport, "ptrSupport",
          "ptrSupport has unknown bits " + hex(ptr & ~kKnownPtrBits) +
              " (known: HOST 0x1, CUDA 0x2, DMABUF 0x4)");
    }
    // src/transport/net.cc sendProxySetup/recvProxySetup register host
    // buffers whenever GPUDirect RDMA is off.
    if (!(ptr & NCCL_PTR_HOST)) {
      add(PropertyRule::PtrSupport, "ptrSupport",
          "ptrSupport lacks NCCL_PTR_HOST; NCCL registers host buffers whenever it does not "
          "use GPUDirect RDMA");
    }
    // src/transport/net.cc: useDmaBuf follows NCCL_PTR_DMABUF and then calls
    // regMrDmaBuf. DMABUF without CUDA is valid: src/graph/topo.cc
    // ncclTopoPopulateNics enables GPUDirect on either bit.
    if ((ptr & NCCL_PTR_DMABUF) && !shape_.providesRegMrDmaBuf) {
      add(PropertyRule::PtrSupport, "ptrSupport",
          "DMABUF is advertised but regMrDmaBuf is NULL; the plugin contract requires "
          "regMrDmaBuf whenever DMABUF is advertised");
    }
    if ((ptr & (NCCL_PTR_CUDA | NCCL_PTR_DMABUF)) && p_.pciPath == nullptr) {
      add(PropertyRule::GdrPlacement, "pciPath",
          "CUDA/DMABUF is advertised but pciPath is NULL; NCCL cannot place the NIC near any "
          "GPU, so GPUDirect RDMA stays off at the default NCCL_NET_GDR_LEVEL");
    }
  }

  // src/plugin/net.cc ncclNetCheckDeviceVersion: HOST passes whatever its
  // version; UNPACK only at NCCL_NET_DEVICE_UNPACK_VERSION; any other type
  // fails the communicator with ncclInternalError.
  void deviceType() {
    if (!has("netDeviceType")) return;
    // The raw int: a plugin may write any value there, and loading one
    // outside the enum's range through the enum type is undefined.
    int type = 0;
    static_assert(sizeof(p_.netDeviceType) == sizeof(type), "netDeviceType is an int in the ABI");
    std::memcpy(&type, &p_.netDeviceType, sizeof(type));
    if (type == NCCL_NET_DEVICE_UNPACK && p_.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION) {
      add(PropertyRule::DeviceType, "netDeviceVersion",
          "UNPACK device version " + std::to_string(p_.netDeviceVersion) +
              "; NCCL accepts only version " + std::to_string(NCCL_NET_DEVICE_UNPACK_VERSION));
    } else if (type != NCCL_NET_DEVICE_HOST && type != NCCL_NET_DEVICE_UNPACK) {
      add(PropertyRule::DeviceType, "netDeviceType",
          "netDeviceType " + std::to_string(type) +
              " is neither HOST (0) nor UNPACK (1); NCCL rejects the plugin when device 0 "
              "has it");
    }
  }

  // src/transport/net.cc sendProxySetup/recvProxySetup fail outside this.
  void sizes() {
    if (!has("maxP2pBytes")) return;
    size(PropertyRule::MaxBytes, "maxP2pBytes", p_.maxP2pBytes);
    size(PropertyRule::MaxBytes, "maxCollBytes", p_.maxCollBytes);
  }
  void size(PropertyRule rule, const char* field, size_t value) {
    if (value > 0 && value <= NCCL_MAX_NET_SIZE_BYTES) return;
    add(rule, field,
        std::string(field) + " " + std::to_string(value) +
            " is outside (0, 1 TiB]; NCCL fails connection setup with ncclInternalError");
  }

  // src/plugin/net/net_v9.cc .. net_v12.cc copy vProps at the version's
  // width; before v9 NCCL makes every device its own (ndevs 1).
  void virtualDevices() {
    int width = detail::withAbiVersion<int>(shape_.version, [](auto v) {
      return detail::maxVDevsOf<typename detail::AbiTypes<decltype(v)::value>::Props>();
    });
    if (width == 0) width = 1;  // a version outside the table
    int n = p_.vProps.ndevs;
    if (n < 1 || n > width) {
      add(PropertyRule::VirtualDevices, "vProps.ndevs",
          "vProps.ndevs " + std::to_string(n) + " is outside 1.." + std::to_string(width) +
              " (the width of ABI v" + std::to_string(shape_.version) +
              "); a physical device lists itself");
      return;
    }
    for (int i = 0; i < n; i++) {
      int dev = p_.vProps.devs[i];
      if (dev < 0 || dev >= shape_.deviceCount) {
        add(PropertyRule::VirtualDevices, "vProps.devs",
            "vProps.devs[" + std::to_string(i) + "] = " + std::to_string(dev) +
                " is not a device index (0.." + std::to_string(shape_.deviceCount - 1) + ")");
      }
    }
  }

  // src/graph/topo.cc ncclTopoPopulateNics: rail and plane are written
  // unless NCCL_NET_ID_UNDEF (-1).
  void newerFields() {
    if (has("maxMultiRequestSize") && p_.maxMultiRequestSize < 1) {
      add(PropertyRule::NewerFields, "maxMultiRequestSize",
          "maxMultiRequestSize " + std::to_string(p_.maxMultiRequestSize) +
              " is below 1; set 1 when multi-requests are not supported");
    }
    if (!has("railId")) return;
    if (p_.railId < NCCL_NET_ID_UNDEF) {
      add(PropertyRule::NewerFields, "railId",
          "railId " + std::to_string(p_.railId) + " is negative; use -1 (unknown)");
    }
    if (p_.planeId < NCCL_NET_ID_UNDEF) {
      add(PropertyRule::NewerFields, "planeId",
          "planeId " + std::to_string(p_.planeId) + " is negative; use -1 (unknown)");
    }
  }

  const PluginShape& shape_;
  int device_;
  const ncclNetProperties_v12_t& p_;
  std::vector<PropertyFinding> out_;
};

}  // namespace

namespace {

// Whether the properties struct of a version has `field`, detected from the
// struct itself (detail/properties.hpp), so no version number is restated.
template <class Props>
bool carries(const std::string& field) {
  using namespace detail;
  if (field == "netDeviceType") return has_netDeviceType_v<Props>;
  if (field == "netDeviceVersion") return has_netDeviceVersion_v<Props>;
  if (field == "regIsGlobal") return has_regIsGlobal_v<Props>;
  if (field == "forceFlush") return has_forceFlush_v<Props>;
  if (field == "vProps" || field == "vDevs") return has_vProps_v<Props>;
  if (field == "maxP2pBytes") return has_maxP2pBytes_v<Props>;
  if (field == "maxCollBytes") return has_maxCollBytes_v<Props>;
  if (field == "maxMultiRequestSize") return has_maxMultiRequestSize_v<Props>;
  if (field == "railId") return has_railId_v<Props>;
  if (field == "planeId") return has_planeId_v<Props>;
  return true;  // the fields every version has
}

}  // namespace

int propertySince(const std::string& field) {
  for (const detail::AbiVersion& abi : detail::kAbiVersions) {
    if (detail::withAbiVersion<bool>(abi.version, [&](auto v) {
          return carries<typename detail::AbiTypes<decltype(v)::value>::Props>(field);
        })) {
      return abi.version;
    }
  }
  return detail::kOldestAbi;
}

std::vector<PropertyFinding> checkDeviceProperties(const PluginShape& shape, int device,
                                                   const ncclNetProperties_v12_t& props) {
  return DeviceChecks(shape, device, props).run();
}

std::vector<PropertyFinding> checkDeviceNames(const std::vector<const char*>& names) {
  std::vector<PropertyFinding> out;
  std::map<std::string, int> first;
  for (int d = 0; d < static_cast<int>(names.size()); d++) {
    if (names[d] == nullptr) continue;
    auto [it, inserted] = first.emplace(names[d], d);
    if (inserted) continue;
    out.push_back(PropertyFinding{d, PropertyRule::Name, "name",
                                  std::string("name '") + names[d] +
                                      "' is also the name of device " + std::to_string(it->second) +
                                      "; NCCL keys its topology by device name"});
  }
  return out;
}

}  // namespace ncclnet::host
