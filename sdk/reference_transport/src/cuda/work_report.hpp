// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: what the CUDA device peer's
// kernel reported, in words — one line per work that did not finish, in the
// host peer's format ("recv LL work 3, slice 2/5 (step 18, payload offset
// 65536): timed out waiting for LL line flags ...").
#pragma once

#include <string>
#include <vector>

#include "kernel_abi.hpp"
#include "ncclnet/abi/result.h"

namespace ncclnet::transport::cuda_peer {

struct LaunchOutcome {
  ncclResult_t result = ncclSuccess;  // ncclSystemError: wrong data; ncclTimeout: stuck
  std::string detail;                 // the failure first, then what the others waited for
};

// From finished works (`descs` indexed like `status`).
LaunchOutcome summarize(const std::vector<WorkDesc>& descs, const WorkStatus* status);
// For a launch still running: what each unfinished work waits for now.
std::string describeRunning(const std::vector<WorkDesc>& descs, const WorkStatus* status);

}  // namespace ncclnet::transport::cuda_peer
