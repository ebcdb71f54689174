// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: encoders and decoders for the layouts in wire.hpp.
#include "wire.hpp"

#include <netinet/in.h>

#include <cstring>

namespace ncclnet::socket::rma {

namespace {

template <class T>
void put(uint8_t* base, size_t offset, T value) {
  std::memcpy(base + offset, &value, sizeof(T));
}
template <class T>
T get(const uint8_t* base, size_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof(T));
  return value;
}

// Handle: stamp (0..16), address length at 16, the sockaddr's bytes at 20
// (sockaddr_in6 is the largest family we take: 28 bytes).
constexpr size_t kHAddrLen = 16, kHAddr = 20, kMaxAddrBytes = kHandleBytes - kHAddr;
static_assert(sizeof(sockaddr_in6) <= kMaxAddrBytes, "the handle must hold an IPv6 address");
// Hello: stamp (0..16), rank at 16, nranks at 20.
constexpr size_t kRank = 16, kNranks = 20;
// Frame: magic, op, status, context, then eight 64-bit fields.
constexpr uint32_t kFrameMagic = 0x4652'4d53;
constexpr size_t kFOp = 4, kFStatus = 5, kFContext = 6, kFRegion = 8, kFOffset = 16, kFSize = 24,
                 kFSigRegion = 32, kFSigOffset = 40, kFSigValue = 48, kFTag = 56;
static_assert(kFTag + 8 <= kFrameBytes, "frame fields fit");

}  // namespace

void encodeHandle(const Handle& h, void* out) {
  auto* bytes = static_cast<uint8_t*>(out);
  std::memset(bytes, 0, kHandleBytes);
  kHandleStamp.write(bytes, h.cookie);
  put<uint32_t>(bytes, kHAddrLen, static_cast<uint32_t>(h.addrLen));
  std::memcpy(bytes + kHAddr, &h.addr, h.addrLen <= kMaxAddrBytes ? h.addrLen : kMaxAddrBytes);
}

WireVerdict decodeHandle(const void* in, Handle* out) {
  const auto* bytes = static_cast<const uint8_t*>(in);
  WireVerdict stamp = kHandleStamp.check(bytes, kHandleBytes);
  if (stamp != WireVerdict::kOk) return stamp;
  Handle h;
  uint32_t len = get<uint32_t>(bytes, kHAddrLen);
  if (len > kMaxAddrBytes || len < sizeof(sa_family_t)) return WireVerdict::kMalformed;
  std::memcpy(&h.addr, bytes + kHAddr, len);
  h.addrLen = len;
  bool known = (h.addr.ss_family == AF_INET && len == sizeof(sockaddr_in)) ||
               (h.addr.ss_family == AF_INET6 && len == sizeof(sockaddr_in6));
  if (!known) return WireVerdict::kMalformed;
  h.cookie = kHandleStamp.secretOf(bytes);
  *out = h;
  return WireVerdict::kOk;
}

void encodeHello(const Hello& h, void* out) {
  auto* bytes = static_cast<uint8_t*>(out);
  std::memset(bytes, 0, kHelloBytes);
  kHelloStamp.write(bytes, h.cookie);
  put<uint32_t>(bytes, kRank, h.rank);
  put<uint32_t>(bytes, kNranks, h.nranks);
}

WireVerdict decodeHello(const void* in, uint64_t expectedCookie, Hello* out) {
  const auto* bytes = static_cast<const uint8_t*>(in);
  WireVerdict stamp = kHelloStamp.check(bytes, kHelloBytes, &expectedCookie);
  if (stamp != WireVerdict::kOk) return stamp;
  out->cookie = expectedCookie;
  out->rank = get<uint32_t>(bytes, kRank);
  out->nranks = get<uint32_t>(bytes, kNranks);
  return out->rank < out->nranks ? WireVerdict::kOk : WireVerdict::kMalformed;
}

void encodeFrame(const Frame& f, uint8_t* out) {
  std::memset(out, 0, kFrameBytes);
  put<uint32_t>(out, 0, kFrameMagic);
  put<uint8_t>(out, kFOp, static_cast<uint8_t>(f.op));
  put<uint8_t>(out, kFStatus, f.status);
  put<uint16_t>(out, kFContext, f.context);
  put<uint64_t>(out, kFRegion, f.region);
  put<uint64_t>(out, kFOffset, f.offset);
  put<uint64_t>(out, kFSize, f.size);
  put<uint64_t>(out, kFSigRegion, f.signalRegion);
  put<uint64_t>(out, kFSigOffset, f.signalOffset);
  put<uint64_t>(out, kFSigValue, f.signalValue);
  put<uint64_t>(out, kFTag, f.tag);
}

bool decodeFrame(const uint8_t* in, Frame* out) {
  if (get<uint32_t>(in, 0) != kFrameMagic) return false;
  uint8_t op = get<uint8_t>(in, kFOp);
  if (op < static_cast<uint8_t>(Op::kPut) || op > static_cast<uint8_t>(Op::kBye)) return false;
  out->op = static_cast<Op>(op);
  out->status = get<uint8_t>(in, kFStatus);
  out->context = get<uint16_t>(in, kFContext);
  out->region = get<uint64_t>(in, kFRegion);
  out->offset = get<uint64_t>(in, kFOffset);
  out->size = get<uint64_t>(in, kFSize);
  out->signalRegion = get<uint64_t>(in, kFSigRegion);
  out->signalOffset = get<uint64_t>(in, kFSigOffset);
  out->signalValue = get<uint64_t>(in, kFSigValue);
  out->tag = get<uint64_t>(in, kFTag);
  return true;
}

const char* statusText(uint8_t status) {
  switch (status) {
    case kOk: return "ok";
    case kBadRegion: return "no such registration";
    case kOutOfBounds: return "outside the registration";
    case kBadSignal: return "signal word outside the registration or not 8-byte aligned";
    default: return "unknown status";
  }
}

}  // namespace ncclnet::socket::rma
