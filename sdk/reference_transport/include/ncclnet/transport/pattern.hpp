// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the verifiable byte pattern a device
// peer sends and checks. Byte i of a message with seed s is byte (i % 8) of
// mix(s, i / 8), so any misplaced, stale or reordered chunk shows up. The
// word functions are shared with the CUDA device peer's kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclnet/transport/host_device.hpp"

namespace ncclnet::transport {

NCCLNET_HD constexpr uint64_t patternWord(uint64_t seed, uint64_t wordIndex) {
  // splitmix64 of (seed, index): cheap, and neighbouring words differ.
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + wordIndex + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Message bytes [pos, pos + 8) as one little-endian word (byte k of the
// result is message byte pos + k), whatever the alignment of pos.
NCCLNET_HD constexpr uint64_t patternBytesAt(uint64_t seed, uint64_t pos) {
  uint64_t low = patternWord(seed, pos / 8);
  unsigned shift = static_cast<unsigned>(pos % 8) * 8;
  return shift == 0 ? low : (low >> shift) | (patternWord(seed, pos / 8 + 1) << (64 - shift));
}

NCCLNET_HD constexpr uint8_t patternByte(uint64_t seed, uint64_t pos) {
  return static_cast<uint8_t>(patternWord(seed, pos / 8) >> (pos % 8 * 8));
}

// Fills dst with message bytes [offset, offset + n).
void fillPattern(uint8_t* dst, size_t n, uint64_t seed, size_t offset);
// Index of the first byte of src that differs from message bytes
// [offset, offset + n), or n when all match.
size_t findMismatch(const uint8_t* src, size_t n, uint64_t seed, size_t offset);

}  // namespace ncclnet::transport
