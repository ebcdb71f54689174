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

#include "config.hpp"
#include "ibv_api.hpp"
#include "mr_cache.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"

namespace sdkib {

// One opened HCA: its context, the protection domain every comm on it
// shares, the registration cache of that PD, and the kinds of memory it
// can register (gpu_memory.hpp has the rule).
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
  bool dmaBuf = false;             // ibv_reg_dmabuf_mr works
  int ptrSupport = NCCL_PTR_HOST;  // HOST | CUDA | DMABUF
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
};

// Port speed in Mb/s from the verbs width and speed codes; 0 if unknown.
int portSpeedMbps(uint8_t activeWidth, int activeSpeed);

// Opens every HCA and keeps its usable ports. An empty result is not an
// error: `*why` then says what was found.
ncclResult_t discoverPorts(const IbvApi& api, const Config& config, const ncclnet::Logger& log,
                           std::vector<Port>* ports, std::string* why);

// RoCE: NCCL_IB_GID_INDEX if set, else the first GID of the preferred
// address family and RoCE version. InfiniBand: index 0.
bool selectGid(const IbvApi& api, const Config& config, ibv_context* context, const char* ibdevPath,
               int port, const ibv_port_attr& attr, int* index, ibv_gid* gid, std::string* why);

}  // namespace sdkib
