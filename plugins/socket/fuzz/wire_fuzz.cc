// SPDX-License-Identifier: Apache-2.0
// Fuzzes sdk-socket's decoders of bytes that come from outside the process:
// the listen handle (what NCCL hands connect), the hello on every new socket,
// and the two control frames. The first input byte picks the decoder; the
// rest is the message, zero-padded to its fixed size as the plugin reads it.
// A message that decodes must re-encode to one that decodes the same.
#include <netinet/in.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "wire.hpp"

using namespace ncclnet::socket;

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "sdk-socket wire: %s\n", what);
  std::abort();
}

void handle(const uint8_t* in) {
  ListenHandle h;
  if (decodeHandle(in, &h) != ncclnet::WireVerdict::kOk) return;
  require(h.addr.ss_family == AF_INET ? h.addrLen == sizeof(sockaddr_in)
                                      : h.addrLen == sizeof(sockaddr_in6),
          "handle: address length does not match its family");
  require(h.nThreads <= 16 && h.nSocksPerThread >= 1 && h.minTaskBytes > 0,
          "handle: accepted a field out of range");
  uint8_t again[NCCL_NET_HANDLE_MAXSIZE] = {};
  encodeHandle(h, again);
  ListenHandle back;
  require(decodeHandle(again, &back) == ncclnet::WireVerdict::kOk,
          "handle: re-encoded handle refused");
  require(back.addrLen == h.addrLen && std::memcmp(&back.addr, &h.addr, h.addrLen) == 0 &&
              back.cookie == h.cookie && back.nThreads == h.nThreads &&
              back.nSocksPerThread == h.nSocksPerThread && back.minTaskBytes == h.minTaskBytes,
          "handle: round trip changed a field");
}

void hello(const uint8_t* in) {
  // The expected cookie is the one the message carries half of the time,
  // so that the checks after the cookie are reached.
  uint64_t expected = 0;
  std::memcpy(&expected, in + 8, sizeof(expected));
  if (in[kHelloBytes - 1] & 1) expected = ~expected;
  Hello h;
  if (decodeHello(in, expected, &h) != ncclnet::WireVerdict::kOk) return;
  require(h.cookie == expected, "hello: accepted the wrong cookie");
  require(h.streams >= 1 && h.streams <= 64 && h.index <= h.streams && h.nThreads <= 16,
          "hello: accepted a field out of range");
  uint8_t again[kHelloBytes];
  encodeHello(h, again);
  Hello back;
  require(decodeHello(again, expected, &back) == ncclnet::WireVerdict::kOk,
          "hello: re-encoded refused");
  require(back.index == h.index && back.connectionId == h.connectionId &&
              back.streams == h.streams && back.nThreads == h.nThreads,
          "hello: round trip changed a field");
}

void header(const uint8_t* in) {
  DataHeader h;
  if (!decodeHeader(in, &h)) return;
  require(!(h.flags & kFlagEager) || h.size <= kEagerBytes,
          "header: accepted an eager message beyond the eager limit");
  uint8_t again[kHeaderBytes];
  encodeHeader(h, again);
  DataHeader back;
  require(decodeHeader(again, &back), "header: re-encoded refused");
  require(back.size == h.size && back.tag == h.tag && back.flags == h.flags,
          "header: round trip changed a field");
}

void cts(const uint8_t* in) {
  ClearToSend c;
  if (!decodeCts(in, &c)) return;
  require(c.n >= 1 && c.n <= kMaxRecvs, "clear-to-send: accepted a count beyond maxRecvs");
  uint8_t again[kCtsBytes];
  encodeCts(c, again);
  ClearToSend back;
  require(decodeCts(again, &back), "clear-to-send: re-encoded refused");
  require(back.n == c.n, "clear-to-send: round trip changed the count");
  for (int i = 0; i < c.n; i++) {
    require(back.sizes[i] == c.sizes[i] && back.tags[i] == c.tags[i],
            "clear-to-send: round trip changed a buffer");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The largest layout is NCCL's handle buffer; every decoder reads its fixed size.
  static_assert(kCtsBytes <= NCCL_NET_HANDLE_MAXSIZE && kHelloBytes <= NCCL_NET_HANDLE_MAXSIZE);
  uint8_t message[NCCL_NET_HANDLE_MAXSIZE] = {};
  std::memcpy(message, data + 1, std::min(size - 1, sizeof(message)));
  switch (data[0] % 4) {
    case 0: handle(message); break;
    case 1: hello(message); break;
    case 2: header(message); break;
    case 3: cts(message); break;
  }
  return 0;
}
