// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the work requests of one message slot (send_plan.hpp) — which
// QPs, 128-byte-aligned shares, the sizes record ahead of the immediate,
// and NCCL's rule for when the payload carries the immediate.
#include <gtest/gtest.h>

#include "send_plan.hpp"

namespace ncclnet::ib {
namespace {

SlotPlan onePart(uint64_t size) {
  SlotPlan plan;
  plan.nreqs = 1;
  plan.parts[0] = SlotPart{0x10000, 11, size, 0x90000, 22, false};
  plan.sizes = ibv_sge{0x5000, 8, 33};
  plan.sizesRemote = 0x7000;
  plan.sizesRkey = 44;
  plan.wrId = 5;
  plan.imm = 0x05000000;
  return plan;
}

struct Chain {
  ibv_send_wr wrs[kMaxChain];
  ibv_sge sges[kMaxChain];
  int count = 0;
};

Chain build(const SlotPlan& plan, int q) {
  Chain c;
  c.count = buildQpChain(plan, q, c.wrs, c.sges);
  return c;
}

void expectLinkedAndSignalledOnceAtTheEnd(const Chain& c) {
  for (int i = 0; i < c.count; i++) {
    EXPECT_EQ(c.wrs[i].next, i + 1 < c.count ? &c.wrs[i + 1] : nullptr) << i;
    EXPECT_EQ((c.wrs[i].send_flags & IBV_SEND_SIGNALED) != 0, i + 1 == c.count) << i;
  }
  EXPECT_EQ(c.wrs[c.count - 1].opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
}

TEST(SendPlanTest, NcclRuleForAnImmediateApart) {
  EXPECT_FALSE(separateImmediate(1, 1 << 20, false, 8192));  // no adaptive routing
  EXPECT_FALSE(separateImmediate(1, 8192, true, 8192));      // not above the threshold
  EXPECT_TRUE(separateImmediate(1, 8193, true, 8192));
  EXPECT_TRUE(separateImmediate(2, 10, false, 8192));  // grouped receives: always apart
}

TEST(SendPlanTest, OneQpRoundRobinOrEveryQp) {
  EXPECT_EQ(firstQpFor(7, 3, false), 1);
  EXPECT_EQ(usedQpsFor(3, false), 1);
  EXPECT_EQ(firstQpFor(7, 3, true), 0);
  EXPECT_EQ(usedQpsFor(3, true), 3);
}

TEST(SendPlanTest, FoldedPayloadCarriesTheImmediateAfterTheSizes) {
  SlotPlan plan = onePart(4096);
  plan.separateImmediate = false;
  plan.sizesInline = true;
  Chain c = build(plan, 0);
  ASSERT_EQ(c.count, 2);
  EXPECT_EQ(c.wrs[0].opcode, IBV_WR_RDMA_WRITE);  // the sizes record lands first
  EXPECT_EQ(c.wrs[0].send_flags, static_cast<unsigned>(IBV_SEND_INLINE));
  EXPECT_EQ(c.wrs[0].wr.rdma.remote_addr, 0x7000u);
  EXPECT_EQ(c.wrs[1].sg_list->addr, 0x10000u);
  EXPECT_EQ(c.wrs[1].sg_list->length, 4096u);
  EXPECT_EQ(c.wrs[1].wr.rdma.remote_addr, 0x90000u);
  EXPECT_EQ(c.wrs[1].wr.rdma.rkey, 22u);
  EXPECT_EQ(c.wrs[1].imm_data, 0x05000000u);
  EXPECT_EQ(c.wrs[1].wr_id, 5u);
  expectLinkedAndSignalledOnceAtTheEnd(c);
}

TEST(SendPlanTest, SeparateImmediateIsAZeroByteWriteAfterEverything) {
  SlotPlan plan = onePart(1 << 20);
  plan.separateImmediate = true;
  Chain c = build(plan, 0);
  ASSERT_EQ(c.count, 3);
  EXPECT_EQ(c.wrs[0].opcode, IBV_WR_RDMA_WRITE);
  EXPECT_EQ(c.wrs[0].sg_list->length, 1u << 20);
  EXPECT_EQ(c.wrs[1].wr.rdma.remote_addr, 0x7000u);  // sizes
  EXPECT_EQ(c.wrs[1].send_flags, 0u);                // not inline unless asked
  EXPECT_EQ(c.wrs[1].sg_list->lkey, 33u);
  EXPECT_EQ(c.wrs[2].num_sge, 0);
  expectLinkedAndSignalledOnceAtTheEnd(c);
}

TEST(SendPlanTest, SplitSharesAre128ByteAlignedAndOnlyTheFirstQpWritesSizes) {
  SlotPlan plan = onePart(1000);  // shares of 384: 384, 384, 232
  plan.usedQps = 3;
  plan.separateImmediate = true;
  uint64_t covered = 0;
  for (int q = 0; q < 3; q++) {
    Chain c = build(plan, q);
    ASSERT_EQ(c.count, q == 0 ? 3 : 2) << q;
    EXPECT_EQ(c.wrs[0].sg_list->addr, 0x10000u + 384u * q);
    EXPECT_EQ(c.wrs[0].wr.rdma.remote_addr, 0x90000u + 384u * q);
    EXPECT_EQ(c.wrs[0].sg_list->length, q < 2 ? 384u : 232u);
    covered += c.wrs[0].sg_list->length;
    expectLinkedAndSignalledOnceAtTheEnd(c);
  }
  EXPECT_EQ(covered, 1000u);
}

TEST(SendPlanTest, AQpWithoutAShareStillSendsItsImmediate) {
  SlotPlan plan = onePart(100);  // one share of 128 covers it all
  plan.usedQps = 3;
  plan.separateImmediate = false;
  Chain c = build(plan, 2);
  ASSERT_EQ(c.count, 1);
  EXPECT_EQ(c.wrs[0].num_sge, 0);
  expectLinkedAndSignalledOnceAtTheEnd(c);
}

TEST(SendPlanTest, TruncatedAndEmptyPartsWriteNothing) {
  SlotPlan plan = onePart(4096);
  plan.nreqs = 3;
  plan.parts[1] = SlotPart{0x20000, 11, 0, 0xa0000, 22, false};
  plan.parts[2] = SlotPart{0x30000, 11, 512, 0xb0000, 22, true};
  plan.parts[0].skip = true;
  plan.separateImmediate = true;
  Chain c = build(plan, 0);
  ASSERT_EQ(c.count, 2);  // sizes and the immediate
  EXPECT_EQ(c.wrs[0].wr.rdma.remote_addr, 0x7000u);
  expectLinkedAndSignalledOnceAtTheEnd(c);
}

}  // namespace
}  // namespace ncclnet::ib
