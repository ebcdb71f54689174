// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: every byte layout the RMA plugin puts on the wire. The
// listen handle (carried by NCCL's bootstrap all-gather), the hello a mesh
// connection opens with, and the one frame header every operation travels
// under. Fields sit at fixed offsets in host byte order: every rank runs the
// same build, and the magics catch the rest. Not the net table's layouts:
// a GIN handle handed to the net table's connect (or the reverse) is refused
// by its magic.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#include "ncclnet/wire_stamp.hpp"

namespace ncclnet::socket::rma {

constexpr uint32_t kMagic = 0x414d'5253;  // "SRMA" in memory on little-endian
constexpr uint16_t kVersion = 1;

// ---- the listen handle (at most NCCL_GIN_HANDLE_MAXSIZE = 128 bytes) -----
struct Handle {
  sockaddr_storage addr{};
  socklen_t addrLen = 0;
  uint64_t cookie = 0;  // per-listen random value every hello must echo
};
constexpr size_t kHandleBytes = 48;
constexpr WireStamp kHandleStamp{
    "sdk-socket", "RMA listen handle", kMagic, kVersion, {{0, 4}, {4, 2}, {8, 8}}};
void encodeHandle(const Handle& h, void* out);
// kOk, or the stamp's verdict; kMalformed for an address of no known family.
WireVerdict decodeHandle(const void* in, Handle* out);

// ---- hello: what the dialing rank says first on a mesh connection -------
struct Hello {
  uint64_t cookie = 0;  // the listen's, from its handle
  uint32_t rank = 0;    // the dialer's rank
  uint32_t nranks = 0;  // both ends must agree
};
constexpr size_t kHelloBytes = 24;
constexpr WireStamp kHelloStamp{
    "sdk-socket", "RMA hello", kMagic, kVersion, {{0, 4}, {4, 2}, {8, 8}}};
void encodeHello(const Hello& h, void* out);
WireVerdict decodeHello(const void* in, uint64_t expectedCookie, Hello* out);

// ---- frames: one header per operation, payload (if any) right after ------
enum class Op : uint8_t {
  kPut = 1,       // size payload bytes for region+offset; then the signal, if any
  kGet = 2,       // asks for size bytes of region+offset; answered by kGetReply
  kGetReply = 3,  // the bytes of the oldest unanswered kGet, or status != 0
  kNack = 4,      // the target refused an access of ours (status says which)
  kBye = 5,       // the sender closes: its end of the stream goes next
};
enum Status : uint8_t { kOk = 0, kBadRegion = 1, kOutOfBounds = 2, kBadSignal = 3 };
constexpr uint64_t kNoRegion = 0;  // region ids start at 1

struct Frame {
  Op op = Op::kPut;
  uint8_t status = kOk;
  uint16_t context = 0;
  uint64_t region = kNoRegion;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t signalRegion = kNoRegion;  // kPut: kNoRegion when there is no signal
  uint64_t signalOffset = 0;
  uint64_t signalValue = 0;
  uint64_t tag = 0;  // kGet/kGetReply: the requester's sequence number
};
constexpr size_t kFrameBytes = 72;
void encodeFrame(const Frame& f, uint8_t* out);
// False when the frame magic is wrong or the op unknown: the stream is lost.
bool decodeFrame(const uint8_t* in, Frame* out);

const char* statusText(uint8_t status);

}  // namespace ncclnet::socket::rma
