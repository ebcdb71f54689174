// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the verifiable byte pattern a device
// peer sends and checks. Byte i of a message with seed s is byte (i % 8) of
// mix(s, i / 8), so any misplaced, stale or reordered chunk shows up.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ncclnet::transport {

uint64_t patternWord(uint64_t seed, uint64_t wordIndex);
// Fills dst with message bytes [offset, offset + n).
void fillPattern(uint8_t* dst, size_t n, uint64_t seed, size_t offset);
// Index of the first byte of src that differs from message bytes
// [offset, offset + n), or n when all match.
size_t findMismatch(const uint8_t* src, size_t n, uint64_t seed, size_t offset);

}  // namespace ncclnet::transport
