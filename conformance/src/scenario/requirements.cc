// SPDX-License-Identifier: Apache-2.0
// Judging a scenario's requirements, in the order a rank would trip over
// them: the ABI first, then the plugin's properties, then the GPUs.
#include "scenario/requirements.hpp"

#include "ncclnet/cuda_driver.hpp"
#include "scenario/check.hpp"
#include "scenario/ctx.hpp"
#include "scenario/nccl_job.hpp"

namespace conformance {

namespace {

// The first GPU that ranks [firstRank, firstRank + ranks) use and that
// cannot export DMA-BUF handles, or -1.
int firstGpuWithoutDmaBuf(const GpuFacts& gpus, int firstRank, int ranks) {
  int count = static_cast<int>(gpus.exportsDmaBuf.size());
  for (int r = firstRank; r < firstRank + ranks && count > 0; r++) {
    if (!gpus.exportsDmaBuf[static_cast<size_t>(r % count)]) return r % count;
  }
  return -1;
}

}  // namespace

GpuFacts GpuFacts::ofThisProcess() {
  const ncclnet::cuda::Driver& driver = ncclnet::cuda::Driver::get();
  GpuFacts facts;
  facts.available = driver.available();
  facts.whyNot = driver.whyNot();
  facts.driverVersion = driver.version();
  for (int d = 0; d < driver.deviceCount(); d++)
    facts.exportsDmaBuf.push_back(driver.dmaBufSupported(d));
  return facts;
}

Capabilities capabilitiesOf(Ctx& c, const Requirements& needs) {
  Capabilities caps;
  // --device cuda: the transport's device peer sets CUDA up first as well.
  if (needs.cudaMemory || needs.dmaBuf || needs.ncclJob || c.profile().device == "cuda")
    caps.gpus = GpuFacts::ofThisProcess();
  caps.version = c.version();
  caps.exported = c.plugin().exportedVersions();
  const ncclNetProperties_v12_t& p = c.props();
  caps.ptrSupport = p.ptrSupport;
  caps.maxRecvs = p.maxRecvs;
  caps.netDeviceType = static_cast<int>(p.netDeviceType);
  caps.regMrDmaBuf = c.net().provides(ncclnet::host::Optional::RegMrDmaBuf);
  caps.rmaTable = c.plugin().symbol("ncclRmaPlugin_v14") != nullptr;
  caps.collNetTable = c.plugin().symbol("ncclCollNetPlugin_v12") != nullptr ||
                      c.plugin().symbol("ncclCollNetPlugin_v11") != nullptr;
  return caps;
}

bool asksThePlugin(const Requirements& needs) {
  return needs.groupedReceives || needs.unpackDevice || needs.cudaMemory || needs.dmaBuf ||
         needs.ncclJob;
}

namespace {

// A real NCCL job needs a GPU and the driver, and runs once per plugin:
// NCCL takes one table, whatever --abi lists.
std::optional<std::string> unmetNcclJob(const Capabilities& caps) {
  if (!caps.gpus.available)
    return "requires a real NCCL job: no GPU: CUDA driver " + caps.gpus.whyNot;
  const NcclJobHost& host = ncclJobHost();
  if (!host.usable()) return "requires a real NCCL job: " + host.whyNot;
  int taken = host.abiTaken(caps.exported);
  if (taken == 0)
    return format(
        "requires a real NCCL job: NCCL %s takes ncclNetPlugin_v%d or older, and the "
        "plugin exports none of them",
        host.ncclVersion.c_str(), host.newestAbi);
  if (caps.version != taken)
    return format(
        "a real NCCL job runs once, through the table NCCL %s takes (v%d); this run is v%d",
        host.ncclVersion.c_str(), taken, caps.version);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unmetRequirement(const Requirements& needs, const Capabilities& caps,
                                            int firstRank, int ranks) {
  if (caps.version < needs.minAbi)
    return format("applies from ABI v%d on; this run is v%d", needs.minAbi, caps.version);
  if (caps.version > needs.maxAbi)
    return format("applies up to ABI v%d; this run is v%d", needs.maxAbi, caps.version);
  if (needs.groupedReceives && caps.maxRecvs < 2)
    return format("requires grouped receives: maxRecvs is %d", caps.maxRecvs);
  // A v6 table has no netDeviceType: NCCL takes the device as HOST.
  int deviceType = caps.version < 7 ? NCCL_NET_DEVICE_HOST : caps.netDeviceType;
  if (needs.unpackDevice && deviceType != NCCL_NET_DEVICE_UNPACK)
    return format("requires an UNPACK device: netDeviceType is %d through ABI v%d", deviceType,
                  caps.version);
  if (needs.ncclJob) {
    if (auto unmet = unmetNcclJob(caps)) return unmet;
  }
  if (needs.rmaTable) {
    if (!caps.rmaTable)
      return std::string("requires an RMA table: the library exports no ncclRmaPlugin_v14");
    int newest = caps.exported.empty() ? 0 : caps.exported.front();
    if (caps.version != newest)
      return format(
          "RMA scenarios run once, with the plugin's newest net table (v%d); this run is v%d",
          newest, caps.version);
  }
  if (needs.collNetTable) {
    if (!caps.collNetTable)
      return std::string(
          "requires a CollNet table: the library exports neither ncclCollNetPlugin_v12 nor "
          "ncclCollNetPlugin_v11");
    int newest = caps.exported.empty() ? 0 : caps.exported.front();
    if (caps.version != newest)
      return format(
          "CollNet scenarios run once, with the plugin's newest net table (v%d); this run is v%d",
          newest, caps.version);
  }
  if (!needs.cudaMemory && !needs.dmaBuf) return std::nullopt;
  if (!caps.gpus.available)
    return "requires CUDA device memory: no GPU: CUDA driver " + caps.gpus.whyNot;
  // The RMA table has properties of its own: its scenario asks them.
  if (needs.rmaTable) return std::nullopt;
  if (!(caps.ptrSupport & NCCL_PTR_CUDA))
    return format("requires CUDA device memory: the plugin does not advertise NCCL_PTR_CUDA (0x%x)",
                  caps.ptrSupport);
  if (!needs.dmaBuf) return std::nullopt;
  if (!(caps.ptrSupport & NCCL_PTR_DMABUF))
    return format("requires DMA-BUF: the plugin does not advertise NCCL_PTR_DMABUF (0x%x)",
                  caps.ptrSupport);
  if (!caps.regMrDmaBuf)
    return std::string(
        "requires DMA-BUF: regMrDmaBuf is NULL (Properties.PtrSupportCoherent names the "
        "contradiction)");
  int gpu = firstGpuWithoutDmaBuf(caps.gpus, firstRank, ranks);
  if (gpu >= 0)
    return format(
        "requires DMA-BUF: GPU %d cannot export DMA-BUF handles (driver %d, "
        "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)",
        gpu, caps.gpus.driverVersion);
  return std::nullopt;
}

std::string abiRangeText(const Requirements& needs) {
  if (needs.maxAbi >= NCCLNET_ABI_NEWEST) return format("v%d+", needs.minAbi);
  return format("v%d..v%d", needs.minAbi, needs.maxAbi);
}

}  // namespace conformance
