// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: the header and ready word codecs.
#include "wire.hpp"

#include <cstring>

namespace ncclnet::socket::collnet {

namespace {

constexpr uint32_t kReadyWord = 0x5944'4552;  // "REDY" on little-endian

template <class T>
void put(uint8_t* out, size_t at, T v) {
  std::memcpy(out + at, &v, sizeof(v));
}
template <class T>
T get(const uint8_t* in, size_t at) {
  T v;
  std::memcpy(&v, in + at, sizeof(v));
  return v;
}

}  // namespace

const char* kindName(Kind kind) {
  switch (kind) {
    case Kind::kAllReduce: return "iallreduce";
    case Kind::kAllGather: return "iallgather";
    case Kind::kReduceScatter: return "ireducescatter";
  }
  return "unknown";
}

void encodeHeader(const Header& h, uint8_t* out) {
  std::memset(out, 0, kHeaderBytes);
  put<uint32_t>(out, 0, kMagic);
  put<uint16_t>(out, 4, kVersion);
  put<uint8_t>(out, 6, static_cast<uint8_t>(h.kind));
  put<uint64_t>(out, 8, h.seq);
  put<uint64_t>(out, 16, h.bytes);
}

bool decodeHeader(const uint8_t* in, Header* out) {
  if (get<uint32_t>(in, 0) != kMagic || get<uint16_t>(in, 4) != kVersion) return false;
  uint8_t kind = get<uint8_t>(in, 6);
  if (kind < static_cast<uint8_t>(Kind::kAllReduce) ||
      kind > static_cast<uint8_t>(Kind::kReduceScatter)) {
    return false;
  }
  out->kind = static_cast<Kind>(kind);
  out->seq = get<uint64_t>(in, 8);
  out->bytes = get<uint64_t>(in, 16);
  return true;
}

void encodeReady(uint8_t* out) {
  put<uint32_t>(out, 0, kMagic);
  put<uint32_t>(out, 4, kReadyWord);
}

bool decodeReady(const uint8_t* in) {
  return get<uint32_t>(in, 0) == kMagic && get<uint32_t>(in, 4) == kReadyWord;
}

}  // namespace ncclnet::socket::collnet
