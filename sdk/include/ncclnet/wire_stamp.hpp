// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the handle codec every plugin needs. A listen handle (the
// bytes NCCL carries from the listener to the connector) and the first
// message of a connection (the hello) both start with a stamp: a magic
// that says "written by this plugin", a version that says "in this layout",
// and, where the plugin has one, a per-listen secret that says "by a peer
// that read this listen's handle". Anything that can reach a listening port
// or hand NCCL a stale handle can send bytes, so every plugin judges the
// stamp before trusting the rest; this block judges it once for all of them,
// with one verdict, one log text and one ncclResult_t per way of failing.
//
// The block owns no layout: each plugin keeps its wire format and says
// where the three fields sit in it (a width of 0: the format has none).
//
//   constexpr ncclnet::WireStamp kHello{"sdk-x", "handshake", 0x7364'6b78, 2,
//                                      {{0, 4}, {4, 2}, {8, 8}}};
//   kHello.write(bytes, secret);
//   ncclnet::WireVerdict v = kHello.check(bytes, got, &listenSecret);
//   if (v != ncclnet::WireVerdict::kOk) dropStray(kHello.explain(v, bytes, got));
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ncclnet/abi/result.h"
#include "ncclnet/result_policy.hpp"

namespace ncclnet {

// Where one stamp field sits: byte offset and width (1, 2, 4 or 8 bytes,
// host byte order, as both ends run the same plugin build). Width 0: the
// layout has no such field, and the check skips it.
struct WireField {
  size_t offset = 0;
  size_t width = 0;
  constexpr size_t end() const { return width == 0 ? 0 : offset + width; }
};

struct WireLayout {
  WireField magic;
  WireField version;
  WireField secret;
  // Bytes that must have arrived before the stamp can be judged.
  constexpr size_t bytes() const {
    size_t n = magic.end();
    if (version.end() > n) n = version.end();
    if (secret.end() > n) n = secret.end();
    return n;
  }
};

// Checked in this order: a short message cannot be judged, bytes without the
// magic are someone else's, then the layout, then who may speak. kMalformed
// is the plugin's own verdict on the fields after a good stamp (a length or
// count out of range): reported the same way.
enum class WireVerdict { kOk, kTruncated, kNotOurs, kWrongVersion, kWrongSecret, kMalformed };

// Who wrote the bytes decides whose fault a refusal is.
enum class WireSource {
  kHandle,  // NCCL passed them to connect(): a handle this listen never wrote
  kAnswer,  // the peer this side dialed answered with them
};

// The result a plugin returns for a refused stamp, from the result policy
// (result_policy.hpp): Failure::kBadHandle for a handle (NCCL handed over
// bytes that are not a listen handle of this plugin: the caller's mistake,
// ncclInvalidUsage), Failure::kPeerMisbehaved for an answer (the peer is of
// another kind or version, ncclRemoteError). ncclSuccess for kOk. Bytes arriving at a
// listen have no result: they may be a stray (a port scanner, a stale job),
// so the listen drops them with a rate-limited WARN and waits for its peer.
ncclResult_t wireResult(WireVerdict verdict, WireSource source);

class WireStamp {
 public:
  // `owner`: the plugin's name; `what`: the message ("listen handle",
  // "handshake"). Both appear in explain()'s text and must outlive the stamp.
  constexpr WireStamp(const char* owner, const char* what, uint64_t magic, uint64_t version,
                      WireLayout layout)
      : owner_(owner), what_(what), magic_(magic), version_(version), layout_(layout) {}

  constexpr const WireLayout& layout() const { return layout_; }
  constexpr size_t bytes() const { return layout_.bytes(); }
  constexpr uint64_t magic() const { return magic_; }
  constexpr uint64_t version() const { return version_; }

  // Writes magic, version and `secret` at their offsets; other bytes are
  // left alone.
  void write(void* bytes, uint64_t secret = 0) const;
  // The verdict on the first `length` bytes. `secret`: the value the secret
  // field must hold, or null where this side does not know it (connect
  // reading a handle takes the secret from it).
  WireVerdict check(const void* bytes, size_t length, const uint64_t* secret = nullptr) const;
  // The secret field of a stamp that passed check() (0 when the layout has none).
  uint64_t secretOf(const void* bytes) const;
  // One line for the log, naming what was wrong ("not a handshake of sdk-ib
  // (wrong magic 0x...)"). `detail` completes kMalformed.
  std::string explain(WireVerdict verdict, const void* bytes, size_t length,
                      const char* detail = nullptr) const;

 private:
  const char* owner_;
  const char* what_;
  uint64_t magic_;
  uint64_t version_;
  WireLayout layout_;
};

}  // namespace ncclnet
