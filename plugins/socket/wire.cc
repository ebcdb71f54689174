// SPDX-License-Identifier: Apache-2.0
// sdk-socket: encoders and decoders for the layouts in wire.hpp.
#include "wire.hpp"

#include <netinet/in.h>

#include <cstring>

namespace ncclnet::socket {

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

// Per-frame magics: a desynchronized stream is caught at the next frame.
constexpr uint32_t kHeaderMagic = 0x4844'5353;
constexpr uint32_t kCtsMagic = 0x4354'5353;

// Handle offsets after the stamp (magic 0, version 4, cookie 40: kHandleStamp).
constexpr size_t kHFamily = 6, kHPort = 8, kHThreads = 10, kHSocks = 12, kHAddr = 16, kHScope = 32,
                 kHMinTask = 36;

}  // namespace

void encodeHandle(const ListenHandle& h, void* handle) {
  auto* out = static_cast<uint8_t*>(handle);
  std::memset(out, 0, kHandleBytes);
  kHandleStamp.write(out, h.cookie);
  put<uint16_t>(out, kHFamily, h.addr.ss_family);
  put<uint16_t>(out, kHThreads, h.nThreads);
  put<uint16_t>(out, kHSocks, h.nSocksPerThread);
  put<uint32_t>(out, kHMinTask, h.minTaskBytes);
  if (h.addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&h.addr);
    put<uint16_t>(out, kHPort, in->sin_port);  // network order, kept as is
    std::memcpy(out + kHAddr, &in->sin_addr, 4);
  } else {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&h.addr);
    put<uint16_t>(out, kHPort, in6->sin6_port);
    std::memcpy(out + kHAddr, &in6->sin6_addr, 16);
    put<uint32_t>(out, kHScope, in6->sin6_scope_id);
  }
}

WireVerdict decodeHandle(const void* handle, ListenHandle* out) {
  const auto* in = static_cast<const uint8_t*>(handle);
  WireVerdict stamp = kHandleStamp.check(in, kHandleBytes);
  if (stamp != WireVerdict::kOk) return stamp;
  ListenHandle h;
  uint16_t family = get<uint16_t>(in, kHFamily);
  if (family == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&h.addr);
    sin->sin_family = AF_INET;
    sin->sin_port = get<uint16_t>(in, kHPort);
    std::memcpy(&sin->sin_addr, in + kHAddr, 4);
    h.addrLen = sizeof(sockaddr_in);
  } else if (family == AF_INET6) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&h.addr);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = get<uint16_t>(in, kHPort);
    std::memcpy(&sin6->sin6_addr, in + kHAddr, 16);
    sin6->sin6_scope_id = get<uint32_t>(in, kHScope);
    h.addrLen = sizeof(sockaddr_in6);
  } else {
    return WireVerdict::kMalformed;
  }
  h.nThreads = get<uint16_t>(in, kHThreads);
  h.nSocksPerThread = get<uint16_t>(in, kHSocks);
  h.minTaskBytes = get<uint32_t>(in, kHMinTask);
  h.cookie = kHandleStamp.secretOf(in);
  int drivers = h.nThreads > 0 ? h.nThreads : 1;
  if (h.nThreads > 16 || h.nSocksPerThread < 1 || drivers * h.nSocksPerThread > 64 ||
      h.minTaskBytes == 0) {
    return WireVerdict::kMalformed;
  }
  *out = h;
  return WireVerdict::kOk;
}

void encodeHello(const Hello& h, uint8_t* out) {
  std::memset(out, 0, kHelloBytes);
  kHelloStamp.write(out, h.cookie);
  put<uint16_t>(out, 6, h.index);
  put<uint64_t>(out, 16, h.connectionId);
  put<uint16_t>(out, 24, h.streams);
  put<uint16_t>(out, 26, h.nThreads);
}

WireVerdict decodeHello(const uint8_t* in, uint64_t expectedCookie, Hello* out) {
  WireVerdict stamp = kHelloStamp.check(in, kHelloBytes, &expectedCookie);
  if (stamp != WireVerdict::kOk) return stamp;
  Hello h;
  h.index = get<uint16_t>(in, 6);
  h.cookie = kHelloStamp.secretOf(in);
  h.connectionId = get<uint64_t>(in, 16);
  h.streams = get<uint16_t>(in, 24);
  h.nThreads = get<uint16_t>(in, 26);
  if (h.streams < 1 || h.streams > 64 || h.index > h.streams || h.nThreads > 16) {
    return WireVerdict::kMalformed;
  }
  *out = h;
  return WireVerdict::kOk;
}

void encodeHeader(const DataHeader& h, uint8_t* out) {
  put<uint32_t>(out, 0, kHeaderMagic);
  put<uint8_t>(out, 4, 0);
  put<uint8_t>(out, 5, h.flags);
  put<uint16_t>(out, 6, 0);
  put<uint64_t>(out, 8, h.size);
  put<int32_t>(out, 16, h.tag);
  put<uint32_t>(out, 20, 0);
}

bool decodeHeader(const uint8_t* in, DataHeader* out) {
  if (get<uint32_t>(in, 0) != kHeaderMagic) return false;
  out->flags = get<uint8_t>(in, 5);
  out->size = get<uint64_t>(in, 8);
  out->tag = get<int32_t>(in, 16);
  constexpr uint8_t kKnown = kFlagTruncated | kFlagInline | kFlagEager;
  bool eagerFits = !(out->flags & kFlagEager) || out->size <= kEagerBytes;
  // A refused send carries no payload, and only a send that saw its
  // clear-to-send can be refused.
  bool truncatedAlone = !(out->flags & kFlagTruncated) || out->flags == kFlagTruncated;
  return (out->flags & ~kKnown) == 0 && eagerFits && truncatedAlone;
}

void encodeCts(const ClearToSend& c, uint8_t* out) {
  std::memset(out, 0, kCtsBytes);
  put<uint32_t>(out, 0, kCtsMagic);
  put<uint32_t>(out, 4, static_cast<uint32_t>(c.n));
  for (int i = 0; i < c.n; i++) {
    put<uint64_t>(out, 8 + i * 8, c.sizes[i]);
    put<int32_t>(out, 8 + kMaxRecvs * 8 + i * 4, c.tags[i]);
  }
}

bool decodeCts(const uint8_t* in, ClearToSend* out) {
  if (get<uint32_t>(in, 0) != kCtsMagic) return false;
  uint32_t n = get<uint32_t>(in, 4);
  if (n < 1 || n > kMaxRecvs) return false;
  out->n = static_cast<int>(n);
  for (int i = 0; i < out->n; i++) {
    out->sizes[i] = get<uint64_t>(in, 8 + i * 8);
    out->tags[i] = get<int32_t>(in, 8 + kMaxRecvs * 8 + i * 4);
  }
  return true;
}

}  // namespace ncclnet::socket
