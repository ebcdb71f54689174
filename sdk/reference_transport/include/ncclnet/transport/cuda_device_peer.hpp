// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): a DevicePeer that runs NCCL's kernel
// side of the net protocol as CUDA kernels (library
// ncclnet_reference_transport_cuda; this header needs no CUDA headers).
//
// Same protocol as HostDevicePeer (host_device_peer.hpp), on the GPU:
// head/tail/connFifo in host-mapped memory, step buffers in pinned host
// memory or, with ConnectionSpec::useGdr, in device memory; the pattern is
// produced and every received byte checked on the GPU. The Transport must
// use a CudaMemoryProvider on the same device, so that every
// DeviceConnection address is reachable from the kernels.
//
//   RankOptions options;
//   std::string why;
//   int gpus = cudaDeviceCount(&why);
//   if (gpus == 0 || useCudaDevice(rank % gpus, &options, &why) != ncclSuccess) skip(why);
//   Rank rank;
//   makeRank(net, std::move(options), &rank);
//
// A launch is one kernel on the peer's own stream with one block per
// connection, which plays that connection's works in launch order;
// launches run one after another. Every wait in the kernel gives up after
// the launch's timeout and says what it waited for; destroying the peer
// stops running kernels.
#pragma once

#include <memory>
#include <string>

#include "ncclnet/log.hpp"
#include "ncclnet/transport/cuda_memory.hpp"
#include "ncclnet/transport/device_peer.hpp"
#include "ncclnet/transport/workload.hpp"

namespace ncclnet::transport {

class CudaDevicePeer final : public DevicePeer {
 public:
  // A peer on CUDA device `device`; fails with *why when it is not usable.
  static ncclResult_t create(int device, std::unique_ptr<CudaDevicePeer>* out, std::string* why,
                             Logger logger = Logger(nullptr, "NET/cuda-device"));
  // Stops the kernels still running (they see the stop word at their next
  // poll) and waits for them, bounded.
  ~CudaDevicePeer() override;
  CudaDevicePeer(const CudaDevicePeer&) = delete;
  CudaDevicePeer& operator=(const CudaDevicePeer&) = delete;

  // ncclInvalidArgument for a malformed work, ncclInvalidUsage when the
  // works' memory is not reachable from the GPU or needs more blocks than fit
  // on it at once, ncclUnhandledCudaError when the launch fails.
  ncclResult_t launch(std::vector<DeviceWork> works, std::chrono::milliseconds timeout,
                      std::shared_ptr<DeviceCompletion>* out) override;

  int device() const;

  class Impl;

 private:
  explicit CudaDevicePeer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// Sets `options` up for a rank on CUDA device `device`: a CudaMemoryProvider
// for its Transport and a CudaDevicePeer (created now, so that *why can say
// what is missing).
ncclResult_t useCudaDevice(int device, RankOptions* options, std::string* why);

}  // namespace ncclnet::transport
