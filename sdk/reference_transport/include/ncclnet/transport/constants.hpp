// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the constants NCCL's net transport is
// built on, with NCCL's values (docs/reference-transport.md, "Constants").
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclnet/transport/host_device.hpp"

namespace ncclnet::transport {

// Slots in a connection's step ring (NCCL_STEPS). A plugin must accept at
// least this many outstanding requests per comm.
constexpr int kSteps = 8;
// Slots per channel in a shared (p2p) pool (NCCL_SHARED_STEPS).
constexpr int kSharedSteps = 16;
// Largest single isend/irecv NCCL issues (NCCL_MAX_NET_SIZE).
constexpr size_t kMaxNetSize = size_t{1} << 30;
// Most sub-operations in one proxy operation (NCCL_PROXY_MAX_SUBS).
constexpr int kMaxSubs = 64;
// NCCL_NET_OPTIONAL_RECV_COMPLETION, preloaded into an LL/LL128 irecv request.
constexpr uintptr_t kOptionalRecvCompletion = 0x1;

// The three protocols, in NCCL's order (NCCL_PROTO_LL, _LL128, _SIMPLE).
enum class Protocol : int { LL = 0, LL128 = 1, Simple = 2 };
constexpr int kNumProtocols = 3;
NCCLNET_HD constexpr int index(Protocol p) {
  return static_cast<int>(p);
}
const char* protocolName(Protocol p);

// Default per-connection buffer sizes (NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE,
// NCCL_BUFFSIZE); each is split into kSteps equal step buffers.
constexpr size_t kDefaultLLBuffSize = 8 * 512 * kSteps * 16;      // 512 KiB
constexpr size_t kDefaultLL128BuffSize = 120 * 640 * kSteps * 8;  // 4800 KiB
constexpr size_t kDefaultSimpleBuffSize = size_t{4} << 20;        // 4 MiB
constexpr size_t kDefaultP2pChunkSize = size_t{128} << 10;        // NCCL_P2P_NET_CHUNKSIZE

// LL: 16-byte lines {data1, flag1, data2, flag2}, 8 payload bytes per line.
constexpr size_t kLLLineBytes = 16;
constexpr size_t kLLDataBytesPerLine = 8;
// LL128: 128-byte lines of 16 words; word 15 is the flag, 120 payload bytes.
constexpr size_t kLL128LineBytes = 128;
constexpr size_t kLL128LineWords = 16;
constexpr size_t kLL128DataWords = 15;
constexpr size_t kLL128DataBytesPerLine = kLL128DataWords * 8;
constexpr size_t kLL128FlagWord = kLL128DataWords;  // the last word of a line

// The flag a producer writes into the lines of absolute step `step`
// (NCCL_LL_FLAG(step + 1) for LL; step + 1 for LL128). Never 0, so a zeroed
// buffer is never mistaken for data.
NCCLNET_HD constexpr uint32_t llFlag(uint64_t step) {
  return static_cast<uint32_t>(step + 1);
}
NCCLNET_HD constexpr uint64_t ll128Flag(uint64_t step) {
  return step + 1;
}

}  // namespace ncclnet::transport
