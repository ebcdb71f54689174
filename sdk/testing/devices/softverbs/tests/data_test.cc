// SPDX-License-Identifier: Apache-2.0
// softverbs: the operations and their completion semantics, between two
// QPs of one device (every byte still crosses loopback TCP).
#include <arpa/inet.h>

#include <cstring>
#include <numeric>

#include "fixture.hpp"

namespace softverbs::testing {
namespace {

using DataTest = PairTest;

TEST_F(DataTest, SendLandsInPostedReceive) {
  std::memcpy(bufA_.data(), "hello", 6);
  ASSERT_EQ(postRecv(b_, bufB_.data(), 100, mrB_->lkey, 11), 0);
  ASSERT_EQ(postWrite(a_, IBV_WR_SEND_WITH_IMM, bufA_.data(), 6, mrA_->lkey, 0, 0, 22,
                      IBV_SEND_SIGNALED, htonl(5)),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqB_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(wc.wr_id, 11u);
  EXPECT_EQ(wc.byte_len, 6u);
  EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(wc.imm_data), 5u);
  EXPECT_STREQ(bufB_.data(), "hello");
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  EXPECT_EQ(wc.wr_id, 22u);
}

TEST_F(DataTest, WriteLandsWithoutAReceive) {
  std::iota(bufA_.begin(), bufA_.end(), 0);
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), kBytes, mrA_->lkey, addrB(), mrB_->rkey, 1),
      0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(bufA_, bufB_);
  EXPECT_TRUE(staysEmpty(cqB_));  // the target saw nothing
}

TEST_F(DataTest, WriteWithImmConsumesAReceive) {
  std::memset(bufA_.data(), 0x5a, 4096);
  ASSERT_EQ(postRecv(b_, nullptr, 0, 0, 77), 0);
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE_WITH_IMM, bufA_.data(), 4096, mrA_->lkey, addrB() + 8,
                      mrB_->rkey, 1, IBV_SEND_SIGNALED, htonl(0xabcd)),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqB_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(wc.wr_id, 77u);
  EXPECT_EQ(wc.byte_len, 4096u);
  EXPECT_EQ(ntohl(wc.imm_data), 0xabcdu);
  EXPECT_EQ(bufB_[8], 0x5a);
  EXPECT_EQ(bufB_[8 + 4095], 0x5a);
  EXPECT_EQ(bufB_[8 + 4096], 0);
}

TEST_F(DataTest, WriteWithImmWaitsForAReceive) {
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE_WITH_IMM, bufA_.data(), 16, mrA_->lkey, addrB(),
                      mrB_->rkey, 1, IBV_SEND_SIGNALED, 9),
            0);
  EXPECT_TRUE(staysEmpty(cqA_));  // RNR: not complete until the responder has a receive
  ASSERT_EQ(postRecv(b_, nullptr, 0, 0, 2), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqB_, &wc));
  EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

TEST_F(DataTest, ReadFetchesRemoteMemory) {
  std::memset(bufB_.data(), 0x33, 1000);
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_READ, bufA_.data(), 1000, mrA_->lkey, addrB(), mrB_->rkey, 4),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(wc.byte_len, 1000u);
  EXPECT_EQ(bufA_[0], 0x33);
  EXPECT_EQ(bufA_[999], 0x33);
  EXPECT_EQ(bufA_[1000], 0);
}

TEST_F(DataTest, InlineDataNeedsNoMemoryRegion) {
  char local[32] = "inline payload";
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, local, sizeof(local), 0 /* no lkey */, addrB(),
                      mrB_->rkey, 3, IBV_SEND_INLINE | IBV_SEND_SIGNALED),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_STREQ(bufB_.data(), "inline payload");
}

TEST_F(DataTest, InlineBeyondTheQpLimitIsRejected) {
  char local[128] = {};
  EXPECT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, local, sizeof(local), 0, addrB(), mrB_->rkey, 3,
                      IBV_SEND_INLINE),
            EINVAL);
}

TEST_F(DataTest, UnsignaledWorkRequestsCompleteSilently) {
  for (int i = 0; i < 3; i++) {
    bufA_[i] = static_cast<char>(i + 1);
    ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, &bufA_[i], 1, mrA_->lkey, addrB() + i, mrB_->rkey,
                        100 + i, 0),
              0);
  }
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 0, mrA_->lkey, addrB(), mrB_->rkey, 200),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.wr_id, 200u);  // only the signalled one
  EXPECT_TRUE(staysEmpty(cqA_));
  EXPECT_EQ(bufB_[0], 1);
  EXPECT_EQ(bufB_[2], 3);
}

TEST_F(DataTest, CompletionsArriveInPostingOrder) {
  constexpr int kCount = 64;
  for (int i = 0; i < kCount; i++) {
    ibv_wr_opcode op = (i % 3 == 0) ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
    ASSERT_EQ(postWrite(a_, op, bufA_.data() + i * 512, 512, mrA_->lkey, addrB() + i * 512,
                        mrB_->rkey, i),
              0);
  }
  for (int i = 0; i < kCount; i++) {
    ibv_wc wc;
    ASSERT_TRUE(pollOne(cqA_, &wc)) << "completion " << i;
    EXPECT_EQ(wc.wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  }
}

TEST_F(DataTest, SendQueueDepthIsEnforced) {
  ibv_send_wr wrs[129] = {};
  for (int i = 0; i < 129; i++) {
    wrs[i].opcode = IBV_WR_RDMA_WRITE;
    wrs[i].wr.rdma.remote_addr = addrB();
    wrs[i].wr.rdma.rkey = mrB_->rkey;
    wrs[i].next = i < 128 ? &wrs[i + 1] : nullptr;
  }
  // One post holds the QP for its whole list, so no completion frees a
  // slot in between: the 129th WR finds the 128-deep queue full.
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(a_, wrs, &bad), ENOMEM);
  EXPECT_EQ(bad, &wrs[128]);
}

}  // namespace
}  // namespace softverbs::testing
