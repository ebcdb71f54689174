// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): allocations and the host provider.
#include "ncclnet/transport/memory.hpp"

#include <cstdlib>
#include <cstring>

#include "ncclnet/abi/net.h"

namespace ncclnet::transport {

Allocation& Allocation::operator=(Allocation&& other) noexcept {
  if (this != &other) {
    reset();
    cpu_ = other.cpu_;
    gpu_ = other.gpu_;
    size_ = other.size_;
    release_ = std::move(other.release_);
    other.cpu_ = other.gpu_ = nullptr;
    other.size_ = 0;
    other.release_ = nullptr;
  }
  return *this;
}

void Allocation::reset() {
  if (release_) release_();
  release_ = nullptr;
  cpu_ = gpu_ = nullptr;
  size_ = 0;
}

namespace {
constexpr size_t kPage = 4096;

ncclResult_t allocPages(size_t size, Allocation* out) {
  size_t rounded = (size + kPage - 1) / kPage * kPage;
  if (rounded == 0) rounded = kPage;
  void* p = std::aligned_alloc(kPage, rounded);
  if (p == nullptr) return ncclSystemError;
  std::memset(p, 0, rounded);
  char* c = static_cast<char*>(p);
  *out = Allocation(c, c, size, [p] { std::free(p); });
  return ncclSuccess;
}
}  // namespace

ncclResult_t HostMemoryProvider::allocHost(size_t size, Allocation* out) {
  return allocPages(size, out);
}
ncclResult_t HostMemoryProvider::allocDevice(size_t size, Allocation* out) {
  return allocPages(size, out);
}
int HostMemoryProvider::devicePtrType() const {
  return NCCL_PTR_CUDA;
}

}  // namespace ncclnet::transport
