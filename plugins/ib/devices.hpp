// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the devices NCCL sees — one per active port that NCCL_IB_HCA
// keeps, ordered by PCI path so every rank numbers them alike — and the
// RoCE GID each one uses.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "async_events.hpp"
#include "config.hpp"
#include "ibv_api.hpp"
#include "mr_cache.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"

namespace ncclnet::ib {

// One opened HCA: its context, the protection domain every comm on it
// shares, the registration cache of that PD, the kinds of memory it can
// register (gpu_memory.hpp has the rule), and the watcher of its async
// events (stopped first when the HCA closes).
struct Hca {
  Hca(const IbvApi& api, ibv_context* context);
  ~Hca();
  Hca(const Hca&) = delete;
  Hca& operator=(const Hca&) = delete;

  const IbvApi& api;
  ibv_context* context;
  ibv_pd* pd = nullptr;
  ibv_device_attr attr{};
  std::string name;
  std::unique_ptr<MrCache> mrs;
  bool dmaBuf = false;                   // ibv_reg_dmabuf_mr works
  int ptrSupport = NCCL_PTR_HOST;        // HOST | CUDA | DMABUF
  bool relaxedOrdering = false;          // NCCL's registrations carry IBV_ACCESS_RELAXED_ORDERING
  std::unique_ptr<AsyncWatcher> events;  // null when the verbs library cannot deliver events
};

struct Port {
  std::string name;  // the HCA's name; "name:port" on multi-port HCAs
  std::shared_ptr<Hca> hca;
  int port = 1;
  ibv_port_attr attr{};
  std::string pciPath;  // "" for a device with no PCI function
  uint64_t guid = 0;
  int speedMbps = 0;
  int gidIndex = 0;
  ibv_gid gid{};
  int pkeyIndex = 0;             // NCCL_IB_PKEY, when the port's P_Key table has it
  bool adaptiveRouting = false;  // NCCL_IB_ADAPTIVE_ROUTING, or the link layer's default
};

// Port speed in Mb/s from the verbs width and speed codes; 0 if unknown.
int portSpeedMbps(uint8_t activeWidth, int activeSpeed);

// Opens every HCA and keeps its usable ports. An empty result is not an
// error: `*why` then says what was found.
ncclResult_t discoverPorts(const IbvApi& api, const Config& config, const ncclnet::Logger& log,
                           std::vector<Port>* ports, std::string* why);

// NCCL_IB_PCI_RELAXED_ORDERING: 0 never; 1 and 2 when the verbs library
// has ibv_reg_mr_iova2 (the flag is optional, a device without it ignores
// it). 1 without it gets one WARN line and registers without.
bool relaxedOrderingFor(int mode, bool haveRegMrIova2, const std::string& library,
                        const ncclnet::Logger& log);
// NCCL_IB_ADAPTIVE_ROUTING: -2 means on for InfiniBand, off for RoCE.
bool adaptiveRoutingFor(int knob, uint8_t linkLayer);

// RoCE: NCCL_IB_GID_INDEX if set, else the first GID of the preferred
// address family and RoCE version. InfiniBand: index 0.
bool selectGid(const IbvApi& api, const Config& config, ibv_context* context, const char* ibdevPath,
               int port, const ibv_port_attr& attr, int* index, ibv_gid* gid, std::string* why);

}  // namespace ncclnet::ib
