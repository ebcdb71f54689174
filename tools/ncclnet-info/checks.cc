// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the property checks. Each rule cites what NCCL does with the
// value (docs/abi.md, "Properties").
#include "checks.hpp"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include "ncclnet/result_name.hpp"

namespace ncclnet::info {

namespace {

constexpr int kMaxUsualRecvs = 8;  // NCCL's IB transport groups 8; nothing in NCCL uses more
constexpr int kKnownPtrBits = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;

bool provided(const PluginInfo& p, const char* slot) {
  for (const OptionalSlot& s : p.optional) {
    if (std::string(s.name) == slot) return s.state == SlotState::Provided;
  }
  return false;
}

bool isDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class DeviceChecker {
 public:
  DeviceChecker(const PluginInfo& p, const DeviceInfo& d, std::vector<Warning>* out)
      : p_(p), d_(d), props_(d.props), out_(out) {}

  void run() {
    if (d_.status != ncclSuccess) {
      warn("getProperties", std::string("getProperties failed with ") + resultText(d_.status) +
                                "; NCCL aborts topology detection on this error");
      return;
    }
    checkIdentity();
    checkPerformance();
    checkMemory();
    checkDeviceType();
    checkSizes();
    checkVirtual();
    checkTopologyIds();
  }

 private:
  void warn(const std::string& field, const std::string& message) {
    out_->push_back(Warning{d_.index, field, message});
  }
  bool has(const char* field) const { return p_.version >= propertySince(field); }

  void checkIdentity() {
    if (!d_.name) warn("name", "name is NULL; NCCL keys its topology by device name");
    if (d_.pciPath && !isDirectory(*d_.pciPath)) {
      warn("pciPath", "pciPath '" + *d_.pciPath +
                          "' is not an existing directory; NCCL places the NIC in the PCI "
                          "topology from this /sys path (use NULL for a virtual NIC)");
    }
  }

  void checkPerformance() {
    if (props_.speed <= 0) {
      warn("speed", "speed " + std::to_string(props_.speed) +
                        " Mb/s is not positive; NCCL then assumes 10000 Mb/s");
    }
    if (std::isnan(props_.latency) || props_.latency < 0) {
      warn("latency", "latency " + std::to_string(props_.latency) +
                          " us is negative; use 0 to let NCCL choose");
    }
    if (props_.maxComms < 1) {
      warn("maxComms", "maxComms " + std::to_string(props_.maxComms) +
                           " is below 1; NCCL caps the channels per NIC at this value");
    }
    if (props_.maxRecvs < 1 || props_.maxRecvs > kMaxUsualRecvs) {
      warn("maxRecvs", "maxRecvs " + std::to_string(props_.maxRecvs) + " is outside 1.." +
                           std::to_string(kMaxUsualRecvs) +
                           "; NCCL groups up to maxRecvs receives in one irecv and expects "
                           "32 x maxRecvs send requests per comm");
    }
  }

  void checkMemory() {
    int ptr = props_.ptrSupport;
    if (ptr & ~kKnownPtrBits) {
      warn("ptrSupport", "ptrSupport has unknown bits " + hex(ptr & ~kKnownPtrBits) +
                             " (known: HOST 0x1, CUDA 0x2, DMABUF 0x4)");
    }
    if (!(ptr & NCCL_PTR_HOST)) {
      warn("ptrSupport",
           "ptrSupport lacks NCCL_PTR_HOST; NCCL registers host buffers whenever "
           "it does not use GPUDirect RDMA");
    }
    if ((ptr & NCCL_PTR_DMABUF) && !provided(p_, "regMrDmaBuf")) {
      warn("ptrSupport",
           "DMABUF is advertised but regMrDmaBuf is NULL; the plugin contract "
           "requires regMrDmaBuf whenever DMABUF is advertised");
    }
    if ((ptr & (NCCL_PTR_CUDA | NCCL_PTR_DMABUF)) && !d_.pciPath) {
      warn("pciPath",
           "CUDA/DMABUF is advertised but pciPath is NULL; NCCL cannot place the NIC "
           "near any GPU, so GPUDirect RDMA stays off at the default NCCL_NET_GDR_LEVEL");
    }
  }

  void checkDeviceType() {
    if (!has("netDeviceType")) return;
    int type = props_.netDeviceType;
    if (type == NCCL_NET_DEVICE_UNPACK &&
        props_.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION) {
      warn("netDeviceVersion", "UNPACK device version " + std::to_string(props_.netDeviceVersion) +
                                   "; NCCL accepts only version " +
                                   std::to_string(NCCL_NET_DEVICE_UNPACK_VERSION));
    } else if (type != NCCL_NET_DEVICE_HOST && type != NCCL_NET_DEVICE_UNPACK) {
      warn("netDeviceType", "netDeviceType " + std::to_string(type) +
                                " is neither HOST (0) nor UNPACK (1); NCCL rejects the plugin "
                                "when device 0 has it");
    }
  }

  void checkSizes() {
    if (!has("maxP2pBytes")) return;
    checkSize("maxP2pBytes", props_.maxP2pBytes);
    checkSize("maxCollBytes", props_.maxCollBytes);
  }
  void checkSize(const char* field, size_t value) {
    if (value > 0 && value <= NCCL_MAX_NET_SIZE_BYTES) return;
    warn(field, std::string(field) + " " + std::to_string(value) +
                    " is outside (0, 1 TiB]; NCCL fails connection setup with "
                    "ncclInternalError");
  }

  void checkVirtual() {
    if (!has("vProps")) return;
    int width = p_.version >= 12 ? NCCL_NET_MAX_DEVS_PER_NIC_V12 : NCCL_NET_MAX_DEVS_PER_NIC_V11;
    int n = props_.vProps.ndevs;
    if (n < 1 || n > width) {
      warn("vProps.ndevs", "vProps.ndevs " + std::to_string(n) + " is outside 1.." +
                               std::to_string(width) + " (the width of ABI v" +
                               std::to_string(p_.version) + "); a physical device lists itself");
      return;
    }
    for (int i = 0; i < n; i++) {
      int dev = props_.vProps.devs[i];
      if (dev < 0 || dev >= p_.deviceCount) {
        warn("vProps.devs", "vProps.devs[" + std::to_string(i) + "] = " + std::to_string(dev) +
                                " is not a device index (0.." + std::to_string(p_.deviceCount - 1) +
                                ")");
      }
    }
  }

  void checkTopologyIds() {
    if (has("maxMultiRequestSize") && props_.maxMultiRequestSize < 1) {
      warn("maxMultiRequestSize", "maxMultiRequestSize " +
                                      std::to_string(props_.maxMultiRequestSize) +
                                      " is below 1; set 1 when multi-requests are not supported");
    }
    if (!has("railId")) return;
    if (props_.railId < NCCL_NET_ID_UNDEF) {
      warn("railId", "railId " + std::to_string(props_.railId) + " is negative; use -1 (unknown)");
    }
    if (props_.planeId < NCCL_NET_ID_UNDEF) {
      warn("planeId",
           "planeId " + std::to_string(props_.planeId) + " is negative; use -1 (unknown)");
    }
  }

  static std::string hex(int v) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%x", static_cast<unsigned>(v));
    return buf;
  }

