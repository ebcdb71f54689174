// SPDX-License-Identifier: Apache-2.0
// softverbs: the RC state machine, and posting in each state.
#include "fixture.hpp"

namespace softverbs::testing {
namespace {

class QpStateTest : public VerbsTest {
 protected:
  void SetUp() override {
    VerbsTest::SetUp();
    if (HasFatalFailure()) return;
    cq_ = makeCq();
    qp_ = makeQp(cq_);
    peer_ = makeQp(cq_);
    ASSERT_NE(qp_, nullptr);
    ASSERT_NE(peer_, nullptr);
  }
  int postOneSend() {
    char byte = 0;
    return postWrite(qp_, IBV_WR_SEND, &byte, 1, 0, 0, 0, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
  }
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  ibv_qp* peer_ = nullptr;
};

TEST_F(QpStateTest, StartsInReset) {
  EXPECT_EQ(stateOf(qp_), IBV_QPS_RESET);
}

TEST_F(QpStateTest, WalksResetInitRtrRts) {
  ASSERT_EQ(toInit(qp_), 0);
  EXPECT_EQ(stateOf(qp_), IBV_QPS_INIT);
  ASSERT_EQ(toRtr(qp_, peer_->qp_num, gid()), 0);
  EXPECT_EQ(stateOf(qp_), IBV_QPS_RTR);
  ASSERT_EQ(toRts(qp_), 0);
  EXPECT_EQ(stateOf(qp_), IBV_QPS_RTS);
}

TEST_F(QpStateTest, SkippingAStateFails) {
  EXPECT_EQ(toRtr(qp_, peer_->qp_num, gid()), EINVAL);
  EXPECT_EQ(toRts(qp_), EINVAL);
  EXPECT_EQ(stateOf(qp_), IBV_QPS_RESET);
}

TEST_F(QpStateTest, MissingRequiredAttributeFails) {
  ASSERT_EQ(toInit(qp_), 0);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  EXPECT_EQ(ibv_modify_qp(qp_, &attr, IBV_QP_STATE | IBV_QP_PATH_MTU), EINVAL);
  EXPECT_EQ(stateOf(qp_), IBV_QPS_INIT);
}

TEST_F(QpStateTest, RtrNeedsAGlobalRoute) {
  ASSERT_EQ(toInit(qp_), 0);
  ibv_gid bogus{};
  bogus.raw[0] = 0x20;  // not a softverbs GID
  EXPECT_EQ(toRtr(qp_, peer_->qp_num, bogus), EINVAL);
}

TEST_F(QpStateTest, PostSendBeforeRtsFails) {
  EXPECT_EQ(postOneSend(), EINVAL);
  ASSERT_EQ(toInit(qp_), 0);
  EXPECT_EQ(postOneSend(), EINVAL);
  ASSERT_EQ(toRtr(qp_, peer_->qp_num, gid()), 0);
  EXPECT_EQ(postOneSend(), EINVAL);
}

TEST_F(QpStateTest, PostRecvInResetFailsAndInInitWorks) {
  EXPECT_EQ(postRecv(qp_, nullptr, 0, 0, 1), EINVAL);
  ASSERT_EQ(toInit(qp_), 0);
  EXPECT_EQ(postRecv(qp_, nullptr, 0, 0, 1), 0);
}

TEST_F(QpStateTest, ErrorStateFlushesPostedReceives) {
  ASSERT_EQ(toInit(qp_), 0);
  ASSERT_EQ(postRecv(qp_, nullptr, 0, 0, 7), 0);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(qp_, &attr, IBV_QP_STATE), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cq_, &wc));
  EXPECT_EQ(wc.wr_id, 7u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(QpStateTest, ResetMakesTheQpReusable) {
  ASSERT_EQ(toInit(qp_), 0);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(ibv_modify_qp(qp_, &attr, IBV_QP_STATE), 0);
  EXPECT_EQ(stateOf(qp_), IBV_QPS_RESET);
  EXPECT_EQ(toInit(qp_), 0);
}

}  // namespace
}  // namespace softverbs::testing
