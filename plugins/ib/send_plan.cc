// SPDX-License-Identifier: Apache-2.0
// sdk-ib: building a slot's work requests.
#include "send_plan.hpp"

#include <algorithm>

namespace ncclnet::ib {

int firstQpFor(uint64_t seq, int nqps, bool split) {
  return split ? 0 : static_cast<int>(seq % static_cast<uint64_t>(nqps));
}

int usedQpsFor(int nqps, bool split) {
  return split ? nqps : 1;
}

bool separateImmediate(int nreqs, uint64_t size, bool adaptiveRouting, uint64_t arThreshold) {
  return nreqs > 1 || (adaptiveRouting && size > arThreshold);
}

int buildQpChain(const SlotPlan& plan, int q, ibv_send_wr* wrs, ibv_sge* sges) {
  int count = 0;
  auto add = [&](ibv_wr_opcode opcode, const ibv_sge& sge, uint64_t remote, uint32_t rkey) {
    ibv_send_wr& wr = wrs[count];
    wr = ibv_send_wr{};
    sges[count] = sge;
    wr.opcode = opcode;
    wr.sg_list = sge.length > 0 ? &sges[count] : nullptr;
    wr.num_sge = sge.length > 0 ? 1 : 0;
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    return &wrs[count++];
  };
  // This QP's share of every buffer.
  ibv_send_wr* lastPayload = nullptr;
  for (int r = 0; r < plan.nreqs; r++) {
    const SlotPart& part = plan.parts[r];
    if (part.skip || part.size == 0) continue;
    uint64_t share = part.size;
    if (plan.usedQps > 1) {
      share = (part.size + plan.usedQps - 1) / plan.usedQps;
      share = (share + kSplitAlign - 1) / kSplitAlign * kSplitAlign;
    }
    uint64_t offset = share * static_cast<uint64_t>(q);
    if (offset >= part.size) continue;
    uint64_t length = std::min<uint64_t>(share, part.size - offset);
    ibv_sge sge{part.local + offset, static_cast<uint32_t>(length), part.lkey};
    lastPayload = add(IBV_WR_RDMA_WRITE, sge, part.remote + offset, part.rkey);
  }
  ibv_send_wr* last = nullptr;
  if (!plan.separateImmediate && lastPayload != nullptr) {
    // One receive, no reordering to fear: the payload carries the
    // immediate. The sizes record must still land first, so it goes ahead.
    ibv_send_wr payload = *lastPayload;
    ibv_sge payloadSge = sges[lastPayload - wrs];
    count--;
    if (q == 0) {
      ibv_send_wr* sizes = add(IBV_WR_RDMA_WRITE, plan.sizes, plan.sizesRemote, plan.sizesRkey);
      if (plan.sizesInline) sizes->send_flags = IBV_SEND_INLINE;
    }
    last = add(IBV_WR_RDMA_WRITE_WITH_IMM, payloadSge, payload.wr.rdma.remote_addr,
               payload.wr.rdma.rkey);
  } else {
    if (q == 0) {
      ibv_send_wr* sizes = add(IBV_WR_RDMA_WRITE, plan.sizes, plan.sizesRemote, plan.sizesRkey);
      if (plan.sizesInline) sizes->send_flags = IBV_SEND_INLINE;
    }
    last = add(IBV_WR_RDMA_WRITE_WITH_IMM, ibv_sge{}, plan.sizesRemote, plan.sizesRkey);
  }
  last->wr_id = plan.wrId;
  last->send_flags |= IBV_SEND_SIGNALED;
  last->imm_data = plan.imm;
  for (int i = 0; i + 1 < count; i++) wrs[i].next = &wrs[i + 1];
  return count;
}

}  // namespace ncclnet::ib
