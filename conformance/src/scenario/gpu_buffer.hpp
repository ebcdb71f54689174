// SPDX-License-Identifier: Apache-2.0
// A cuMemAlloc'd message buffer between two guard zones, on a rank's GPU,
// for the scenarios that move GPU memory (GpuMemory, Rma). Its bytes are
// set and checked through host copies with Buffer's patterns, so a message
// is the same pattern in host and GPU memory; the CPU never touches it.
// A CUDA failure is the harness's, not the plugin's: it throws
// std::runtime_error("CUDA: ..."), reported as such.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ncclnet/cuda_driver.hpp"
#include "scenario/buffer.hpp"
#include "scenario/ctx.hpp"

namespace conformance {

class GpuBuffer {
 public:
  // On GPU rank % count; NotRun (skip) when the memory cannot be had.
  GpuBuffer(Ctx& c, const ncclnet::cuda::Driver& driver, size_t size);

  char* data() const;
  size_t size() const { return size_; }

  void fill(uint64_t seed, size_t offset, size_t length);
  void clear(unsigned char byte);
  // The first wrong offset of a `seed` message at `offset`, or kMismatch.
  size_t verify(uint64_t seed, size_t offset, size_t length) const;
  // True when [offset, offset + length) still holds `byte`.
  bool untouched(unsigned char byte, size_t offset, size_t length, size_t* where) const;
  // True when nothing wrote into the guard zones; *where relative to data().
  bool guardsIntact(long* where) const;
  // The 64-bit word at `offset` (a signal), read through the driver.
  uint64_t word(size_t offset) const;

  // A dma-buf fd over the pages holding [data() + offset, + length), as
  // NCCL exports one; *fdOffset is where that first byte sits in it.
  int exportPages(const ncclnet::cuda::Driver& driver, size_t offset, size_t length,
                  uint64_t* fdOffset);

 private:
  size_t size_;
  std::unique_ptr<ncclnet::cuda::DeviceBuffer> mem_;
};

}  // namespace conformance
