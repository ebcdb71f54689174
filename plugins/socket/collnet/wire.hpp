// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: the byte layouts on the mesh. The listen handle and
// the hello are the RMA plugin's (rma/wire.hpp: the same mesh code builds
// both), so only two things are new: the header in front of every
// contribution one rank sends another, and the word a rank sends every
// peer once its whole mesh is up. Host byte order: both ends run the same
// build, the magic catches the rest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ncclnet::socket::collnet {

constexpr uint32_t kMagic = 0x544e'4353;  // "SCNT" in memory on little-endian
constexpr uint16_t kVersion = 1;

enum class Kind : uint8_t { kAllReduce = 1, kAllGather = 2, kReduceScatter = 3 };
const char* kindName(Kind kind);

// What precedes a contribution: which operation (the per-collComm sequence
// number every rank counts the same way, since NCCL issues CollNet
// operations in one order everywhere) and how many payload bytes follow.
// A receiver that expected another operation or size knows the ranks
// disagree and fails the comm instead of reading garbage.
struct Header {
  Kind kind = Kind::kAllReduce;
  uint64_t seq = 0;
  uint64_t bytes = 0;
};
constexpr size_t kHeaderBytes = 24;
void encodeHeader(const Header& h, uint8_t* out);
// False for a wrong magic, version or kind.
bool decodeHeader(const uint8_t* in, Header* out);

// The word each rank sends every peer after the mesh is built: a rank
// that failed its connect sends none (and closes), so no peer returns
// success from a connect that a member of its group failed.
constexpr size_t kReadyBytes = 8;
void encodeReady(uint8_t* out);
bool decodeReady(const uint8_t* in);

}  // namespace ncclnet::socket::collnet
