// SPDX-License-Identifier: Apache-2.0
// softverbs: the packets devices exchange over loopback TCP, and socket I/O
// that never waits without a deadline.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace softverbs {

constexpr uint32_t kPacketMagic = 0x53565031;  // "SVP1"
constexpr uint32_t kHelloMagic = 0x53564831;   // "SVH1"

enum class Op : uint8_t {
  kSend = 1,      // consumes a receive at the responder
  kWrite = 2,     // one-sided: lands without the responder posting anything
  kWriteImm = 3,  // lands like kWrite, then consumes a receive
  kReadReq = 4,   // the responder answers with kReadResp
  kReadResp = 5,  // data (or an error status) for a read
  kAck = 6,       // the responder's verdict on one request
};

// Fixed-size header; `length` payload bytes follow for kSend, kWrite,
// kWriteImm and kReadResp. Both ends are the same host, so no byte swapping.
struct PacketHeader {
  uint32_t magic = kPacketMagic;
  Op op = Op::kAck;
  uint8_t hasImm = 0;
  uint16_t status = 0;  // ibv_wc_status for kAck and kReadResp
  uint32_t dstQpn = 0;
  uint32_t srcQpn = 0;
  uint32_t rkey = 0;
  uint32_t imm = 0;  // as posted (network order), handed back unchanged
  uint64_t seq = 0;  // the requester's number for the work request
  uint64_t raddr = 0;
  uint64_t length = 0;     // payload bytes, or the bytes a kReadReq asks for
  uint16_t pkey = 0xffff;  // the sending QP's P_Key (BTH)
  uint8_t reserved[6] = {};
};

// First bytes on every connection: who is calling.
struct Hello {
  uint32_t magic = kHelloMagic;
  uint32_t deviceId = 0;
};

struct OutPacket {
  PacketHeader header;
  std::vector<char> payload;
};

// Blocking I/O over a socket, polled in short steps so that `stop` is seen
// and a peer that stalls mid-message for `stallSeconds` is an error.
bool sendAll(int fd, const void* data, size_t size, const std::atomic<bool>& stop,
             double stallSeconds = 30);
bool recvAll(int fd, void* data, size_t size, const std::atomic<bool>& stop,
             double stallSeconds = 30);

// Copies so that bytes become visible in ascending address order, the way a
// DMA engine places one write: a reader that sees the last bytes of a record
// (for example a sequence number at its end) sees the bytes before it.
void placeAscending(void* dst, const void* src, size_t size);

}  // namespace softverbs
