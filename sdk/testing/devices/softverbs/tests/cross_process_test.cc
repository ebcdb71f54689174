// SPDX-License-Identifier: Apache-2.0
// softverbs: two processes, each with its own device instance, connected
// by the GID and QP number they exchange over pipes.
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "fixture.hpp"

namespace softverbs::testing {
namespace {

struct Address {
  ibv_gid gid;
  uint32_t qpn;
  uint64_t addr;
  uint32_t rkey;
};

bool readFully(int fd, void* data, size_t size, int timeoutMs = 10000) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, timeoutMs) != 1) return false;
    ssize_t n = ::read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool writeFully(int fd, const void* data, size_t size) {
  return ::write(fd, data, size) == static_cast<ssize_t>(size);
}

constexpr size_t kBytes = 1 << 20;

// The child: receives one WRITE_WITH_IMM of kBytes and checks it. Exit
// status 0 on success, a distinct code per failed step.
int childTarget(int in, int out) {
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
  if (!writeFully(out, &mine, sizeof(mine)) || !readFully(in, &peer, sizeof(peer))) return 13;
  if (toInit(qp) || toRtr(qp, peer.qpn, peer.gid) || toRts(qp)) return 14;
  if (postRecv(qp, nullptr, 0, 0, 1) != 0) return 15;
  char ready = 1;
  if (!writeFully(out, &ready, 1)) return 16;
  ibv_wc wc;
  if (!pollOne(cq, &wc, 10) || wc.status != IBV_WC_SUCCESS) return 17;
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || ntohl(wc.imm_data) != 42) return 18;
  for (size_t i = 0; i < kBytes; i++) {
    if (buf[i] != static_cast<char>(i * 7)) return 19;
  }
  // Stay until the parent has its completion (the ACK leaves with us).
  if (!readFully(in, &ready, 1)) return 20;
  ibv_destroy_qp(qp);
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  return 0;
}

TEST(CrossProcessTest, WriteWithImmReachesAnotherProcess) {
  int toChild[2];
  int fromChild[2];
  ASSERT_EQ(::pipe(toChild), 0);
  ASSERT_EQ(::pipe(fromChild), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(toChild[1]);
    ::close(fromChild[0]);
    ::_exit(childTarget(toChild[0], fromChild[1]));
  }
  ::close(toChild[0]);
  ::close(fromChild[1]);
  int in = fromChild[0];
  int out = toChild[1];

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
  ASSERT_TRUE(readFully(in, &peer, sizeof(peer)));
  ASSERT_TRUE(writeFully(out, &mine, sizeof(mine)));
  EXPECT_NE(std::memcmp(&peer.gid, &mine.gid, sizeof(ibv_gid)), 0) << "GIDs must be per process";
  ASSERT_EQ(toInit(qp), 0);
  ASSERT_EQ(toRtr(qp, peer.qpn, peer.gid), 0);
  ASSERT_EQ(toRts(qp), 0);
  char ready = 0;
  ASSERT_TRUE(readFully(in, &ready, 1));
  ASSERT_EQ(postWrite(qp, IBV_WR_RDMA_WRITE_WITH_IMM, buf.data(), kBytes, mr->lkey, peer.addr,
                      peer.rkey, 1, IBV_SEND_SIGNALED, htonl(42)),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cq, &wc, 10));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  ASSERT_TRUE(writeFully(out, &ready, 1));

  int status = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL() << "child stuck";
    }
    ::usleep(10000);
  }
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child failed at step " << WEXITSTATUS(status);
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
  EXPECT_EQ(ibv_close_device(ctx), 0);
  ::close(in);
  ::close(out);
}

}  // namespace
}  // namespace softverbs::testing
