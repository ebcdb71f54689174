// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the work requests one message slot posts on each of its QPs —
// arithmetic over a description of the slot, unit-tested without a device.
//
// Which QPs (NCCL_IB_SPLIT_DATA_ON_QPS, NCCL's meaning):
//   0  the slot goes on one QP, round robin by its sequence number;
//   1  every buffer of the slot is split over all QPs in 128-byte-aligned
//      shares (an LL128 line is never torn).
// What each QP carries, in order:
//   the payload WRITEs, the sizes record (first QP only; what the receiver
//   reports), and a 0-byte WRITE_WITH_IMM that consumes the receive.
// Except (NCCL's rule): a single receive whose message is not larger than
// NCCL_IB_AR_THRESHOLD, or any single receive without adaptive routing,
// lets its payload WRITE carry the immediate itself — one work request
// fewer. Under adaptive routing a large write's packets may arrive out of
// order and its immediate could complete before the data lands, so the
// immediate then travels apart, after it.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace ncclnet::ib {

constexpr int kMaxRecvs = 8;           // a grouped receive's buffers (maxRecvs)
constexpr uint32_t kSplitAlign = 128;  // never tear an LL128 line across QPs

struct SlotPart {
  uint64_t local = 0;  // the send buffer
  uint32_t lkey = 0;
  uint64_t size = 0;
  uint64_t remote = 0;  // the receive buffer, from the clear-to-send entry
  uint32_t rkey = 0;
  bool skip = false;  // truncated: nothing of it is written
};

struct SlotPlan {
  int nreqs = 0;
  SlotPart parts[kMaxRecvs];
  ibv_sge sizes{};  // the sizes record (int64 per buffer), local copy
  bool sizesInline = false;
  uint64_t sizesRemote = 0;  // where it lands; also the 0-byte immediate's target
  uint32_t sizesRkey = 0;
  uint64_t wrId = 0;  // of the signalled last request on every QP
  uint32_t imm = 0;   // network order
  int usedQps = 1;
  bool separateImmediate = true;
};

// The QPs a slot with sequence number `seq` uses: [first, first + count)
// out of `nqps`.
int firstQpFor(uint64_t seq, int nqps, bool split);
int usedQpsFor(int nqps, bool split);

// NCCL's rule above.
bool separateImmediate(int nreqs, uint64_t size, bool adaptiveRouting, uint64_t arThreshold);

constexpr int kMaxChain = kMaxRecvs + 2;
// The chain for the `q`-th used QP (0-based), linked through `next`;
// returns its length. `wrs` and `sges` hold kMaxChain entries.
int buildQpChain(const SlotPlan& plan, int q, ibv_send_wr* wrs, ibv_sge* sges);

}  // namespace ncclnet::ib
