// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): a rank on a CUDA GPU (memory provider
// and device peer on the same device).
#include "ncclnet/transport/cuda_device_peer.hpp"

namespace ncclnet::transport {

ncclResult_t useCudaDevice(int device, RankOptions* options, std::string* why) {
  std::shared_ptr<CudaMemoryProvider> memory;
  ncclResult_t res = CudaMemoryProvider::create(device, &memory, why);
  if (res != ncclSuccess) return res;
  std::unique_ptr<CudaDevicePeer> peer;
  res = CudaDevicePeer::create(device, &peer, why);
  if (res != ncclSuccess) return res;
  options->transport.memory = std::move(memory);
  // makeDevice is copyable and called once: it hands over the peer made here.
  auto made = std::make_shared<std::unique_ptr<DevicePeer>>(std::move(peer));
  options->makeDevice = [made] { return std::move(*made); };
  return ncclSuccess;
}

}  // namespace ncclnet::transport
