// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): connection memory on a CUDA GPU —
// pinned mapped host memory, device memory, DMA-BUF export.
#include "ncclnet/transport/cuda_memory.hpp"

#include <unistd.h>

#include <cstring>

#include "ncclnet/abi/net.h"
#include "ncclnet/cuda_driver.hpp"
#include "runtime_util.hpp"

namespace ncclnet::transport {

using cuda_peer::describe;
using cuda_peer::ScopedDevice;

namespace {

size_t pageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t roundUpTo(size_t v, size_t m) {
  return (v + m - 1) / m * m;
}

}  // namespace

int cudaDeviceCount(std::string* why) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why != nullptr) *why = "no usable CUDA device: cudaGetDeviceCount: " + describe(err);
    return 0;
  }
  if (n == 0 && why != nullptr) *why = "no CUDA device";
  return n;
}

CudaMemoryProvider::CudaMemoryProvider(int device, Logger logger) : device_(device), log_(logger) {}

CudaMemoryProvider::~CudaMemoryProvider() {
  if (stream_ != nullptr) {
    ScopedDevice scope(device_);
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  }
}

ncclResult_t CudaMemoryProvider::create(int device, std::shared_ptr<CudaMemoryProvider>* out,
                                        std::string* why, Logger logger) {
  ncclResult_t usable = cuda_peer::checkDevice(device, why);
  if (usable != ncclSuccess) return usable;
  ScopedDevice scope(device);
  if (scope.error() != cudaSuccess) {
    *why = "cudaSetDevice(" + std::to_string(device) + "): " + describe(scope.error());
    return ncclSystemError;
  }
  std::shared_ptr<CudaMemoryProvider> p(new CudaMemoryProvider(device, logger));
  cudaStream_t stream = nullptr;
  cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    *why = "cudaStreamCreateWithFlags: " + describe(err);
    return ncclSystemError;
  }
  p->stream_ = stream;
  // NCCL's test: the driver can export (11.7+) and the GPU says it supports
  // DMA-BUF. The driver is reached at run time, never linked.
  const cuda::Driver& driver = cuda::Driver::get();
  p->dmaBuf_ = driver.available() && driver.dmaBufSupported(device);
  *out = std::move(p);
  return ncclSuccess;
}

ncclResult_t CudaMemoryProvider::allocHost(size_t size, Allocation* out) {
  ScopedDevice scope(device_);
  size_t bytes = roundUpTo(size == 0 ? 1 : size, pageSize());
  void* host = nullptr;
  cudaError_t err = cudaHostAlloc(&host, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (err != cudaSuccess) {
    NCCLNET_WARN(log_, "cudaHostAlloc(%zu bytes, mapped): %s", bytes, describe(err).c_str());
    return ncclSystemError;
  }
  std::memset(host, 0, bytes);
  void* mapped = nullptr;
  err = cudaHostGetDevicePointer(&mapped, host, 0);
  if (err != cudaSuccess) {
    NCCLNET_WARN(log_, "cudaHostGetDevicePointer: %s", describe(err).c_str());
    cudaFreeHost(host);
    return ncclSystemError;
  }
  *out = Allocation(static_cast<char*>(host), static_cast<char*>(mapped), size,
                    [host] { cudaFreeHost(host); });
  return ncclSuccess;
}

// Page-aligned and a whole number of pages, so that the pages around any
// buffer inside it (what a DMA-BUF export covers) belong to it alone.
ncclResult_t CudaMemoryProvider::allocDevice(size_t size, Allocation* out) {
  ScopedDevice scope(device_);
  const size_t page = pageSize();
  size_t bytes = roundUpTo(size == 0 ? 1 : size, page);
  void* raw = nullptr;
  cudaError_t err = cudaMalloc(&raw, bytes + page);
  if (err != cudaSuccess) {
    NCCLNET_WARN(log_, "cudaMalloc(%zu bytes) on device %d: %s", bytes + page, device_,
                 describe(err).c_str());
    return ncclSystemError;
  }
  char* aligned = reinterpret_cast<char*>(roundUpTo(reinterpret_cast<uintptr_t>(raw), page));
  auto stream = static_cast<cudaStream_t>(stream_);
  err = cudaMemsetAsync(aligned, 0, bytes, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    NCCLNET_WARN(log_, "zeroing %zu bytes of device memory: %s", bytes, describe(err).c_str());
    cudaFree(raw);
    return ncclSystemError;
  }
  int device = device_;
  *out = Allocation(aligned, aligned, size, [raw, device] {
    ScopedDevice scope(device);
    cudaFree(raw);
  });
  return ncclSuccess;
}

int CudaMemoryProvider::devicePtrType() const {
  return NCCL_PTR_CUDA;
}

bool CudaMemoryProvider::exportDmaBuf(const void* data, size_t size, int* fd, uint64_t* offset,
                                      std::string* why) {
  if (!dmaBuf_) {
    *why = "device " + std::to_string(device_) + " or its driver cannot export DMA-BUF";
    return false;
  }
  const uintptr_t page = pageSize();
  uintptr_t begin = reinterpret_cast<uintptr_t>(data) / page * page;
  uintptr_t end = roundUpTo(reinterpret_cast<uintptr_t>(data) + size, page);
  int exported = cuda::Driver::get().exportDmaBuf(begin, end - begin, why);
  if (exported < 0) return false;
  *fd = exported;
  *offset = reinterpret_cast<uintptr_t>(data) - begin;
  return true;
}

}  // namespace ncclnet::transport
