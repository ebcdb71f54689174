// SPDX-License-Identifier: Apache-2.0
// softverbs: MRs over CUDA device memory. A real HCA reaches GPU memory by
// DMA (peer memory or DMA-BUF); softverbs, being software, reaches it
// through the CUDA driver (dlopen'd, never linked): registration finds out
// whether an address range is device memory, and the engine then moves
// that MR's bytes with copies on a stream of its own, in whichever thread
// it runs, with the owning context made current only for the copy.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "ncclnet/cuda_driver.hpp"

namespace softverbs {

class GpuMemory {
 public:
  // Device memory behind [addr, addr + length): its access object; nullptr
  // for host memory. On a range that is device memory but cannot be used,
  // nullptr with *error set (an errno value).
  static std::unique_ptr<GpuMemory> detect(const void* addr, size_t length, int* error);
  ~GpuMemory();
  GpuMemory(const GpuMemory&) = delete;
  GpuMemory& operator=(const GpuMemory&) = delete;

  // Host bytes into device memory, and back; complete when they return
  // (the stream is synchronized), false on a CUDA error.
  bool write(void* deviceDst, const void* hostSrc, size_t bytes) const;
  bool read(void* hostDst, const void* deviceSrc, size_t bytes) const;

  // Live MRs over device memory in this process: the engine looks for
  // device memory only while there are some, so host-only use pays nothing.
  static bool anyRegistered() { return live_.load(std::memory_order_relaxed) > 0; }
  // Whether `p` is device memory (only asked while anyRegistered()).
  static bool isDevice(const void* p);

 private:
  explicit GpuMemory(std::shared_ptr<const ncclnet::cuda::Driver> driver)
      : driver_(*driver), owner_(std::move(driver)) {}
  // Takes a reference on device `ordinal`'s primary context when it owns
  // the memory (*context) or when nothing does (*context null: it then
  // becomes the primary context). False when no context can serve.
  bool holdPrimary(int ordinal, ncclnet::cuda::Context* context);

  const ncclnet::cuda::Driver& driver_;
  // Keeps the driver object alive for the MR's lifetime, whenever the
  // library lets go of its own reference (gpu.cc).
  std::shared_ptr<const ncclnet::cuda::Driver> owner_;
  ncclnet::cuda::Context context_ = nullptr;
  ncclnet::cuda::Stream stream_ = nullptr;
  int releaseDevice_ = -1;  // primary context held here (holdPrimary), released last
  static std::atomic<int> live_;
};

// Whether DMA-BUF registrations can work in this process: softverbs cannot
// map a dma-buf itself, so it needs the CUDA driver and a device to reach
// the memory at the registration's iova. Only a process that has loaded the
// driver already counts (any process with GPU memory has; NCCL loads it
// before a net plugin): a host-only process never pays for cuInit.
// *why says what is missing.
bool dmaBufUsable(std::string* why);

// SOFTVERBS_PEERMEM=0: ibv_reg_mr refuses device memory with EFAULT, as an
// HCA does without a peer-memory client (nvidia_peermem); only
// ibv_reg_dmabuf_mr can then register it. Default 1.
bool peerMemory();

}  // namespace softverbs
