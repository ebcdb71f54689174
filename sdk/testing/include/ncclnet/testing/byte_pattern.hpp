// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: deterministic message content, and where a
// received buffer first differs from it.
//
//   fillPattern(send.data(), size, seed);
//   ... transfer ...
//   EXPECT_EQ(checkPattern(recv.data(), size, seed), "");  // else names the byte
//
// Each (seed, offset) gives its own byte, so a message landing in the wrong
// buffer, shifted, or cut short is caught, not only one full of zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ncclnet::testing {

// The byte at `offset` of message `seed`.
inline uint8_t patternByte(uint64_t seed, size_t offset) {
  return static_cast<uint8_t>((offset * 131 + seed * 29 + (offset >> 8) * 7) & 0xff);
}

void fillPattern(void* data, size_t size, uint64_t seed);

// The offset of the first byte that differs from message `seed`, if any.
std::optional<size_t> firstMismatch(const void* data, size_t size, uint64_t seed);

// "" when all `size` bytes match message `seed`; else one line naming the
// first bad offset, what it holds and what was expected.
std::string checkPattern(const void* data, size_t size, uint64_t seed);

}  // namespace ncclnet::testing
