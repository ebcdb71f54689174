// SPDX-License-Identifier: Apache-2.0
// Patterned, guarded buffers.
#include "scenario/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace conformance {

namespace {

constexpr uint8_t kGuardByte = 0xCB;

// splitmix64: a different, cheap word for every (seed, word index).
inline uint64_t word(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xBF58476DE1CE4E5Bull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint8_t byteAt(uint64_t seed, size_t i) {
  return static_cast<uint8_t>(word(seed, i / 8) >> (8 * (i % 8)));
}

}  // namespace

void Buffer::Free::operator()(char* p) const {
  std::free(p);
}

Buffer::Buffer(size_t size) : size_(size) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, size + 2 * kGuard) != 0) throw std::bad_alloc();
  base_.reset(static_cast<char*>(p));
  std::memset(base_.get(), kGuardByte, kGuard);
  std::memset(base_.get() + kGuard + size, kGuardByte, kGuard);
}

void Buffer::fill(uint64_t seed, size_t offset, size_t length) {
  if (length == kMismatch) length = size_ - offset;
  char* p = data() + offset;
  size_t i = 0;
  for (; i < length && i % 8 != 0; i++) p[i] = static_cast<char>(byteAt(seed, i));
  for (; i + 8 <= length; i += 8) {
    uint64_t w = word(seed, i / 8);
    std::memcpy(p + i, &w, 8);
  }
  for (; i < length; i++) p[i] = static_cast<char>(byteAt(seed, i));
}

size_t Buffer::verify(uint64_t seed, size_t offset, size_t length) const {
  if (length == kMismatch) length = size_ - offset;
  const char* p = base_.get() + kGuard + offset;
  size_t i = 0;
  for (; i < length && i % 8 != 0; i++) {
    if (static_cast<uint8_t>(p[i]) != byteAt(seed, i)) return i;
  }
  for (; i + 8 <= length; i += 8) {
    uint64_t w = word(seed, i / 8);
    if (std::memcmp(p + i, &w, 8) != 0) break;
  }
  for (; i < length; i++) {
    if (static_cast<uint8_t>(p[i]) != byteAt(seed, i)) return i;
  }
  return kMismatch;
}

void Buffer::clear(uint8_t byte, size_t offset, size_t length) {
  if (length == kMismatch) length = size_ - offset;
  std::memset(data() + offset, byte, length);
}

bool Buffer::untouched(uint8_t byte, size_t offset, size_t length, size_t* where) const {
  const char* p = base_.get() + kGuard + offset;
  for (size_t i = 0; i < length; i++) {
    if (static_cast<uint8_t>(p[i]) != byte) {
      *where = offset + i;
      return false;
    }
  }
  return true;
}

bool Buffer::guardsIntact(long* where) const {
  const char* base = base_.get();
  for (size_t i = 0; i < kGuard; i++) {
    if (static_cast<uint8_t>(base[i]) != kGuardByte) {
      *where = static_cast<long>(i) - static_cast<long>(kGuard);
      return false;
    }
    if (static_cast<uint8_t>(base[kGuard + size_ + i]) != kGuardByte) {
      *where = static_cast<long>(size_ + i);
      return false;
    }
  }
  return true;
}

}  // namespace conformance
