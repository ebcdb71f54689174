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

namespace ncclnet::transport {

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
