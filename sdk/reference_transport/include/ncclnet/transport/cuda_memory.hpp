// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): connection memory on a CUDA GPU, as
// NCCL allocates it (library ncclnet_reference_transport_cuda, built when
// the CUDA toolkit is found; this header needs no CUDA headers).
//
//   std::shared_ptr<CudaMemoryProvider> memory;
//   std::string why;
//   if (CudaMemoryProvider::create(/*device=*/0, &memory, &why) != ncclSuccess) skip(why);
//   TransportOptions options;
//   options.memory = memory;
//
//   allocHost    pinned host memory mapped into the GPU (cudaHostAlloc):
//                cpu() is the host address the proxy uses, gpu() the
//                device's mapping of it (control words; buffers without GDR)
//   allocDevice  device memory (cudaMalloc), page-aligned and zeroed:
//                cpu() == gpu() == the device address, which is what NCCL
//                hands the plugin (regMr, isend, irecv) for GPU-direct buffers
//   DMA-BUF      when the GPU and driver can export it
//                (cuMemGetHandleForAddressRange over the page-aligned range)
#pragma once

#include <memory>
#include <string>

#include "ncclnet/log.hpp"
#include "ncclnet/transport/memory.hpp"

namespace ncclnet::transport {

// GPUs the CUDA runtime sees. 0 with *why when there are none (no driver,
// no device, or a process forked after CUDA was initialized).
int cudaDeviceCount(std::string* why);

class CudaMemoryProvider final : public MemoryProvider {
 public:
  // Memory of CUDA device `device`; fails with *why when it is not usable.
  static ncclResult_t create(int device, std::shared_ptr<CudaMemoryProvider>* out, std::string* why,
                             Logger logger = Logger(nullptr, "NET/cuda-memory"));
  ~CudaMemoryProvider() override;
  CudaMemoryProvider(const CudaMemoryProvider&) = delete;
  CudaMemoryProvider& operator=(const CudaMemoryProvider&) = delete;

  ncclResult_t allocHost(size_t size, Allocation* out) override;
  ncclResult_t allocDevice(size_t size, Allocation* out) override;
  int devicePtrType() const override;  // NCCL_PTR_CUDA
  bool canExportDmaBuf() const override { return dmaBuf_; }
  bool exportDmaBuf(const void* data, size_t size, int* fd, uint64_t* offset,
                    std::string* why) override;

  int device() const { return device_; }

 private:
  CudaMemoryProvider(int device, Logger logger);

  int device_;
  Logger log_;
  bool dmaBuf_ = false;
  void* stream_ = nullptr;  // cudaStream_t: zeroes device memory off the legacy stream
};

}  // namespace ncclnet::transport
