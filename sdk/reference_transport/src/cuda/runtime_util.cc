// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: CUDA runtime helpers.
#include "runtime_util.hpp"

#include "ncclnet/transport/cuda_memory.hpp"

namespace ncclnet::transport::cuda_peer {

std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

ncclResult_t checkDevice(int device, std::string* why) {
  int count = cudaDeviceCount(why);
  if (count == 0) return ncclSystemError;
  if (device < 0 || device >= count) {
    *why = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
           " visible)";
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

ScopedDevice::ScopedDevice(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != device) error_ = cudaSetDevice(device);
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace ncclnet::transport::cuda_peer
