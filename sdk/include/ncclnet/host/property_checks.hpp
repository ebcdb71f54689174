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
  Latency,         // finite, >= 0 us
  MaxComms,        // >= 1
  MaxRecvs,        // 1..8
  PtrSupport,      // HOST set, no unknown bits, DMABUF only with regMrDmaBuf
  GdrPlacement,    // advice: CUDA/DMABUF without pciPath leaves GPUDirect off
  DeviceType,      // HOST, or UNPACK at the version NCCL accepts
  MaxBytes,        // maxP2pBytes, maxCollBytes in (0, 1 TiB]
  VirtualDevices,  // vProps.ndevs within the ABI's width, devs are devices
  NewerFields,     // maxMultiRequestSize >= 1 (v11+), railId/planeId >= -1 (v12)
};

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
