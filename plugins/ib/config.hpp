// SPDX-License-Identifier: Apache-2.0
// sdk-ib: every knob the plugin reads, declared once with its default and
// help text (ncclnet-info --params lists them). Names and meanings follow
// NCCL's internal IB transport where one exists.
#pragma once

#include <cstdint>
#include <string>

#include "ncclnet/params.hpp"

namespace ncclnet::ib {

// Defaults live in the knob table (config.cc), once: read() fills every
// field, defaults() gives the table's defaults without the environment.
struct Config {
  std::string verbsLib;          // NCCL_IBVERBS_LIB
  std::string hca;               // NCCL_IB_HCA
  int gidIndex = 0;              // NCCL_IB_GID_INDEX (-1: choose)
  int addrFamily = 0;            // NCCL_IB_ADDR_FAMILY as AF_INET / AF_INET6
  int roceVersion = 0;           // NCCL_IB_ROCE_VERSION_NUM
  int qpsPerConnection = 0;      // NCCL_IB_QPS_PER_CONNECTION
  int timeout = 0;               // NCCL_IB_TIMEOUT
  int retryCnt = 0;              // NCCL_IB_RETRY_CNT
  int sl = 0;                    // NCCL_IB_SL (-1: the traffic class, else 0)
  int tc = 0;                    // NCCL_IB_TC (-1: the traffic class, else 0)
  int mtu = 0;                   // NCCL_IB_MTU as enum ibv_mtu (0: the port's active MTU)
  int pkeyIndex = 0;             // NCCL_IB_PKEY: index into the port's P_Key table
  bool useInline = false;        // NCCL_IB_USE_INLINE: control writes as inline data
  bool splitDataOnQps = false;   // NCCL_IB_SPLIT_DATA_ON_QPS: every message over every QP
  int adaptiveRouting = 0;       // NCCL_IB_ADAPTIVE_ROUTING (-2: on for IB, off for RoCE)
  int64_t arThreshold = 0;       // NCCL_IB_AR_THRESHOLD, bytes
  int relaxedOrdering = 0;       // NCCL_IB_PCI_RELAXED_ORDERING (0 off, 1 on, 2 when supported)
  std::string socketIfname;      // NCCL_SOCKET_IFNAME: where the handshake listens
  int64_t connectTimeoutMs = 0;  // NCCL_IB_CONNECT_TIMEOUT_MS
  bool gdrFlushDisable = false;  // NCCL_GDR_FLUSH_DISABLE

  static ncclResult_t read(ncclnet::ParamTable& params, Config* out);
  static Config defaults();
};

}  // namespace ncclnet::ib
