// SPDX-License-Identifier: Apache-2.0
// softverbs: two processes, each with its own device instance, connected
// by the GID and QP number they exchange over the test kit's channel.
#include <arpa/inet.h>

#include <cstring>
#include <vector>

#include "fixture.hpp"
#include "ncclnet/testing/child_process.hpp"

namespace softverbs::testing {
namespace {

struct Address {
  ibv_gid gid;
  uint32_t qpn;
  uint64_t addr;
  uint32_t rkey;
};

constexpr size_t kBytes = 1 << 20;

// The child: receives one WRITE_WITH_IMM of kBytes and checks it. Exit
// status 0 on success, a distinct code per failed step.
int childTarget(ncclnet::testing::Channel& parent) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n < 1) return 10;
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  if (ctx == nullptr) return 11;
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap = {4, 4, 1, 1, 0};
  ibv_qp* qp = ibv_create_qp(pd, &init);
  std::vector<char> buf(kBytes);
  ibv_mr* mr = ibv_reg_mr(pd, buf.data(), kBytes, kFullAccess);
  if (qp == nullptr || mr == nullptr) return 12;
  Address mine{{}, qp->qp_num, reinterpret_cast<uintptr_t>(buf.data()), mr->rkey};
  ibv_query_gid(ctx, 1, kRoceV2Ipv4GidIndex, &mine.gid);
  Address peer;
  if (!parent.sendValue(mine) || !parent.receiveValue(&peer)) return 13;
  if (toInit(qp) || toRtr(qp, peer.qpn, peer.gid) || toRts(qp)) return 14;
  if (postRecv(qp, nullptr, 0, 0, 1) != 0) return 15;
  if (!parent.signal()) return 16;
  ibv_wc wc;
  if (!pollOne(cq, &wc, 10) || wc.status != IBV_WC_SUCCESS) return 17;
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || ntohl(wc.imm_data) != 42) return 18;
  for (size_t i = 0; i < kBytes; i++) {
    if (buf[i] != static_cast<char>(i * 7)) return 19;
  }
  // Stay until the parent has its completion (the ACK leaves with us).
  if (!parent.waitSignal()) return 20;
  ibv_destroy_qp(qp);
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  return 0;
}

TEST(CrossProcessTest, WriteWithImmReachesAnotherProcess) {
  ncclnet::testing::ChildProcess child(childTarget);
  ASSERT_TRUE(child.started());
  ncclnet::testing::Channel& peerChannel = child.channel();

  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_GE(n, 1);
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  ASSERT_NE(ctx, nullptr);
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap = {4, 4, 1, 1, 0};
  ibv_qp* qp = ibv_create_qp(pd, &init);
  std::vector<char> buf(kBytes);
  for (size_t i = 0; i < kBytes; i++) buf[i] = static_cast<char>(i * 7);
  ibv_mr* mr = ibv_reg_mr(pd, buf.data(), kBytes, kFullAccess);
  ASSERT_NE(qp, nullptr);
  ASSERT_NE(mr, nullptr);

  Address mine{{}, qp->qp_num, 0, 0};
  ibv_query_gid(ctx, 1, kRoceV2Ipv4GidIndex, &mine.gid);
  Address peer;
  ASSERT_TRUE(peerChannel.receiveValue(&peer));
  ASSERT_TRUE(peerChannel.sendValue(mine));
  EXPECT_NE(std::memcmp(&peer.gid, &mine.gid, sizeof(ibv_gid)), 0) << "GIDs must be per process";
  ASSERT_EQ(toInit(qp), 0);
  ASSERT_EQ(toRtr(qp, peer.qpn, peer.gid), 0);
  ASSERT_EQ(toRts(qp), 0);
  ASSERT_TRUE(peerChannel.waitSignal());
  ASSERT_EQ(postWrite(qp, IBV_WR_RDMA_WRITE_WITH_IMM, buf.data(), kBytes, mr->lkey, peer.addr,
                      peer.rkey, 1, IBV_SEND_SIGNALED, htonl(42)),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cq, &wc, 10));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  ASSERT_TRUE(peerChannel.signal());

  ncclnet::testing::ExitStatus status = child.wait(10);
  EXPECT_TRUE(status.succeeded()) << "child: " << status.describe()
                                  << " (a code names the step that failed)";
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
  EXPECT_EQ(ibv_close_device(ctx), 0);
}

}  // namespace
}  // namespace softverbs::testing
