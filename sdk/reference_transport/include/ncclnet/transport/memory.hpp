// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): where connection memory comes from.
// The CPU build allocates everything in host memory; a CUDA provider hands
// out pinned host memory and device memory instead, with different CPU and
// GPU addresses, without the proxy code changing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ncclnet/abi/result.h"

namespace ncclnet::transport {

// One zero-filled allocation. `cpu` is where the proxy reaches it, `gpu`
// where the device peer does (equal for host memory).
class Allocation {
 public:
  Allocation() = default;
  Allocation(char* cpu, char* gpu, size_t size, std::function<void()> release)
      : cpu_(cpu), gpu_(gpu), size_(size), release_(std::move(release)) {}
  Allocation(Allocation&& other) noexcept { *this = std::move(other); }
  Allocation& operator=(Allocation&& other) noexcept;
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation() { reset(); }

  char* cpu() const { return cpu_; }
  char* gpu() const { return gpu_; }
  size_t size() const { return size_; }
  void reset();

 private:
  char* cpu_ = nullptr;
  char* gpu_ = nullptr;
  size_t size_ = 0;
  std::function<void()> release_;
};

class MemoryProvider {
 public:
  virtual ~MemoryProvider() = default;
  // Host memory the device can reach (NCCL: cudaHostAlloc).
  virtual ncclResult_t allocHost(size_t size, Allocation* out) = 0;
  // Device memory (NCCL: cudaMalloc / cuMem). Used when useGdr is set.
  virtual ncclResult_t allocDevice(size_t size, Allocation* out) = 0;
  // The regMr type for device memory: NCCL_PTR_CUDA on a GPU. The host
  // provider stands in device memory with host memory and still says
  // NCCL_PTR_CUDA, so that a plugin sees NCCL's calls.
  virtual int devicePtrType() const = 0;

  // DMA-BUF export of device memory, for regMrDmaBuf (NCCL:
  // cuMemGetHandleForAddressRange). The transport uses it for a connection
  // with device buffers when the plugin advertises NCCL_PTR_DMABUF and
  // canExportDmaBuf() is true, exactly as NCCL does when the GPU and driver
  // support DMA-BUF; otherwise it registers with regMr(devicePtrType()).
  virtual bool canExportDmaBuf() const { return false; }
  // [data, data + size) lies inside one allocDevice allocation. On success
  // *fd is a new DMA-BUF fd over the page-aligned range around it and
  // *offset is where `data` starts in that range; the caller closes *fd once
  // registered (as NCCL closes it right after regMrDmaBuf). False with *why
  // otherwise.
  virtual bool exportDmaBuf(const void* data, size_t size, int* fd, uint64_t* offset,
                            std::string* why) {
    (void)data, (void)size, (void)fd, (void)offset;
    if (why != nullptr) *why = "this memory provider cannot export DMA-BUF handles";
    return false;
  }
};

// Page-aligned, zeroed host memory for both kinds.
class HostMemoryProvider final : public MemoryProvider {
 public:
  ncclResult_t allocHost(size_t size, Allocation* out) override;
  ncclResult_t allocDevice(size_t size, Allocation* out) override;
  int devicePtrType() const override;
};

}  // namespace ncclnet::transport
