// SPDX-License-Identifier: Apache-2.0
// sdk-socket: connection setup and properties, both ends in this process.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>
#include <thread>

#include "harness.hpp"
#include "ncclnet/host/log_capture.hpp"
#include "ncclnet/socket_io.hpp"
#include "wire.hpp"

namespace ncclnet::socket::testing {
namespace {

using ncclnet::socket::ListenHandle;

TEST(Properties, LoopbackDeviceIsHonest) {
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  int ndev = 0;
  ASSERT_EQ(s.net().devices(&ndev), ncclSuccess);
  ASSERT_EQ(ndev, 1) << "NCCL_SOCKET_IFNAME=lo selects exactly one device";
  ncclNetProperties_v12_t props;
  ASSERT_EQ(s.net().getProperties(0, &props), ncclSuccess);
  EXPECT_STREQ(props.name, "lo");
  EXPECT_EQ(props.pciPath, nullptr) << "loopback has no PCI device";
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(props.maxRecvs, 8);
  EXPECT_EQ(props.speed, 10000) << "no sysfs speed: the documented fallback";
  EXPECT_EQ(props.netDeviceType, NCCL_NET_DEVICE_HOST);
  EXPECT_EQ(props.railId, NCCL_NET_ID_UNDEF);
  EXPECT_EQ(props.planeId, NCCL_NET_ID_UNDEF);
  EXPECT_GT(props.maxP2pBytes, 0u);
  EXPECT_LE(props.maxP2pBytes, NCCL_MAX_NET_SIZE_BYTES);
  EXPECT_EQ(props.vProps.ndevs, 1);
  EXPECT_NE(s.net().getProperties(1, &props), ncclSuccess);
}

// Sends one message of `size` on each pair and checks what arrived.
void exchange(Session& s, const std::vector<void*>& sends, const std::vector<void*>& recvs,
              size_t size) {
  size_t n = sends.size();
  std::vector<std::vector<uint8_t>> out(n), in(n);
  std::vector<void*> sreq(n), rreq(n);
  for (size_t i = 0; i < n; i++) {
    in[i].assign(size, 0);
    void* data = in[i].data();
    size_t cap = size;
    int tag = 1;
    void* mh = nullptr;
    ASSERT_EQ(s.net().irecv(recvs[i], 1, &data, &cap, &tag, &mh, nullptr, &rreq[i]), ncclSuccess);
  }
  for (size_t i = 0; i < n; i++) {
    out[i].resize(size);
    fillPattern(out[i].data(), size, 1000 + i);
    ASSERT_EQ(s.net().isend(sends[i], out[i].data(), size, 1, nullptr, nullptr, &sreq[i]),
              ncclSuccess);
  }
  std::vector<bool> seen(n, false);
  for (size_t i = 0; i < n; i++) {
    ASSERT_EQ(waitFor(s, sreq[i], nullptr, 20), ncclSuccess);
    int got = -1;
    ASSERT_EQ(waitFor(s, rreq[i], &got, 20), ncclSuccess);
    ASSERT_EQ(got, static_cast<int>(size));
  }
  // Which recvComm pairs with which sendComm is up to arrival order: every
  // message must arrive exactly once.
  for (size_t i = 0; i < n; i++) {
    bool matched = false;
    for (size_t j = 0; j < n && !matched; j++) {
      if (!seen[j] && checkPattern(in[i].data(), size, 1000 + j).empty()) seen[j] = matched = true;
    }
    EXPECT_TRUE(matched) << "recvComm " << i << " got no intact message";
  }
}

TEST(Connection, SeveralConnectsToOneListen) {
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = nullptr;
  ASSERT_EQ(listenOn(s, handle, &lc), ncclSuccess);
  constexpr int kPairs = 3;
  std::vector<void*> sends(kPairs), recvs(kPairs);
  for (int i = 0; i < kPairs; i++) {
    char copy[NCCL_NET_HANDLE_MAXSIZE];
    std::memcpy(copy, handle, sizeof(copy));  // NCCL hands each connect its own copy
    ASSERT_EQ(connectTo(s, copy, &sends[i]), ncclSuccess);
  }
  for (int i = 0; i < kPairs; i++) ASSERT_EQ(acceptFrom(s, lc, &recvs[i]), ncclSuccess);
  EXPECT_EQ(s.net().closeListen(lc), ncclSuccess);
  exchange(s, sends, recvs, 3 << 20);
  exchange(s, sends, recvs, 100);
  for (int i = 0; i < kPairs; i++) {
    EXPECT_EQ(s.net().closeSend(sends[i]), ncclSuccess);
    EXPECT_EQ(s.net().closeRecv(recvs[i]), ncclSuccess);
  }
}

// connect and accept polled alternately from one thread, as NCCL's GDR probe
// does: neither may wait for the other.
TEST(Connection, ConnectAndAcceptInterleaved) {
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = nullptr;
  ASSERT_EQ(listenOn(s, handle, &lc), ncclSuccess);
  void* sc = nullptr;
  void* rc = nullptr;
  auto start = Clock::now();
  while ((sc == nullptr || rc == nullptr) && Clock::now() - start < std::chrono::seconds(10)) {
    if (sc == nullptr) {
      ASSERT_EQ(s.net().connect(s.ctx(), 0, handle, &sc, nullptr), ncclSuccess);
    }
    if (rc == nullptr) {
      ASSERT_EQ(s.net().accept(lc, &rc, nullptr), ncclSuccess);
    }
  }
  ASSERT_NE(sc, nullptr);
  ASSERT_NE(rc, nullptr);
  exchange(s, {sc}, {rc}, 0);
  EXPECT_EQ(s.net().closeListen(lc), ncclSuccess);
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
  EXPECT_EQ(s.net().closeRecv(rc), ncclSuccess);
}

// A listen closed before anyone accepts (NCCL's shared comms do this): no
// leak, no hang, and the orphaned sendComm reports an error instead of
// waiting forever.
TEST(Connection, ListenClosedWithoutAccept) {
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* idle = nullptr;
  ASSERT_EQ(listenOn(s, handle, &idle), ncclSuccess);
  EXPECT_EQ(s.net().closeListen(idle), ncclSuccess);  // never connected to

  void* lc = nullptr;
  ASSERT_EQ(listenOn(s, handle, &lc), ncclSuccess);
  void* sc = nullptr;
  ASSERT_EQ(connectTo(s, handle, &sc), ncclSuccess);
  EXPECT_EQ(s.net().closeListen(lc), ncclSuccess);
  std::vector<uint8_t> data(1 << 20, 1);
  void* request = nullptr;
  ncclResult_t res = s.net().isend(sc, data.data(), data.size(), 1, nullptr, nullptr, &request);
  if (res == ncclSuccess && request != nullptr) res = waitFor(s, request, nullptr, 10);
  EXPECT_NE(res, ncclSuccess);
  EXPECT_NE(res, ncclTimeout);
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
}

sockaddr_storage addressOf(const char handle[NCCL_NET_HANDLE_MAXSIZE], socklen_t* len) {
  ListenHandle h;
  EXPECT_EQ(ncclnet::socket::decodeHandle(handle, &h), ncclnet::WireVerdict::kOk);
  *len = h.addrLen;
  return h.addr;
}

// Stray bytes and a stale cookie are refused by accept, which keeps serving
// the genuine connect.
TEST(Connection, StrayAndStaleConnectionsRefused) {
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = nullptr;
  ASSERT_EQ(listenOn(s, handle, &lc), ncclSuccess);

  socklen_t len = 0;
  sockaddr_storage addr = addressOf(handle, &len);
  int stray = ::socket(addr.ss_family, SOCK_STREAM, 0);
  ASSERT_GE(stray, 0);
  ASSERT_EQ(::connect(stray, reinterpret_cast<sockaddr*>(&addr), len), 0);
  const char garbage[64] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_EQ(::send(stray, garbage, sizeof(garbage), 0), static_cast<ssize_t>(sizeof(garbage)));

  char stale[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(stale, handle, sizeof(stale));
  ListenHandle h;
  ASSERT_EQ(ncclnet::socket::decodeHandle(stale, &h), ncclnet::WireVerdict::kOk);
  h.cookie ^= 0x1;  // what a handle from an earlier listen on a reused port looks like
  ncclnet::socket::encodeHandle(h, stale);
  void* staleComm = nullptr;
  ASSERT_EQ(connectTo(s, stale, &staleComm), ncclSuccess);  // TCP connects; accept refuses

  void* rc = nullptr;
  auto start = Clock::now();
  while (Clock::now() - start < std::chrono::milliseconds(300)) {
    ASSERT_EQ(s.net().accept(lc, &rc, nullptr), ncclSuccess);
    ASSERT_EQ(rc, nullptr) << "a refused connection became a comm";
  }
  char probe;
  EXPECT_LE(::recv(stray, &probe, 1, 0), 0) << "the stray socket was not closed";  // EOF or reset
  ::close(stray);

  void* sc = nullptr;
  ASSERT_EQ(connectTo(s, handle, &sc), ncclSuccess);
  ASSERT_EQ(acceptFrom(s, lc, &rc), ncclSuccess);
  exchange(s, {sc}, {rc}, 70000);

  // The stale sendComm learns that it was refused. A small send leaves
  // without waiting for the receiver (eagerly), and the kernel takes the
  // first one; the reset that answers it fails the next.
  std::vector<uint8_t> data(4096, 1);
  ncclResult_t res = ncclSuccess;
  for (int i = 0; i < 8 && res == ncclSuccess; i++) {
    void* request = nullptr;
    res = s.net().isend(staleComm, data.data(), data.size(), 1, nullptr, nullptr, &request);
    if (res == ncclSuccess && request != nullptr) res = waitFor(s, request, nullptr, 10);
    if (res == ncclSuccess) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(res, ncclSuccess);
  EXPECT_EQ(s.net().closeSend(staleComm), ncclSuccess);
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
  EXPECT_EQ(s.net().closeRecv(rc), ncclSuccess);
  EXPECT_EQ(s.net().closeListen(lc), ncclSuccess);
}

// 110 strays that send garbage: accept never fails, and their refusals
// pass the rate limit (5 lines per 10 s) instead of 110 lines.
TEST(Connection, StrayRefusalsAreRateLimited) {
  ncclnet::host::clearCapturedLines();
  Session s(0, ncclnet::host::captureLogger);
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = nullptr;
  ASSERT_EQ(listenOn(s, handle, &lc), ncclSuccess);
  socklen_t len = 0;
  sockaddr_storage addr = addressOf(handle, &len);
  const char garbage[64] = "GET / HTTP/1.0\r\n\r\n";
  for (int i = 0; i < 110; i++) {
    int stray = ::socket(addr.ss_family, SOCK_STREAM, 0);
    ASSERT_GE(stray, 0);
    ASSERT_EQ(::connect(stray, reinterpret_cast<sockaddr*>(&addr), len), 0);
    ASSERT_EQ(::send(stray, garbage, sizeof(garbage), 0), static_cast<ssize_t>(sizeof(garbage)));
    ::close(stray);
  }
  void* rc = nullptr;
  auto start = Clock::now();
  while (Clock::now() - start < std::chrono::milliseconds(300)) {
    ASSERT_EQ(s.net().accept(lc, &rc, nullptr), ncclSuccess);
    ASSERT_EQ(rc, nullptr);
  }
  int refused = ncclnet::host::countCaptured(NCCL_LOG_WARN, "refused a connection");
  EXPECT_GE(refused, 1);
  EXPECT_LE(refused, 5);
  EXPECT_EQ(s.net().closeListen(lc), ncclSuccess);
}

// Many comms driven from several threads at once, as NCCL's proxy threads
// of several GPUs do.
TEST(Threads, ManyCommsFromManyThreads) {
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      char handle[NCCL_NET_HANDLE_MAXSIZE];
      void* lc = nullptr;
      void* sc = nullptr;
      void* rc = nullptr;
      if (listenOn(s, handle, &lc) != ncclSuccess || connectTo(s, handle, &sc) != ncclSuccess ||
          acceptFrom(s, lc, &rc) != ncclSuccess) {
        failures++;
        return;
      }
      s.net().closeListen(lc);
      for (int round = 0; round < 20; round++) {
        size_t size = (round % 4 == 0) ? (1 << 20) + t : 100 + t + round;
        std::vector<uint8_t> out(size), in(size);
        fillPattern(out.data(), size, t * 100 + round);
        void* data = in.data();
        int tag = t;
        void* mh = nullptr;
        void* rreq = nullptr;
        void* sreq = nullptr;
        if (s.net().irecv(rc, 1, &data, &size, &tag, &mh, nullptr, &rreq) != ncclSuccess ||
            s.net().isend(sc, out.data(), size, t, nullptr, nullptr, &sreq) != ncclSuccess) {
          failures++;
          break;
        }
        if (waitFor(s, sreq, nullptr, 20) != ncclSuccess ||
            waitFor(s, rreq, nullptr, 20) != ncclSuccess ||
            !checkPattern(in.data(), size, t * 100 + round).empty()) {
          failures++;
          break;
        }
      }
      s.net().closeSend(sc);
      s.net().closeRecv(rc);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace ncclnet::socket::testing
