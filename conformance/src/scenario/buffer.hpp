// SPDX-License-Identifier: Apache-2.0
// Message buffers whose every byte is checkable: a seeded pattern fills or
// verifies them, and guard zones on both sides catch a plugin that writes
// outside the buffer it was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace conformance {

class Buffer {
 public:
  static constexpr size_t kGuard = 4096;
  static constexpr size_t kMismatch = ~size_t(0);

  explicit Buffer(size_t size);
  Buffer(Buffer&&) = default;
  Buffer& operator=(Buffer&&) = default;

  char* data() { return base_.get() + kGuard; }
  size_t size() const { return size_; }

  // The pattern of `seed`: byte i of a message is the same wherever it lands.
  void fill(uint64_t seed, size_t offset = 0, size_t length = kMismatch);
  // First offset in [offset, offset+length) that differs from the pattern,
  // or kMismatch when all match.
  size_t verify(uint64_t seed, size_t offset = 0, size_t length = kMismatch) const;
  void clear(uint8_t byte, size_t offset = 0, size_t length = kMismatch);
  // True when no byte in [offset, offset+length) changed since clear(byte).
  bool untouched(uint8_t byte, size_t offset, size_t length, size_t* where) const;
  // True when nothing wrote before or after the buffer; *where is the first
  // changed offset relative to data() (negative: before it).
  bool guardsIntact(long* where) const;

 private:
  struct Free {
    void operator()(char* p) const;
  };
  size_t size_;
  std::unique_ptr<char, Free> base_;
};

}  // namespace conformance
