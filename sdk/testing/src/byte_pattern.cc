// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: byte patterns.
#include "ncclnet/testing/byte_pattern.hpp"

#include "ncclnet/testing/role_check.hpp"

namespace ncclnet::testing {

void fillPattern(void* data, size_t size, uint64_t seed) {
  auto* p = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < size; i++) p[i] = patternByte(seed, i);
}

std::optional<size_t> firstMismatch(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; i++) {
    if (p[i] != patternByte(seed, i)) return i;
  }
  return std::nullopt;
}

std::string checkPattern(const void* data, size_t size, uint64_t seed) {
  std::optional<size_t> bad = firstMismatch(data, size, seed);
  if (!bad) return "";
  return format("byte %zu of %zu (message %llu) is 0x%02x, expected 0x%02x", *bad, size,
                static_cast<unsigned long long>(seed), static_cast<const uint8_t*>(data)[*bad],
                patternByte(seed, *bad));
}

}  // namespace ncclnet::testing
