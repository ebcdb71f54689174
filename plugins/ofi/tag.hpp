// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the libfabric tag of every message, and why it looks that way.
//
// A provider matches a tagged message to a posted receive by (source, tag).
// The plugin needs three things from that match: the right connection (many
// comms share one endpoint), the right buffer of a grouped receive (NCCL's
// tag), and NCCL's ordering rule: the k-th send carrying NCCL tag t lands in
// the k-th posted receive buffer carrying t. A per-(connection, NCCL tag)
// sequence number makes every message's tag unique among those in flight, so
// the order in which libfabric sees posts no longer matters.
//
// Layout, for a provider offering W tag bits (W = 64 on most, from
// fi_info.ep_attr.mem_tag_format), most significant first:
//
//   data:     | 0 | connection id (C) | NCCL tag (T) | sequence (12) |
//   connect:  | 1 | listen id (W-1)                                  |
//
// with T = min(32, W - 27) and C = W - 13 - T (W = 64: C = 19, T = 32;
// W = 48: C = 14, T = 21). The connection id is chosen by the sender and
// is unique among the live connections of its endpoint; the receiver tells
// senders apart by source address (directed receive), so ids need not be
// unique across processes. 12 sequence bits outnumber the 32 x 8 sends a
// connection can have in flight, so a wrapped number never meets its twin.
#pragma once

#include <cstdint>

namespace ncclnet::ofi {

class TagLayout {
 public:
  static constexpr int kSeqBits = 12;
  static constexpr int kMinConnBits = 14;
  static constexpr int kMinTagBits = 16;
  static constexpr int kMaxTagBits = 32;
  static constexpr int kMinWidth = 1 + kMinConnBits + kMinTagBits + kSeqBits;  // 43

  // Usable tag bits for a provider's mem_tag_format: everything up to its
  // highest set bit (0 means the provider states no limit: 64).
  static int widthOf(uint64_t memTagFormat) {
    if (memTagFormat == 0) return 64;
    return 64 - __builtin_clzll(memTagFormat);
  }

  // False when `width` is too narrow for the layout (fewer than 43 bits).
  static bool forWidth(int width, TagLayout* out) {
    if (width < kMinWidth || width > 64) return false;
    TagLayout layout;
    layout.width_ = width;
    layout.tagBits_ = width - 1 - kSeqBits - kMinConnBits;
    if (layout.tagBits_ > kMaxTagBits) layout.tagBits_ = kMaxTagBits;
    layout.connBits_ = width - 1 - kSeqBits - layout.tagBits_;
    *out = layout;
    return true;
  }

  int width() const { return width_; }
  int connBits() const { return connBits_; }
  int tagBits() const { return tagBits_; }
  uint32_t seqMask() const { return (1u << kSeqBits) - 1; }
  uint64_t connIdCount() const { return 1ull << connBits_; }
  uint64_t listenIdLimit() const { return 1ull << (width_ - 1); }

  // NCCL tags are ints; with 32 tag bits every int fits (as its two's
  // complement), with fewer only 0 .. 2^T - 1 do.
  bool fitsTag(int ncclTag) const {
    if (tagBits_ >= 32) return true;
    return ncclTag >= 0 && static_cast<uint64_t>(ncclTag) < (1ull << tagBits_);
  }

  uint64_t data(uint32_t connId, int ncclTag, uint32_t seq) const {
    uint64_t tag = static_cast<uint64_t>(static_cast<uint32_t>(ncclTag)) & mask(tagBits_);
    return (static_cast<uint64_t>(connId) & mask(connBits_)) << (kSeqBits + tagBits_) |
           tag << kSeqBits | (seq & seqMask());
  }

  uint64_t connect(uint64_t listenId) const {
    return 1ull << (width_ - 1) | (listenId & mask(width_ - 1));
  }

  bool isConnect(uint64_t tag) const { return (tag >> (width_ - 1)) & 1; }
  uint32_t connIdOf(uint64_t tag) const {
    return static_cast<uint32_t>((tag >> (kSeqBits + tagBits_)) & mask(connBits_));
  }
  uint32_t ncclTagOf(uint64_t tag) const {
    return static_cast<uint32_t>((tag >> kSeqBits) & mask(tagBits_));
  }
  uint32_t seqOf(uint64_t tag) const { return static_cast<uint32_t>(tag & seqMask()); }

 private:
  static uint64_t mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

  int width_ = 64;
  int connBits_ = 19;
  int tagBits_ = 32;
};

}  // namespace ncclnet::ofi
