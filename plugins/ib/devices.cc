// SPDX-License-Identifier: Apache-2.0
// sdk-ib: device discovery, properties and GID selection.
#include "devices.hpp"

#include <endian.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "gpu_memory.hpp"
#include "ncclnet/name_list.hpp"

namespace ncclnet::ib {
namespace {

// realpath of <ibdev_path>/device: the PCI function's /sys directory.
std::string pciPathOf(const char* ibdevPath) {
  std::string link = std::string(ibdevPath) + "/device";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  return resolved;
}

// RoCE version of a GID: from the provider when it can tell, else sysfs,
// else assume v2 (what every current NIC's default GIDs are).
int roceVersionOf(const IbvApi& api, ibv_context* context, const char* ibdevPath, int port,
                  int index) {
  if (api.queryGidEx != nullptr) {
    ibv_gid_entry entry;
    if (api.queryGidEx(context, port, index, &entry, 0, sizeof(entry)) == 0) {
      return entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? 1 : 2;
    }
  }
  std::ifstream types(std::string(ibdevPath) + "/ports/" + std::to_string(port) +
                      "/gid_attrs/types/" + std::to_string(index));
  std::string text;
  if (std::getline(types, text)) return text.find("v2") != std::string::npos ? 2 : 1;
  return 2;
}

bool isZero(const ibv_gid& gid) {
  static const ibv_gid zero{};
  return std::memcmp(&gid, &zero, sizeof(gid)) == 0;
}

int familyOf(const ibv_gid& gid) {
  return IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr*>(gid.raw)) ? AF_INET : AF_INET6;
}

}  // namespace

Hca::Hca(const IbvApi& a, ibv_context* c) : api(a), context(c) {}

Hca::~Hca() {
  events.reset();  // the watcher reads the context: it stops first
  mrs.reset();
  if (pd != nullptr) api.deallocPd(pd);
  if (context != nullptr) api.closeDevice(context);
}

int portSpeedMbps(uint8_t activeWidth, int activeSpeed) {
  int lanes = 0;
  switch (activeWidth) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return 0;
  }
  int laneMbps = 0;
  switch (activeSpeed) {
    case 1: laneMbps = 2500; break;      // SDR
    case 2: laneMbps = 5000; break;      // DDR
    case 4: laneMbps = 10000; break;     // QDR
    case 8: laneMbps = 10000; break;     // FDR10
    case 16: laneMbps = 14000; break;    // FDR
    case 32: laneMbps = 25000; break;    // EDR
    case 64: laneMbps = 50000; break;    // HDR
    case 128: laneMbps = 100000; break;  // NDR
    case 256: laneMbps = 200000; break;  // XDR (reported through active_speed_ex)
    default: return 0;
  }
  return lanes * laneMbps;
}

bool relaxedOrderingFor(int mode, bool haveRegMrIova2, const std::string& library,
                        const ncclnet::Logger& log) {
  if (mode == 0) return false;
  if (haveRegMrIova2) return true;
  if (mode == 1) {
    NCCLNET_WARN(log,
                 "NCCL_IB_PCI_RELAXED_ORDERING=1, but %s has no ibv_reg_mr_iova2 (IBVERBS_1.8, "
                 "rdma-core >= 28): registering without relaxed ordering",
                 library.c_str());
  }
  return false;
}

bool adaptiveRoutingFor(int knob, uint8_t linkLayer) {
  if (knob == -2) return linkLayer == IBV_LINK_LAYER_INFINIBAND;
  return knob != 0;
}

bool selectGid(const IbvApi& api, const Config& config, ibv_context* context, const char* ibdevPath,
               int port, const ibv_port_attr& attr, int* index, ibv_gid* gid, std::string* why) {
  if (attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
    *index = 0;
    return api.queryGid(context, port, 0, gid) == 0;
  }
  if (config.gidIndex >= 0) {
    if (config.gidIndex >= attr.gid_tbl_len ||
        api.queryGid(context, port, config.gidIndex, gid) != 0 || isZero(*gid)) {
      *why = "NCCL_IB_GID_INDEX=" + std::to_string(config.gidIndex) + " is not a valid GID";
      return false;
    }
    *index = config.gidIndex;
    return true;
  }
  int fallback = -1;
  for (int i = 0; i < attr.gid_tbl_len; i++) {
    ibv_gid candidate;
    if (api.queryGid(context, port, i, &candidate) != 0 || isZero(candidate)) continue;
    if (fallback < 0) fallback = i;
    if (familyOf(candidate) != config.addrFamily) continue;
    if (roceVersionOf(api, context, ibdevPath, port, i) != config.roceVersion) continue;
    *index = i;
    *gid = candidate;
    return true;
  }
  if (fallback < 0) {
    *why = "no GID configured on the port";
    return false;
  }
  *index = fallback;  // NCCL falls back the same way, with a warning
  return api.queryGid(context, port, fallback, gid) == 0;
}

