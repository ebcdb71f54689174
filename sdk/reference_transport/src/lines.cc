// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): LL and LL128 line encoding, decoding
// and readiness checks.
#include "ncclnet/transport/lines.hpp"

#include <cstring>

#include "ncclnet/detail/tsan.hpp"
#include "ncclnet/transport/constants.hpp"

namespace ncclnet::transport {

namespace {
inline uint64_t loadAcquire(const char* p) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}
inline void storeRelease(char* p, uint64_t v) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(p), v, __ATOMIC_RELEASE);
}
inline void storeRelaxed(char* p, uint64_t v) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(p), v, __ATOMIC_RELAXED);
}
// The 8 payload bytes of one LL line (zero padded past n).
inline uint64_t payloadWord(const uint8_t* payload, size_t n, size_t at) {
  uint64_t w = 0;
  if (at < n) std::memcpy(&w, payload + at, n - at < 8 ? n - at : 8);
  return w;
}
}  // namespace

// Each {data, flag} pair (llFirstWord, llSecondWord) is written with one
// release store so it is never torn.
void llWrite(char* lines, const uint8_t* payload, size_t n, uint32_t flag) {
  size_t nLines = (n + kLLDataBytesPerLine - 1) / kLLDataBytesPerLine;
  for (size_t l = 0; l < nLines; l++) {
    uint64_t data = payloadWord(payload, n, l * kLLDataBytesPerLine);
    storeRelease(lines + l * kLLLineBytes, llFirstWord(data, flag));
    storeRelease(lines + l * kLLLineBytes + 8, llSecondWord(data, flag));
  }
}

// The readers below race, by the protocol's design, with the plugin that
// lands the lines with plain stores (ncclnet/detail/tsan.hpp says why):
// ThreadSanitizer does not check their reads.
bool llReady(const char* lines, size_t nLines, uint32_t flag) {
  ncclnet::detail::TsanIgnoreReads racyByDesign;
  for (size_t l = 0; l < nLines; l++) {
    if (llWordFlag(loadAcquire(lines + l * kLLLineBytes)) != flag) return false;
    if (llWordFlag(loadAcquire(lines + l * kLLLineBytes + 8)) != flag) return false;
  }
  return true;
}

bool llRead(const char* lines, size_t n, uint32_t flag, uint8_t* out) {
  ncclnet::detail::TsanIgnoreReads racyByDesign;
  size_t nLines = (n + kLLDataBytesPerLine - 1) / kLLDataBytesPerLine;
  for (size_t l = 0; l < nLines; l++) {
    uint64_t first = loadAcquire(lines + l * kLLLineBytes);
    uint64_t second = loadAcquire(lines + l * kLLLineBytes + 8);
    if (llWordFlag(first) != flag || llWordFlag(second) != flag) return false;
    uint64_t data = llLineData(first, second);
    size_t at = l * kLLDataBytesPerLine;
    std::memcpy(out + at, &data, n - at < 8 ? n - at : 8);
  }
  return true;
}

void ll128Write(char* lines, const uint8_t* payload, size_t n, uint64_t flag) {
  size_t nLines = (n + kLL128DataBytesPerLine - 1) / kLL128DataBytesPerLine;
  for (size_t l = 0; l < nLines; l++) {
    char* line = lines + l * kLL128LineBytes;
    for (size_t w = 0; w < kLL128DataWords; w++) {
      storeRelaxed(line + w * 8, payloadWord(payload, n, l * kLL128DataBytesPerLine + w * 8));
    }
    storeRelease(line + kLL128FlagWord * 8, flag);  // after the payload words
  }
}

bool ll128Ready(const char* lines, size_t nLines, uint64_t flag) {
  ncclnet::detail::TsanIgnoreReads racyByDesign;
  for (size_t l = 0; l < nLines; l++) {
    if (loadAcquire(lines + l * kLL128LineBytes + kLL128FlagWord * 8) != flag) return false;
  }
  return true;
}

bool ll128Read(const char* lines, size_t n, uint64_t flag, uint8_t* out) {
  ncclnet::detail::TsanIgnoreReads racyByDesign;
  size_t nLines = (n + kLL128DataBytesPerLine - 1) / kLL128DataBytesPerLine;
  if (!ll128Ready(lines, nLines, flag)) return false;
  for (size_t l = 0; l < nLines; l++) {
    const char* line = lines + l * kLL128LineBytes;
    for (size_t w = 0; w < kLL128DataWords; w++) {
      size_t at = l * kLL128DataBytesPerLine + w * 8;
      if (at >= n) break;
      uint64_t v =
          __atomic_load_n(reinterpret_cast<const uint64_t*>(line + w * 8), __ATOMIC_RELAXED);
      std::memcpy(out + at, &v, n - at < 8 ? n - at : 8);
    }
  }
  return true;
}

}  // namespace ncclnet::transport
