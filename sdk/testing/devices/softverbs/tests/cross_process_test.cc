// SPDX-License-Identifier: Apache-2.0
// softverbs: two processes, each with its own device instance, connected
// by the GID and QP number they exchange over the test kit's channel.
#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <thread>
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

// One process's end: its own device instance, a QP and a registered buffer.
// Whatever is still open goes with it.
struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<char> buf = std::vector<char>(kBytes);

  // False when any step failed (what exists is released all the same).
  bool open() {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (list == nullptr || n < 1) return false;
    ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    if (ctx == nullptr) return false;
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
    if (pd == nullptr || cq == nullptr) return false;
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap = {4, 4, 1, 1, 0};
    qp = ibv_create_qp(pd, &init);
    mr = ibv_reg_mr(pd, buf.data(), kBytes, kFullAccess);
    return qp != nullptr && mr != nullptr;
  }
  Address address() const {
    Address a{{}, qp->qp_num, reinterpret_cast<uintptr_t>(buf.data()), mr->rkey};
    ibv_query_gid(ctx, 1, kRoceV2Ipv4GidIndex, &a.gid);
    return a;
  }
  bool connect(const Address& peer) {
    return toInit(qp) == 0 && toRtr(qp, peer.qpn, peer.gid) == 0 && toRts(qp) == 0;
  }
  // Releases in verbs order; false when a release fails.
  bool close() {
    bool ok = true;
    if (qp != nullptr) ok &= ibv_destroy_qp(qp) == 0;
    if (mr != nullptr) ok &= ibv_dereg_mr(mr) == 0;
    if (cq != nullptr) ok &= ibv_destroy_cq(cq) == 0;
    if (pd != nullptr) ok &= ibv_dealloc_pd(pd) == 0;
    if (ctx != nullptr) ok &= ibv_close_device(ctx) == 0;
    qp = nullptr, mr = nullptr, cq = nullptr, pd = nullptr, ctx = nullptr;
    return ok;
  }
  ~Side() { close(); }
};

// The child: receives one WRITE_WITH_IMM of kBytes and checks it. Exit
// status 0 on success, a distinct code per failed step.
int childTarget(ncclnet::testing::Channel& parent) {
  Side side;
  if (!side.open()) return 12;
  Address peer;
  if (!parent.sendValue(side.address()) || !parent.receiveValue(&peer)) return 13;
  if (!side.connect(peer)) return 14;
  if (postRecv(side.qp, nullptr, 0, 0, 1) != 0) return 15;
  if (!parent.signal()) return 16;
  ibv_wc wc;
  if (!pollOne(side.cq, &wc, 10) || wc.status != IBV_WC_SUCCESS) return 17;
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || ntohl(wc.imm_data) != 42) return 18;
  for (size_t i = 0; i < kBytes; i++) {
    if (side.buf[i] != static_cast<char>(i * 7)) return 19;
  }
  // Stay until the parent has its completion (the ACK leaves with us).
  if (!parent.waitSignal()) return 20;
  return side.close() ? 0 : 21;
}

TEST(CrossProcessTest, WriteWithImmReachesAnotherProcess) {
  ncclnet::testing::ChildProcess child(childTarget);
  ASSERT_TRUE(child.started());
  ncclnet::testing::Channel& peerChannel = child.channel();

  Side side;
  ASSERT_TRUE(side.open());
  for (size_t i = 0; i < kBytes; i++) side.buf[i] = static_cast<char>(i * 7);
  Address mine = side.address();
  Address peer;
  ASSERT_TRUE(peerChannel.receiveValue(&peer));
  ASSERT_TRUE(peerChannel.sendValue(mine));
  EXPECT_NE(std::memcmp(&peer.gid, &mine.gid, sizeof(ibv_gid)), 0) << "GIDs must be per process";
  ASSERT_TRUE(side.connect(peer));
  ASSERT_TRUE(peerChannel.waitSignal());
  ASSERT_EQ(postWrite(side.qp, IBV_WR_RDMA_WRITE_WITH_IMM, side.buf.data(), kBytes, side.mr->lkey,
                      peer.addr, peer.rkey, 1, IBV_SEND_SIGNALED, htonl(42)),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(side.cq, &wc, 10));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  ASSERT_TRUE(peerChannel.signal());

  ncclnet::testing::ExitStatus status = child.wait(10);
  EXPECT_TRUE(status.succeeded()) << "child: " << status.describe()
                                  << " (a code names the step that failed)";
  EXPECT_TRUE(side.close());
}

// The child: a connected QP that takes one write, then dies with its device.
int childThatDies(ncclnet::testing::Channel& parent) {
  Side side;
  if (!side.open()) return 12;
  Address peer;
  if (!parent.sendValue(side.address()) || !parent.receiveValue(&peer)) return 13;
  if (!side.connect(peer)) return 14;
  if (!parent.signal()) return 16;
  if (!parent.waitSignal()) return 20;  // the parent has its first completion
  return 0;                             // exits without closing anything
}

// A real RC QP whose peer went away fails a later request once its retries
// run out (IBV_WC_RETRY_EXC_ERR), signalled or not. The link out to the peer
// is idle when the peer dies, so only the closed socket tells.
TEST(CrossProcessTest, WriteAfterThePeerDiedFails) {
  ncclnet::testing::ChildProcess child(childThatDies);
  ASSERT_TRUE(child.started());
  ncclnet::testing::Channel& peerChannel = child.channel();
  Side side;
  ASSERT_TRUE(side.open());
  Address peer;
  ASSERT_TRUE(peerChannel.receiveValue(&peer));
  ASSERT_TRUE(peerChannel.sendValue(side.address()));
  ASSERT_TRUE(side.connect(peer));
  ASSERT_TRUE(peerChannel.waitSignal());
  ibv_wc wc;
  ASSERT_EQ(postWrite(side.qp, IBV_WR_RDMA_WRITE, side.buf.data(), 64, side.mr->lkey, peer.addr,
                      peer.rkey, 1, IBV_SEND_SIGNALED, 0),
            0);
  ASSERT_TRUE(pollOne(side.cq, &wc, 10));
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  ASSERT_TRUE(peerChannel.signal());
  ASSERT_TRUE(child.wait(10).succeeded());
  // Idle while this device sees the peer's links close.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  // Zero bytes, as NCCL's IB posts for an empty isend: a request with no
  // payload is one packet, which the kernel takes on a closed connection.
  ASSERT_EQ(postWrite(side.qp, IBV_WR_RDMA_WRITE_WITH_IMM, side.buf.data(), 0, side.mr->lkey,
                      peer.addr, peer.rkey, 2, 0, 0),
            0);
  ASSERT_TRUE(pollOne(side.cq, &wc, 10)) << "a write to a dead peer never completed";
  EXPECT_EQ(wc.wr_id, 2u);
  EXPECT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(wc.status);
}

}  // namespace
}  // namespace softverbs::testing
