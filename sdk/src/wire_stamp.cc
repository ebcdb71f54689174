// SPDX-License-Identifier: Apache-2.0
// The handle codec (wire_stamp.hpp says what and why).
#include "ncclnet/wire_stamp.hpp"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace ncclnet {

namespace {

// A field of 1, 2, 4 or 8 bytes, widened: the widths of the host's own
// integer types, so that a plugin's memcpy'd struct and this read agree.
uint64_t readField(const void* bytes, WireField f) {
  const auto* at = static_cast<const uint8_t*>(bytes) + f.offset;
  switch (f.width) {
    case 1: return *at;
    case 2: {
      uint16_t v;
      std::memcpy(&v, at, sizeof(v));
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, at, sizeof(v));
      return v;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, at, sizeof(v));
      return v;
    }
    default: return 0;
  }
}

void writeField(void* bytes, WireField f, uint64_t value) {
  auto* at = static_cast<uint8_t*>(bytes) + f.offset;
  switch (f.width) {
    case 1: *at = static_cast<uint8_t>(value); break;
    case 2: {
      auto v = static_cast<uint16_t>(value);
      std::memcpy(at, &v, sizeof(v));
      break;
    }
    case 4: {
      auto v = static_cast<uint32_t>(value);
      std::memcpy(at, &v, sizeof(v));
      break;
    }
    case 8: std::memcpy(at, &value, sizeof(value)); break;
    default: break;
  }
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char line[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  return line;
}

}  // namespace

ncclResult_t wireResult(WireVerdict verdict, WireSource source) {
  if (verdict == WireVerdict::kOk) return ncclSuccess;
  return resultOf(source == WireSource::kHandle ? Failure::kBadHandle : Failure::kPeerMisbehaved);
}

void WireStamp::write(void* bytes, uint64_t secret) const {
  writeField(bytes, layout_.magic, magic_);
  writeField(bytes, layout_.version, version_);
  writeField(bytes, layout_.secret, secret);
}

WireVerdict WireStamp::check(const void* bytes, size_t length, const uint64_t* secret) const {
  if (length < layout_.bytes()) return WireVerdict::kTruncated;
  if (layout_.magic.width != 0 && readField(bytes, layout_.magic) != magic_) {
    return WireVerdict::kNotOurs;
  }
  if (layout_.version.width != 0 && readField(bytes, layout_.version) != version_) {
    return WireVerdict::kWrongVersion;
  }
  if (secret != nullptr && layout_.secret.width != 0 &&
      readField(bytes, layout_.secret) != *secret) {
    return WireVerdict::kWrongSecret;
  }
  return WireVerdict::kOk;
}

uint64_t WireStamp::secretOf(const void* bytes) const {
  return layout_.secret.width == 0 ? 0 : readField(bytes, layout_.secret);
}

std::string WireStamp::explain(WireVerdict verdict, const void* bytes, size_t length,
                               const char* detail) const {
  switch (verdict) {
    case WireVerdict::kOk: return format("a good %s of %s", what_, owner_);
    case WireVerdict::kTruncated:
      return format("a %s of %zu bytes, shorter than %s's %zu-byte stamp", what_, length, owner_,
                    layout_.bytes());
    case WireVerdict::kNotOurs:
      return format("not a %s of %s (wrong magic 0x%" PRIx64 ")", what_, owner_,
                    readField(bytes, layout_.magic));
    case WireVerdict::kWrongVersion:
      return format("a %s of %s wire version %" PRIu64 ", this one speaks %" PRIu64
                    " (mixed %s versions in one job)",
                    what_, owner_, readField(bytes, layout_.version), version_, owner_);
    case WireVerdict::kWrongSecret:
      return "its secret is not this listen's (a stale or forged handle)";
    case WireVerdict::kMalformed:
      return format("a malformed %s of %s: %s", what_, owner_, detail != nullptr ? detail : "");
  }
  return "unknown verdict";
}

}  // namespace ncclnet
