// SPDX-License-Identifier: Apache-2.0
// softverbs: protection and length violations complete in error and move
// the QP to the error state, where everything outstanding is flushed.
#include <cstring>

#include "fixture.hpp"

namespace softverbs::testing {
namespace {

using ErrorTest = PairTest;

TEST_F(ErrorTest, WriteOutsideTheMrIsRemoteAccessError) {
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 64, mrA_->lkey,
                      addrB() + kBytes - 32 /* runs 32 bytes past the end */, mrB_->rkey, 1),
            0);
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 8, mrA_->lkey, addrB(), mrB_->rkey, 2,
                      0 /* unsignalled: flushed anyway */),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.wr_id, 1u);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.wr_id, 2u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(stateOf(a_), IBV_QPS_ERR);
  EXPECT_EQ(stateOf(b_), IBV_QPS_ERR);  // class C: the responder errs too
  EXPECT_EQ(bufB_[kBytes - 32], 0);     // nothing landed
}

TEST_F(ErrorTest, PostingInTheErrorStateFlushes) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(a_, &attr, IBV_QP_STATE), 0);
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 8, mrA_->lkey, addrB(), mrB_->rkey, 9, 0), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.wr_id, 9u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(ErrorTest, UnknownRkeyIsRemoteAccessError) {
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 8, mrA_->lkey, addrB(), mrB_->rkey ^ 0x100, 1),
      0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(ErrorTest, WriteToAnMrWithoutRemoteWriteIsRemoteAccessError) {
  ibv_mr* readOnly = reg(bufB_.data(), 128, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  ASSERT_NE(readOnly, nullptr);
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 8, mrA_->lkey, addrB(), readOnly->rkey, 1), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(ErrorTest, ReadFromAnMrWithoutRemoteReadIsRemoteAccessError) {
  ibv_mr* writeOnly = reg(bufB_.data(), 128, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_NE(writeOnly, nullptr);
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_READ, bufA_.data(), 8, mrA_->lkey, addrB(), writeOnly->rkey, 1), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(ErrorTest, BadLkeyIsLocalProtectionError) {
  ASSERT_EQ(
      postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 8, mrA_->lkey + 0x100, addrB(), mrB_->rkey, 5),
      0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.wr_id, 5u);
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(stateOf(a_), IBV_QPS_ERR);
}

TEST_F(ErrorTest, SendLargerThanTheReceiveIsALengthError) {
  ASSERT_EQ(postRecv(b_, bufB_.data(), 16, mrB_->lkey, 1), 0);
  ASSERT_EQ(postWrite(a_, IBV_WR_SEND, bufA_.data(), 32, mrA_->lkey, 0, 0, 2), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqB_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
}

TEST_F(ErrorTest, DestroyedPeerMeansRetriesExhausted) {
  // Take B out of the picture: its QP number no longer exists.
  ASSERT_EQ(ibv_destroy_qp(b_), 0);
  qps_.erase(std::find(qps_.begin(), qps_.end(), b_));
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 8, mrA_->lkey, addrB(), mrB_->rkey, 1),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
}

}  // namespace
}  // namespace softverbs::testing
