// SPDX-License-Identifier: Apache-2.0
// sdk-socket: what the net table and the CollNet table both say of one
// device. NCCL's topology takes a NIC's speed, latency, port, guid and
// connection limit from the CollNet table where the library has one, and
// from the net table only for what CollNet left unsaid (graph/topo.cc
// ncclTopoPopulateNics imports CollNet first and sets those attributes
// with xmlInitAttr): the two tables must describe the device alike, or
// exporting CollNet would change every job's topology.
#pragma once

#include "ncclnet/abi/net_v12.h"
#include "ncclnet/interfaces.hpp"

namespace ncclnet::socket {

// Comms per device: far more than NCCL opens (channels x peers).
constexpr int kMaxComms = 65536;

inline void describeDevice(const Interface& itf, ncclNetProperties_v12_t* props) {
  props->name = const_cast<char*>(itf.name.c_str());
  props->pciPath = itf.pciPath.empty() ? nullptr : const_cast<char*>(itf.pciPath.c_str());
  props->guid = itf.guid;
  props->speed = itf.speedMbps;
  props->maxComms = kMaxComms;
}

}  // namespace ncclnet::socket