  const PluginInfo& p_;
  const DeviceInfo& d_;
  const ncclNetProperties_v12_t& props_;
  std::vector<Warning>* out_;
};

// NCCL looks devices up by name when it builds the topology: a second
// device with the same name is merged into (or mistaken for) the first.
void checkDuplicateNames(const PluginInfo& p, std::vector<Warning>* out) {
  std::map<std::string, int> first;
  for (const DeviceInfo& d : p.devices) {
    if (!d.name) continue;
    auto [it, inserted] = first.emplace(*d.name, d.index);
    if (inserted) continue;
    out->push_back(Warning{d.index, "name",
                           "name '" + *d.name + "' is also the name of device " +
                               std::to_string(it->second) +
                               "; NCCL keys its topology by device name"});
  }
}

}  // namespace

std::vector<Warning> checkPlugin(const PluginInfo& plugin) {
  std::vector<Warning> out;
  if (plugin.finalizeResult != ncclSuccess) {
    out.push_back(Warning{
        -1, "finalize", std::string("finalize failed with ") + resultText(plugin.finalizeResult)});
  }
  if (plugin.deviceCount > static_cast<int>(plugin.devices.size())) {
    out.push_back(Warning{-1, "devices",
                          "devices() reported " + std::to_string(plugin.deviceCount) +
                              "; only the first " + std::to_string(plugin.devices.size()) +
                              " were inspected"});
  }
  for (const DeviceInfo& d : plugin.devices) DeviceChecker(plugin, d, &out).run();
  checkDuplicateNames(plugin, &out);
  return out;
}

}  // namespace ncclnet::info
