// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: CUDA runtime helpers.
#include "runtime_util.hpp"

namespace ncclnet::transport::cuda_peer {

std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

ScopedDevice::ScopedDevice(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != device) error_ = cudaSetDevice(device);
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace ncclnet::transport::cuda_peer