ncclResult_t discoverPorts(const IbvApi& api, const Config& config, const ncclnet::Logger& log,
                           std::vector<Port>* ports, std::string* why) {
  int count = 0;
  ibv_device** list = api.getDeviceList(&count);
  if (list == nullptr || count == 0) {
    *why = "no verbs device in " + api.path +
           (list == nullptr ? std::string(": ") + std::strerror(errno) : "");
    if (list != nullptr) api.freeDeviceList(list);
    return ncclSuccess;
  }
  // NCCL_IB_HCA, read as NCCL reads it.
  const NameList filter = NameList::parse(config.hca, kMaxHcaEntries);
  const bool peerMemory = peerMemoryLoaded();
  const bool relaxedOrdering =
      relaxedOrderingFor(config.relaxedOrdering, api.regMrIova2 != nullptr, api.path, log);
  std::string skipped;
  for (int d = 0; d < count; d++) {
    const char* name = api.getDeviceName(list[d]);
    ibv_context* context = api.openDevice(list[d]);
    if (context == nullptr) {
      skipped += std::string(" ") + name + "(open failed)";
      continue;
    }
    auto hca = std::make_shared<Hca>(api, context);
    hca->name = name;
    if (api.queryDevice(context, &hca->attr) != 0) {
      skipped += std::string(" ") + name + "(query failed)";
      continue;
    }
    for (int p = 1; p <= hca->attr.phys_port_cnt; p++) {
      Port port;
      port.port = p;
      if (api.queryPort(context, static_cast<uint8_t>(p), &port.attr) != 0) continue;
      std::string label = std::string(name) + ":" + std::to_string(p);
      if (port.attr.state != IBV_PORT_ACTIVE) {
        skipped += " " + label + "(not active)";
        continue;
      }
      if (port.attr.link_layer != IBV_LINK_LAYER_INFINIBAND &&
          port.attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
        skipped += " " + label + "(link layer)";
        continue;
      }
      if (!filter.keeps(name, p)) {
        skipped += " " + label + "(NCCL_IB_HCA)";
        continue;
      }
      std::string gidWhy;
      if (!selectGid(api, config, context, list[d]->ibdev_path, p, port.attr, &port.gidIndex,
                     &port.gid, &gidWhy)) {
        skipped += " " + label + "(" + gidWhy + ")";
        continue;
      }
      port.name = hca->attr.phys_port_cnt > 1 ? label : name;
      port.pkeyIndex = config.pkeyIndex;
      if (config.pkeyIndex >= port.attr.pkey_tbl_len) {
        NCCLNET_WARN(log, "NCCL_IB_PKEY=%d is beyond %s's P_Key table (%d entries): using index 0",
                     config.pkeyIndex, label.c_str(), static_cast<int>(port.attr.pkey_tbl_len));
        port.pkeyIndex = 0;
      }
      port.adaptiveRouting = adaptiveRoutingFor(config.adaptiveRouting, port.attr.link_layer);
      port.hca = hca;
      port.pciPath = pciPathOf(list[d]->ibdev_path);
      port.guid = be64toh(hca->attr.node_guid);
      port.speedMbps = portSpeedMbps(port.attr.active_width, port.attr.active_speed);
      ports->push_back(std::move(port));
    }
    if (hca.use_count() > 1) {  // some port kept it: set up its PD and cache
      hca->pd = api.allocPd(context);
      if (hca->pd == nullptr) {
        NCCLNET_WARN(log, "%s: ibv_alloc_pd failed: %s", name, std::strerror(errno));
        ports->erase(std::remove_if(ports->begin(), ports->end(),
                                    [&](const Port& p) { return p.hca == hca; }),
                     ports->end());
        continue;
      }
      hca->relaxedOrdering = relaxedOrdering;
      hca->mrs = std::make_unique<MrCache>(api, hca->pd, relaxedOrdering);
      hca->dmaBuf = probeDmaBuf(api, hca->pd);
      hca->ptrSupport = ptrSupportFor(peerMemory, hca->dmaBuf);
      std::string eventsWhy;
      hca->events = AsyncWatcher::start(api, context, name, log, &eventsWhy);
      if (hca->events == nullptr) {
        NCCLNET_INFO(log, NCCL_INIT | NCCL_NET, "%s: async events not watched: %s", name,
                     eventsWhy.c_str());
      }
    }
  }
  api.freeDeviceList(list);
  // PCI order, then name and port: every rank of a homogeneous cluster
  // numbers its devices alike.
  std::stable_sort(ports->begin(), ports->end(), [](const Port& a, const Port& b) {
    if (a.pciPath.empty() != b.pciPath.empty()) return !a.pciPath.empty();
    if (a.pciPath != b.pciPath) return a.pciPath < b.pciPath;
    if (a.hca->name != b.hca->name) return a.hca->name < b.hca->name;
    return a.port < b.port;
  });
  if (ports->empty())
    *why = "no usable port among " + std::to_string(count) + " device(s):" + skipped;
  else if (!skipped.empty())
    NCCLNET_INFO(log, NCCL_INIT | NCCL_NET, "ports not used:%s", skipped.c_str());
  return ncclSuccess;
}

}  // namespace ncclnet::ib
