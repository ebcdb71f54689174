// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): LL and LL128 line formats.
//
//   LL line (16 B):     | data1 (u32) | flag1 (u32) | data2 (u32) | flag2 (u32) |
//                       each {data, flag} pair is one 8-byte word, stored at once
//   LL128 line (128 B): | w0 ... w14 (15 x u64 payload) | w15 = flag (u64) |
//
// Writers store the flag-carrying words with release order after the payload;
// readers load them with acquire order, so a reader that sees a line's flag
// also sees its payload. Buffers are plain memory that a plugin also writes
// (as a NIC would by DMA); the atomic accesses are GCC __atomic builtins on
// that memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclnet/transport/host_device.hpp"

namespace ncclnet::transport {

// The two 8-byte words of an LL line carrying 8 payload bytes `data`
// (little-endian) and `flag`: {data1, flag1} and {data2, flag2}, data in the
// low half, so each pair is stored and loaded as one word and never torn.
NCCLNET_HD constexpr uint64_t llFirstWord(uint64_t data, uint32_t flag) {
  return (data & 0xffffffffull) | (static_cast<uint64_t>(flag) << 32);
}
NCCLNET_HD constexpr uint64_t llSecondWord(uint64_t data, uint32_t flag) {
  return (data >> 32) | (static_cast<uint64_t>(flag) << 32);
}
NCCLNET_HD constexpr uint32_t llWordFlag(uint64_t word) {
  return static_cast<uint32_t>(word >> 32);
}
NCCLNET_HD constexpr uint64_t llLineData(uint64_t first, uint64_t second) {
  return (first & 0xffffffffull) | (second << 32);
}

// LL: writes ceil(n/8) lines holding `payload` (zero padded) and `flag`.
void llWrite(char* lines, const uint8_t* payload, size_t n, uint32_t flag);
// LL: true when each of `nLines` lines carries `flag` in both flag fields.
bool llReady(const char* lines, size_t nLines, uint32_t flag);
// LL: copies n payload bytes out; false (and nothing trustworthy in `out`)
// if any line does not carry `flag` yet.
bool llRead(const char* lines, size_t n, uint32_t flag, uint8_t* out);

// LL128: writes ceil(n/120) lines with payload and `flag` in word 15.
void ll128Write(char* lines, const uint8_t* payload, size_t n, uint64_t flag);
bool ll128Ready(const char* lines, size_t nLines, uint64_t flag);
bool ll128Read(const char* lines, size_t n, uint64_t flag, uint8_t* out);

}  // namespace ncclnet::transport
