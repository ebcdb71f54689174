// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the verifiable byte pattern.
#include "ncclnet/transport/pattern.hpp"

#include <cstring>

namespace ncclnet::transport {

void fillPattern(uint8_t* dst, size_t n, uint64_t seed, size_t offset) {
  size_t i = 0;
  while (i < n) {
    size_t pos = offset + i;
    uint64_t word = patternWord(seed, pos / 8);
    size_t inWord = pos % 8;
    size_t take = 8 - inWord < n - i ? 8 - inWord : n - i;
    std::memcpy(dst + i, reinterpret_cast<const uint8_t*>(&word) + inWord, take);
    i += take;
  }
}

size_t findMismatch(const uint8_t* src, size_t n, uint64_t seed, size_t offset) {
  size_t i = 0;
  while (i < n) {
    size_t pos = offset + i;
    uint64_t word = patternWord(seed, pos / 8);
    size_t inWord = pos % 8;
    size_t take = 8 - inWord < n - i ? 8 - inWord : n - i;
    if (std::memcmp(src + i, reinterpret_cast<const uint8_t*>(&word) + inWord, take) != 0) {
      for (size_t j = 0; j < take; j++) {
        if (src[i + j] != reinterpret_cast<const uint8_t*>(&word)[inWord + j]) return i + j;
      }
    }
    i += take;
  }
  return n;
}

}  // namespace ncclnet::transport
