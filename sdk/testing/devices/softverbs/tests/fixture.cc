// SPDX-License-Identifier: Apache-2.0
// softverbs tests: fixture and helpers.
#include "fixture.hpp"

#include <chrono>
#include <cstring>
#include <thread>

namespace softverbs::testing {

bool pollOne(ibv_cq* cq, ibv_wc* wc, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int n = ibv_poll_cq(cq, 1, wc);
    if (n == 1) return true;
    if (n < 0) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return false;
}

bool staysEmpty(ibv_cq* cq, double seconds) {
  ibv_wc wc;
  return !pollOne(cq, &wc, seconds);
}

int toInit(ibv_qp* qp, int access) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = access;
  return ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int toRtr(ibv_qp* qp, uint32_t remoteQpn, const ibv_gid& remoteGid) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_4096;
  attr.dest_qp_num = remoteQpn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.grh.dgid = remoteGid;
  attr.ah_attr.grh.sgid_index = kRoceV2Ipv4GidIndex;
  attr.ah_attr.grh.hop_limit = 255;
  attr.ah_attr.port_num = 1;
  return ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                           IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int toRts(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.max_rd_atomic = 1;
  return ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

ibv_qp_state stateOf(ibv_qp* qp) {
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) != 0) return IBV_QPS_UNKNOWN;
  return attr.qp_state;
}

int postWrite(ibv_qp* qp, ibv_wr_opcode opcode, const void* local, uint32_t length, uint32_t lkey,
              uint64_t remoteAddr, uint32_t rkey, uint64_t wrId, unsigned flags, uint32_t imm) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(local), length, lkey};
  ibv_send_wr wr{};
  wr.wr_id = wrId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = opcode;
  wr.send_flags = flags;
  wr.imm_data = imm;
  wr.wr.rdma.remote_addr = remoteAddr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &wr, &bad);
}

int postRecv(ibv_qp* qp, void* buffer, uint32_t length, uint32_t lkey, uint64_t wrId) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(buffer), length, lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wrId;
  wr.sg_list = &sge;
  wr.num_sge = buffer ? 1 : 0;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp, &wr, &bad);
}

void VerbsTest::SetUp() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  ASSERT_GE(n, 1);
  ctx_ = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  ASSERT_NE(ctx_, nullptr) << std::strerror(errno);
  pd_ = ibv_alloc_pd(ctx_);
  ASSERT_NE(pd_, nullptr);
}

void VerbsTest::TearDown() {
  for (ibv_qp* qp : qps_) {
    EXPECT_EQ(ibv_destroy_qp(qp), 0);
  }
  for (ibv_mr* mr : mrs_) {
    EXPECT_EQ(ibv_dereg_mr(mr), 0);
  }
  for (ibv_cq* cq : cqs_) {
    EXPECT_EQ(ibv_destroy_cq(cq), 0);
  }
  if (pd_ != nullptr) {
    EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
  }
  if (ctx_ != nullptr) {
    EXPECT_EQ(ibv_close_device(ctx_), 0);
  }
}

ibv_cq* VerbsTest::makeCq() {
  ibv_cq* cq = ibv_create_cq(ctx_, 256, nullptr, nullptr, 0);
  if (cq != nullptr) cqs_.push_back(cq);
  return cq;
}

ibv_qp* VerbsTest::makeQp(ibv_cq* cq, bool signalAll, uint32_t maxInline) {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = signalAll ? 1 : 0;
  init.cap.max_send_wr = 128;
  init.cap.max_recv_wr = 128;
  init.cap.max_send_sge = 2;
  init.cap.max_recv_sge = 2;
  init.cap.max_inline_data = maxInline;
  ibv_qp* qp = ibv_create_qp(pd_, &init);
  if (qp != nullptr) qps_.push_back(qp);
  return qp;
}

ibv_mr* VerbsTest::reg(void* addr, size_t length, int access) {
  ibv_mr* mr = ibv_reg_mr(pd_, addr, length, access);
  if (mr != nullptr) mrs_.push_back(mr);
  return mr;
}

ibv_gid VerbsTest::gid(int index) {
  ibv_gid g{};
  EXPECT_EQ(ibv_query_gid(ctx_, 1, index, &g), 0);
  return g;
}

void VerbsTest::connectPair(ibv_qp* a, ibv_qp* b) {
  ibv_gid g = gid();
  ASSERT_EQ(toInit(a), 0);
  ASSERT_EQ(toInit(b), 0);
  ASSERT_EQ(toRtr(a, b->qp_num, g), 0);
  ASSERT_EQ(toRtr(b, a->qp_num, g), 0);
  ASSERT_EQ(toRts(a), 0);
  ASSERT_EQ(toRts(b), 0);
}

void PairTest::SetUp() {
  VerbsTest::SetUp();
  if (HasFatalFailure()) return;
  cqA_ = makeCq();
  cqB_ = makeCq();
  ASSERT_NE(cqA_, nullptr);
  ASSERT_NE(cqB_, nullptr);
  a_ = makeQp(cqA_);
  b_ = makeQp(cqB_);
  ASSERT_NE(a_, nullptr);
  ASSERT_NE(b_, nullptr);
  connectPair(a_, b_);
  mrA_ = reg(bufA_.data(), kBytes);
  mrB_ = reg(bufB_.data(), kBytes);
  ASSERT_NE(mrA_, nullptr);
  ASSERT_NE(mrB_, nullptr);
}

}  // namespace softverbs::testing
