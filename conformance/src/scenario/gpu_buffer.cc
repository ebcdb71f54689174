// SPDX-License-Identifier: Apache-2.0
#include "scenario/gpu_buffer.hpp"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "scenario/check.hpp"

namespace conformance {

namespace {

namespace cu = ncclnet::cuda;

constexpr size_t kGuard = 4096;
constexpr unsigned char kGuardByte = 0xCB;
constexpr size_t kGranule = size_t(2) << 20;  // cuMemAlloc's alignment for large blocks

void check(bool ok, const std::string& why) {
  if (!ok) throw std::runtime_error("CUDA: " + why);
}

}  // namespace

GpuBuffer::GpuBuffer(Ctx& c, const cu::Driver& driver, size_t size) : size_(size) {
  int device = c.rank() % driver.deviceCount();
  // Whole 2 MiB blocks: the page-aligned ranges a dma-buf covers stay
  // inside the allocation.
  size_t bytes = (size + 2 * kGuard + kGranule - 1) / kGranule * kGranule;
  std::string why;
  mem_ = cu::DeviceBuffer::allocate(driver, device, bytes, &why);
  if (mem_ == nullptr) skip("cannot allocate %zu B of GPU memory: %s", bytes, why.c_str());
  check(mem_->fill(kGuardByte, &why), why);
}

char* GpuBuffer::data() const {
  return static_cast<char*>(mem_->data()) + kGuard;
}

void GpuBuffer::fill(uint64_t seed, size_t offset, size_t length) {
  Buffer staging(length);
  staging.fill(seed);
  std::string why;
  check(mem_->upload(kGuard + offset, staging.data(), length, &why), why);
}

void GpuBuffer::clear(unsigned char byte) {
  std::vector<unsigned char> bytes(size_, byte);
  std::string why;
  check(mem_->upload(kGuard, bytes.data(), size_, &why), why);
}

size_t GpuBuffer::verify(uint64_t seed, size_t offset, size_t length) const {
  Buffer staging(length);
  std::string why;
  check(mem_->download(kGuard + offset, staging.data(), length, &why), why);
  return staging.verify(seed, 0, length);
}

bool GpuBuffer::untouched(unsigned char byte, size_t offset, size_t length, size_t* where) const {
  std::vector<unsigned char> bytes(length);
  std::string why;
  check(mem_->download(kGuard + offset, bytes.data(), length, &why), why);
  for (size_t i = 0; i < length; i++) {
    if (bytes[i] == byte) continue;
    *where = offset + i;
    return false;
  }
  return true;
}

bool GpuBuffer::guardsIntact(long* where) const {
  std::vector<unsigned char> before(kGuard), after(kGuard);
  std::string why;
  check(mem_->download(0, before.data(), kGuard, &why), why);
  check(mem_->download(kGuard + size_, after.data(), kGuard, &why), why);
  for (size_t i = 0; i < kGuard; i++) {
    if (before[i] != kGuardByte) {
      *where = static_cast<long>(i) - static_cast<long>(kGuard);
      return false;
    }
    if (after[i] != kGuardByte) {
      *where = static_cast<long>(size_ + i);
      return false;
    }
  }
  return true;
}

uint64_t GpuBuffer::word(size_t offset) const {
  uint64_t value = 0;
  std::string why;
  check(mem_->download(kGuard + offset, &value, sizeof(value), &why), why);
  return value;
}

int GpuBuffer::exportPages(const cu::Driver& driver, size_t offset, size_t length,
                           uint64_t* fdOffset) {
  auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto addr = reinterpret_cast<uintptr_t>(data() + offset);
  uintptr_t begin = addr & ~(page - 1);
  uintptr_t end = (addr + std::max<size_t>(length, 1) + page - 1) & ~(page - 1);
  std::string why;
  int fd = driver.exportDmaBuf(begin, end - begin, &why);
  check(fd >= 0, why);
  *fdOffset = addr - begin;
  return fd;
}

}  // namespace conformance
