// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): the rules a plugin's device properties must meet,
// each as NCCL's source reads the field. One checker for every host:
// ncclnet-info turns findings into warnings, ncclnet-conformance into
// verdicts of the contract rule each finding belongs to.
//
//   PluginShape shape{net.version(), count, net.provides(Optional::RegMrDmaBuf)};
//   for (const PropertyFinding& f : checkDeviceProperties(shape, dev, props)) ...
#pragma once

#include <string>
#include <vector>

#include "ncclnet/abi/net.h"

namespace ncclnet::host {

// What a finding is about; each is one family of checks below.
enum class PropertyRule {
  Name,            // a non-empty name, unique among the devices
  PciPath,         // NULL, or an existing directory under /sys
  Speed,           // > 0 Mb/s
  Latency,         // finite, above kLatencyFailsAt: below, NCCL's tuner fails jobs
  MaxComms,        // >= 1 through a v6 table (NCCL up to 2.18.1 reads it)
  Tolerated,       // a value NCCL runs with but which misleads it: a negative
                   // latency above the bound, maxComms < 1 through v7+
  MaxRecvs,        // 1..8
  PtrSupport,      // HOST set, no unknown bits, DMABUF only with regMrDmaBuf
  GdrPlacement,    // advice: CUDA/DMABUF without pciPath leaves GPUDirect off
  DeviceType,      // HOST, or UNPACK at the version NCCL accepts
  MaxBytes,        // maxP2pBytes, maxCollBytes in (0, 1 TiB]
  VirtualDevices,  // vProps.ndevs within the ABI's width, devs are devices
  NewerFields,     // maxMultiRequestSize >= 1 (v11+), railId/planeId >= -1 (v12)
};

// The latency (µs) at and below which some NCCL job fails: NCCL truncates
// it to an integer and adds it to every inter-node step of its model
// (src/graph/topo.cc ncclTopoPopulateNics, src/graph/tuning.cc
// ncclTopoTuneModel); the smallest network step NCCL 2.28 models is 2.7 µs
// (Ring, LL), so at -4 a Ring/LL all-reduce over enough nodes predicts a
// negative time and fails (docs/contract.md rule 14).
constexpr double kLatencyFailsAt = -4.0;

struct PropertyFinding {
  int device = -1;
  PropertyRule rule = PropertyRule::Name;
  std::string field;    // the property, as the ABI header names it
  std::string message;  // what was found, and what NCCL does with it
};

// What the checks need to know of the plugin besides one device.
struct PluginShape {
  int version = 12;  // the ABI version the properties came through
  int deviceCount = 0;
  bool providesRegMrDmaBuf = false;
};

// The first ABI version whose properties carry `field` (profile and ABI
// spellings both: "vProps" and "vDevs"). Older tables leave it at NCCL's
// default, so a check of it says nothing about the NIC.
int propertySince(const std::string& field);

// Every rule above but the names' uniqueness, for one device.
std::vector<PropertyFinding> checkDeviceProperties(const PluginShape& shape, int device,
                                                   const ncclNetProperties_v12_t& props);

// Devices named like an earlier one (NULL names are skipped: the device's
// own check reports them). names[i] is device i's.
std::vector<PropertyFinding> checkDeviceNames(const std::vector<const char*>& names);

}  // namespace ncclnet::host
