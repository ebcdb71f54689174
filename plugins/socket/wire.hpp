// SPDX-License-Identifier: Apache-2.0
// sdk-socket: every byte layout that leaves the process. The listen handle
// (carried by NCCL), the hello each new socket sends, and the two control
// frames. Fields are written at fixed offsets in host byte order: both ends
// run this plugin on the same architecture, and the magic catches the rest.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ncclnet/abi/common.h"
#include "ncclnet/wire_stamp.hpp"

namespace ncclnet::socket {

constexpr uint32_t kMagic = 0x4b53'4453;  // "SDSK" in memory on little-endian
// Version 2: small sends go out before their receive is posted (eager).
constexpr uint16_t kProtocolVersion = 2;
constexpr int kMaxRecvs = 8;  // grouped receives: what maxRecvs advertises

// Eager sends: a send of at most kEagerBytes may leave before the sender has
// the receiver's clear-to-send, with its payload inline, as long as the eager
// sends not yet paired with a clear-to-send stay within kEagerCredit bytes
// and kEagerMessages messages. The receiver holds such a message until its
// receive is posted, so the credit bounds what a peer can make it hold. Both
// ends must agree: part of the protocol version.
constexpr size_t kEagerBytes = 16 << 10;
constexpr size_t kEagerCredit = 512 << 10;
constexpr size_t kEagerMessages = 256;

// ---- the listen handle --------------------------------------------------
// What connect needs to reach a listen (the SDK keeps a connect in
// progress in the handle's last bytes, after these).
struct ListenHandle {
  sockaddr_storage addr{};
  socklen_t addrLen = 0;
  uint64_t cookie = 0;    // per-listen random value every hello must echo
  uint16_t nThreads = 0;  // the listener's helper threads per comm
  uint16_t nSocksPerThread = 0;
  uint32_t minTaskBytes = 0;  // the listener's stripe minimum: both ends must agree
};
constexpr size_t kHandleBytes = 48;

// The handle's stamp: magic and version first, the cookie after the address.
constexpr WireStamp kHandleStamp{
    "sdk-socket", "listen handle", kMagic, kProtocolVersion, {{0, 4}, {4, 2}, {40, 8}}};

// kOk, a refused stamp (kHandleStamp.explain says which), or kMalformed
// when a field is out of range.
void encodeHandle(const ListenHandle& h, void* handle);
WireVerdict decodeHandle(const void* handle, ListenHandle* out);

// ---- hello: the first bytes on every socket a connect opens --------------
struct Hello {
  uint64_t cookie = 0;        // the listen's, from the handle
  uint64_t connectionId = 0;  // random per connect: groups its sockets
  uint16_t index = 0;         // 0: control socket; 1..streams: data sockets
  uint16_t streams = 0;
  uint16_t nThreads = 0;
};
constexpr size_t kHelloBytes = 32;
// The hello's stamp: its secret is the listen's cookie.
constexpr WireStamp kHelloStamp{
    "sdk-socket", "hello", kMagic, kProtocolVersion, {{0, 4}, {4, 2}, {8, 8}}};

void encodeHello(const Hello& h, uint8_t* out);
// Checks magic, version and the expected cookie (kHelloStamp); index must be
// in range (else kMalformed).
WireVerdict decodeHello(const uint8_t* in, uint64_t expectedCookie, Hello* out);

// ---- sender -> receiver: one header per send ----------------------------
// Headers of one tag arrive in that tag's posting order, so both ends pair
// the k-th send of a tag with the k-th receive buffer of that tag (in
// receive posting order) without naming the buffer.
enum HeaderFlags : uint8_t {
  kFlagTruncated = 1,  // the send exceeded its receive buffer: no data follows
  kFlagInline = 4,     // the payload follows the header on the control socket
  kFlagEager = 8,      // sent before its clear-to-send: the receiver may hold it
};
struct DataHeader {
  uint64_t size = 0;  // the sender's size (even when truncated)
  int32_t tag = 0;
  uint8_t flags = 0;
};
constexpr size_t kHeaderBytes = 24;
void encodeHeader(const DataHeader& h, uint8_t* out);
bool decodeHeader(const uint8_t* in, DataHeader* out);

// ---- receiver -> sender: one clear-to-send per posted receive ------------
// The sender learns every buffer size before it sends, so a send larger than
// its receive is refused before a byte moves, on both sides.
struct ClearToSend {
  int n = 0;
  std::array<uint64_t, kMaxRecvs> sizes{};
  std::array<int32_t, kMaxRecvs> tags{};
};
constexpr size_t kCtsBytes = 8 + kMaxRecvs * 8 + kMaxRecvs * 4;
void encodeCts(const ClearToSend& c, uint8_t* out);
bool decodeCts(const uint8_t* in, ClearToSend* out);

}  // namespace ncclnet::socket
