// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: every knob the plugin reads, resolved once at init.
#pragma once

#include <string>

#include "ncclnet/params.hpp"

namespace ncclnet::ofi {

// Defaults live in the knob table (config.cc), once; read() fills every field.
struct Config {
  std::string provider;         // NCCLNET_OFI_PROVIDER ("" = libfabric's first choice)
  std::string domains;          // NCCLNET_OFI_DOMAINS: comma list of domains (NICs) to use
  bool hmem = false;            // NCCLNET_OFI_HMEM: offer GPU memory where the provider can
  bool mrCache = false;         // NCCLNET_OFI_MR_CACHE: share registrations of the same pages
  int cqReadCount = 0;          // NCCLNET_OFI_CQ_READ_COUNT: completions taken per fi_cq_read
  int closeTimeoutMs = 0;       // NCCLNET_OFI_CLOSE_TIMEOUT_MS: wait for cancels on close
  int probeIntervalMs = 0;      // NCCLNET_OFI_PROBE_INTERVAL_MS: ping a peer we wait on this often
  int peerTimeoutMs = 0;        // NCCLNET_OFI_PEER_TIMEOUT_MS: a peer silent this long is gone
  int strayTimeoutMs = 0;       // NCCLNET_OFI_STRAY_TIMEOUT_MS: idle foreign connections closed
  bool progressThread = false;  // NCCLNET_OFI_PROGRESS_THREAD: a thread per endpoint drives it
  int endpoints = 0;  // NCCLNET_OFI_ENDPOINTS: endpoints per device, comms spread over them

  static ncclResult_t read(ParamTable& params, Config* out);
};

}  // namespace ncclnet::ofi
