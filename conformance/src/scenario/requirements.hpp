// SPDX-License-Identifier: Apache-2.0
// What a scenario needs of the plugin and the host before it can say
// anything: an ABI range, grouped receives, an UNPACK device, GPU memory.
// The coordinator judges them from what the probe learned, before any rank
// is started, so a scenario that cannot run here costs no process; each
// rank judges them again on what its own table and host show (the probe
// saw the newest table on the coordinator's node), with the same words.
// An unmet requirement is a NotRun whose reason names it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ncclnet/abi/net.h"

namespace conformance {

struct Requirements {
  int minAbi = NCCLNET_ABI_OLDEST;  // the ABI versions the scenario applies to
  int maxAbi = NCCLNET_ABI_NEWEST;
  bool groupedReceives = false;  // maxRecvs > 1
  bool unpackDevice = false;     // netDeviceType UNPACK (v7+ tables)
  bool cudaMemory = false;       // a CUDA GPU and a plugin that advertises NCCL_PTR_CUDA
  bool dmaBuf = false;           // cudaMemory, NCCL_PTR_DMABUF, regMrDmaBuf and a GPU that exports
  // A real NCCL job (scenario/nccl_job.hpp): a GPU, nccl-driver and its
  // NCCL; run once, through the table that NCCL takes.
  bool ncclJob = false;
  // The library's ncclRmaPlugin_v14 (docs/gin-rma.md); run once, with the
  // plugin's newest net table: the RMA table does not change with it.
  bool rmaTable = false;
  // The library's ncclCollNetPlugin_v12 or _v11 (docs/collnet.md); run once,
  // with the plugin's newest net table: NCCL takes the CollNet table of the
  // same version as the net table, and the suite drives the newest it knows.
  bool collNetTable = false;
};

// The CUDA driver of one host, as a rank opens it (ncclnet/cuda_driver.hpp).
struct GpuFacts {
  bool available = false;
  std::string whyNot;  // "not available: ..." when !available
  int driverVersion = 0;
  std::vector<bool> exportsDmaBuf;  // per device; its size is the device count
  // This process's driver (opens it: never in a process that forks ranks).
  static GpuFacts ofThisProcess();
};

// What the requirements are judged on: device 0 of the plugin through the
// table of `version`, and the GPUs of the host.
struct Capabilities {
  int version = 0;
  int ptrSupport = 0;
  int maxRecvs = 1;
  int netDeviceType = 0;  // NCCL_NET_DEVICE_HOST
  bool regMrDmaBuf = false;
  std::vector<int> exported;  // every ncclNetPlugin_vN the library exports, newest first
  bool rmaTable = false;      // the library exports ncclRmaPlugin_v14
  bool collNetTable = false;  // the library exports ncclCollNetPlugin_v12 or _v11
  GpuFacts gpus;
};

// "requires <what>: <why not here>" for the first requirement `caps` does
// not meet, checked for the GPUs of ranks [firstRank, firstRank + ranks)
// (rank r uses GPU r % count, as the GpuMemory scenarios do); nullopt when
// every one is met.
std::optional<std::string> unmetRequirement(const Requirements& needs, const Capabilities& caps,
                                            int firstRank, int ranks);

// Whether judging `needs` takes the plugin's properties or the GPUs (the
// ABI range needs neither).
bool asksThePlugin(const Requirements& needs);

class Ctx;
// What a rank sees: its own table's properties of device 0 and, when the
// requirements name a GPU, its host's driver, opened before the plugin is
// first asked (a plugin may offer GPU memory only to a process that has
// the CUDA driver loaded, as NCCL's proxy always has).
Capabilities capabilitiesOf(Ctx& c, const Requirements& needs);

// "v7+" for the --list column, or "v7..v9" when the range is closed.
std::string abiRangeText(const Requirements& needs);

}  // namespace conformance
