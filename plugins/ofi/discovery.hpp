// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: which provider NICs become NCCL devices, and what they are.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"
#include "fid.hpp"
#include "ncclnet/log.hpp"
#include "tag.hpp"

namespace ncclnet::ofi {

// One NCCL device: one domain of the chosen provider.
struct Nic {
  InfoPtr info;          // the fi_info its endpoint is opened from
  std::string name;      // the domain name (a netdev for tcp, "shm" for shm)
  std::string provider;  // e.g. "tcp;ofi_rxm"
  std::string pciPath;   // resolved /sys PCI directory, "" when there is none
  int speedMbps = 0;
  uint64_t guid = 0;
  bool loopback = false;
  bool hmem = false;         // GPU memory: FI_HMEM plus the RMA read that flushes it
  bool dmabuf = false;       // NCCL_PTR_DMABUF: see dmabuf.hpp
  std::string dmabufWhyNot;  // why not, for regMrDmaBuf's error ("" when dmabuf)
  TagLayout tags;
};

// Runs fi_getinfo for reliable-datagram endpoints with tagged messages and
// keeps one provider's NICs (Config::provider, else libfabric's first
// choice), one per domain, filtered by Config::domains. An empty result
// comes with the reason in `why`.
ncclResult_t discoverNics(const Config& config, const Logger& log, std::vector<Nic>* nics,
                          std::string* why);

// Helpers exposed for tests.
bool isLoopbackInfo(const fi_info* info);
std::vector<std::string> splitList(const std::string& list);

}  // namespace ncclnet::ofi
