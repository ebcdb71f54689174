// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: small helpers around the
// CUDA runtime for the CUDA memory provider and device peer.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "ncclnet/abi/result.h"

namespace ncclnet::transport::cuda_peer {

// "cudaErrorNoDevice (no CUDA-capable device is detected)".
std::string describe(cudaError_t err);

// ncclSuccess when `device` is a visible CUDA device; else why not.
ncclResult_t checkDevice(int device, std::string* why);

// Makes `device` current on this thread for its scope and restores the
// previous one (callers' threads keep their own current device).
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  cudaError_t error() const { return error_; }

 private:
  int previous_ = -1;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace ncclnet::transport::cuda_peer
