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

namespace ncclnet::socket {

constexpr uint32_t kMagic = 0x4b53'4453;  // "SDSK" in memory on little-endian
constexpr uint16_t kProtocolVersion = 1;
constexpr int kMaxRecvs = 8;  // grouped receives: what maxRecvs advertises

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

enum class WireError { None, BadMagic, BadVersion, BadCookie, BadField };
const char* describe(WireError error);

void encodeHandle(const ListenHandle& h, void* handle);
WireError decodeHandle(const void* handle, ListenHandle* out);

// ---- hello: the first bytes on every socket a connect opens --------------
struct Hello {
  uint64_t cookie = 0;        // the listen's, from the handle
  uint64_t connectionId = 0;  // random per connect: groups its sockets
  uint16_t index = 0;         // 0: control socket; 1..streams: data sockets
  uint16_t streams = 0;
  uint16_t nThreads = 0;
};
constexpr size_t kHelloBytes = 32;

void encodeHello(const Hello& h, uint8_t* out);
// Checks magic, version and the expected cookie; index must be in range.
WireError decodeHello(const uint8_t* in, uint64_t expectedCookie, Hello* out);

// ---- sender -> receiver: one header per send, in posting order ----------
enum HeaderFlags : uint8_t {
  kFlagTruncated = 1,  // the send exceeded its receive buffer: no data follows
  kFlagInline = 4,     // the payload follows the header on the control socket
};
struct DataHeader {
  uint64_t size = 0;  // the sender's size (even when truncated)
  int32_t tag = 0;
  uint8_t slot = 0;  // which buffer of the grouped receive
  uint8_t flags = 0;
  uint8_t ahead = 0;  // which receive: 0 = the oldest outstanding one
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
