// SPDX-License-Identifier: Apache-2.0
// sdk-ofi end to end: the built plugin, loaded through the SDK's Loader at
// ABI v8, v11 and v12, over FI_PROVIDER="tcp;ofi_rxm" on loopback (CTest
// sets the environment). Transfers run between two processes with the
// handle passed over a pipe; connection-pattern tests run in one process.
#include <gtest/gtest.h>

#include <unistd.h>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "comm.hpp"
#include "peer.hpp"

namespace ncclnet::ofi::testing {
namespace {

constexpr int kWaitMs = 20000;

class SdkOfi : public ::testing::TestWithParam<int> {
 protected:
  int version() const { return GetParam(); }
};

TEST_P(SdkOfi, ReportsOneHonestDevicePerNic) {
  int version = this->version();
  auto role = [version](Peer& peer, Link&) -> std::string {
    int ndev = 0;
    ROLE_OK(peer.net().devices(&ndev));
    ROLE_CHECK(ndev == 1, "FI_TCP_IFACE=lo should leave exactly one NIC, got %d", ndev);
    ncclNetProperties_v12_t p;
    ROLE_OK(peer.net().getProperties(0, &p));
    const char* provider = std::getenv("FI_PROVIDER");
    if (provider != nullptr && std::strncmp(provider, "tcp", 3) == 0) {
      ROLE_CHECK(std::strcmp(p.name, "lo") == 0, "name %s", p.name);
    }
    ROLE_CHECK(p.pciPath == nullptr, "loopback has no PCI device, got %s", p.pciPath);
    ROLE_CHECK(p.ptrSupport == NCCL_PTR_HOST, "ptrSupport %d: 1.17 offers no FI_HMEM",
               p.ptrSupport);
    ROLE_CHECK(p.speed > 0, "speed %d", p.speed);
    ROLE_CHECK(p.maxRecvs == 8, "maxRecvs %d", p.maxRecvs);
    ROLE_CHECK(p.regIsGlobal == (version >= 8 ? 1 : 0), "regIsGlobal %d", p.regIsGlobal);
    ROLE_CHECK(p.netDeviceType == NCCL_NET_DEVICE_HOST, "device type %d", p.netDeviceType);
    ROLE_CHECK(p.maxComms > 1000, "maxComms %d", p.maxComms);
    ncclNetProperties_v12_t again;
    ROLE_OK(peer.net().getProperties(0, &again));
    ROLE_CHECK(again.guid == p.guid, "guid must be stable");
    ROLE_CHECK(peer.net().getProperties(1, &again) == ncclInvalidArgument, "device 1 exists?");
    return "";
  };
  EXPECT_EQ(runRoles(version, nullptr, role), "");
}

// regMrDmaBuf is always exported; on a NIC whose ptrSupport lacks
// NCCL_PTR_DMABUF (every NIC with libfabric < 1.20, and tcp, which has no
// FI_HMEM) it fails with one log line that says why.
TEST_P(SdkOfi, RegMrDmaBufIsRefusedWhereDmaBufIsNotAdvertised) {
  auto role = [](Peer& peer, Link&) -> std::string {
    ROLE_CHECK(peer.net().provides(ncclnet::host::Optional::RegMrDmaBuf),
               "regMrDmaBuf should be exported");
    ncclNetProperties_v12_t p;
    ROLE_OK(peer.net().getProperties(0, &p));
    if (p.ptrSupport & NCCL_PTR_DMABUF) return "";  // a provider with DMA-BUF: nothing to refuse
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    void* sendComm = nullptr;
    void* recvComm = nullptr;
    ROLE_TRY(peer.connectPair(handle, listenComm, &sendComm, &recvComm));
    std::vector<char> buffer(4096);
    void* mhandle = nullptr;
    int before = countLogged("regMrDmaBuf");
    ncclResult_t res = peer.net().regMrDmaBuf(recvComm, buffer.data(), buffer.size(), NCCL_PTR_CUDA,
                                              0, 0, &mhandle);
    ROLE_CHECK(res == ncclInternalError, "regMrDmaBuf returned %d, expected ncclInternalError",
               static_cast<int>(res));
    ROLE_CHECK(mhandle == nullptr, "no registration on failure");
    ROLE_CHECK(countLogged("regMrDmaBuf") == before + 1, "one log line, got %d",
               countLogged("regMrDmaBuf") - before);
    ROLE_CHECK(countLogged("DMA-BUF is not available: ") == 1, "the line says why");
    ROLE_OK(peer.net().closeListen(listenComm));
    ROLE_OK(peer.net().closeSend(sendComm));
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), nullptr, role), "");
}

TEST_P(SdkOfi, ConnectIsRetriedWithTheSameHandleBuffer) {
  auto role = [](Peer& peer, Link&) -> std::string {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    char original[NCCL_NET_HANDLE_MAXSIZE];
    std::memcpy(original, handle, sizeof(handle));
    void* sendComm = nullptr;
    void* recvComm = nullptr;
    ROLE_TRY(peer.connectPair(handle, listenComm, &sendComm, &recvComm));
    ROLE_CHECK(std::memcmp(original, handle, sizeof(handle)) == 0,
               "a finished connect leaves the handle as listen wrote it");
    // The same buffer connects again, to the same listen.
    void* second = nullptr;
    void* secondRecv = nullptr;
    ROLE_TRY(peer.connectPair(handle, listenComm, &second, &secondRecv));
    ROLE_CHECK(second != sendComm && secondRecv != recvComm, "a new connection each time");
    ROLE_OK(peer.net().closeListen(listenComm));
    for (void* c : {sendComm, second}) ROLE_OK(peer.net().closeSend(c));
    for (void* c : {recvComm, secondRecv}) ROLE_OK(peer.net().closeRecv(c));
    return "";
  };
  EXPECT_EQ(runRoles(version(), nullptr, role), "");
}

TEST_P(SdkOfi, SeveralConnectsToOneListenStayApart) {
  auto role = [](Peer& peer, Link&) -> std::string {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    constexpr int kConns = 3;
    char copies[kConns][NCCL_NET_HANDLE_MAXSIZE];
    void* send[kConns] = {};
    void* recv[kConns] = {};
    for (auto& copy : copies) std::memcpy(copy, handle, sizeof(handle));
    // Interleaved: every connect is started before any accept.
    for (int round = 0; round < 20000; round++) {
      bool all = true;
      for (int i = 0; i < kConns; i++) {
        if (send[i] == nullptr)
          ROLE_OK(peer.net().connect(peer.ctx(), 0, copies[i], &send[i], nullptr));
        all = all && send[i] != nullptr;
      }
      if (all) break;
    }
    for (int i = 0; i < kConns; i++) ROLE_TRY(peer.accept(listenComm, &recv[i]));
    for (int i = 0; i < kConns; i++) ROLE_CHECK(send[i] != nullptr, "connect %d pending", i);
    ROLE_OK(peer.net().closeListen(listenComm));
    // Connection i sends the value i; each receiver gets exactly one value.
    int out[kConns], in[kConns];
    std::vector<void*> requests;
    void* mh[2 * kConns];
    for (int i = 0; i < kConns; i++) {
      out[i] = 100 + i;
      in[i] = -1;
      ROLE_OK(peer.net().regMr(send[i], &out[i], sizeof(int), NCCL_PTR_HOST, &mh[i]));
      ROLE_OK(peer.net().regMr(recv[i], &in[i], sizeof(int), NCCL_PTR_HOST, &mh[kConns + i]));
      void* data = &in[i];
      size_t size = sizeof(int);
      int tag = 5;
      void* r = nullptr;
      ROLE_OK(peer.net().irecv(recv[i], 1, &data, &size, &tag, &mh[kConns + i], nullptr, &r));
      ROLE_CHECK(r != nullptr, "irecv refused");
      requests.push_back(r);
    }
    for (int i = 0; i < kConns; i++) {
      void* r = nullptr;
      ROLE_OK(peer.net().isend(send[i], &out[i], sizeof(int), 5, mh[i], nullptr, &r));
      ROLE_CHECK(r != nullptr, "isend refused");
      requests.push_back(r);
    }
    ROLE_TRY(peer.waitAll(requests, nullptr));
    int seen = 0;
    for (int i = 0; i < kConns; i++) {
      ROLE_CHECK(in[i] >= 100 && in[i] < 100 + kConns, "receiver %d got %d", i, in[i]);
      ROLE_CHECK(!(seen & (1 << (in[i] - 100))), "value %d arrived twice", in[i]);
      seen |= 1 << (in[i] - 100);
    }
    for (int i = 0; i < kConns; i++) {
      ROLE_OK(peer.net().deregMr(send[i], mh[i]));
      ROLE_OK(peer.net().deregMr(recv[i], mh[kConns + i]));
      ROLE_OK(peer.net().closeSend(send[i]));
      ROLE_OK(peer.net().closeRecv(recv[i]));
    }
    return "";
  };
  EXPECT_EQ(runRoles(version(), nullptr, role), "");
}

// NCCLNET_OFI_ENDPOINTS=2: listens take the device's endpoints in turn
// (the handle names the endpoint's address), so do connects; registrations
// are then per comm (regIsGlobal 0), and data crosses every pair of comms.
TEST_P(SdkOfi, EndpointsKnobSpreadsCommsOverEndpoints) {
  auto role = [](Peer& peer, Link&) -> std::string {
    ncclNetProperties_v12_t p;
    ROLE_OK(peer.net().getProperties(0, &p));
    ROLE_CHECK(p.regIsGlobal == 0, "regIsGlobal %d with 2 endpoints", p.regIsGlobal);
    constexpr int kPairs = 4;
    char handles[kPairs][NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listens[kPairs] = {};
    for (int i = 0; i < kPairs; i++) {
      ROLE_OK(peer.net().listen(peer.ctx(), 0, handles[i], &listens[i]));
    }
    auto address = [&](int i) {
      Handle h;
      std::memcpy(&h, handles[i], sizeof(h));
      return std::string(reinterpret_cast<const char*>(h.address), h.addressLength);
    };
    ROLE_CHECK(address(0) != address(1), "listens 0 and 1 share an endpoint");
    ROLE_CHECK(address(0) == address(2) && address(1) == address(3),
               "listens do not take the 2 endpoints in turn");
    void* send[kPairs] = {};
    void* recv[kPairs] = {};
    for (int i = 0; i < kPairs; i++) {
      ROLE_TRY(peer.connectPair(handles[i], listens[i], &send[i], &recv[i]));
      ROLE_OK(peer.net().closeListen(listens[i]));
    }
    int out[kPairs], in[kPairs];
    void* mh[2 * kPairs];
    std::vector<void*> requests;
    for (int i = 0; i < kPairs; i++) {
      out[i] = 200 + i;
      in[i] = -1;
      ROLE_OK(peer.net().regMr(send[i], &out[i], sizeof(int), NCCL_PTR_HOST, &mh[i]));
      ROLE_OK(peer.net().regMr(recv[i], &in[i], sizeof(int), NCCL_PTR_HOST, &mh[kPairs + i]));
      void* data = &in[i];
      size_t size = sizeof(int);
      int tag = 7;
      void* r = nullptr;
      ROLE_TRY(peer.irecv(recv[i], 1, &data, &size, &tag, &mh[kPairs + i], &r));
      requests.push_back(r);
      ROLE_TRY(peer.isend(send[i], &out[i], sizeof(int), 7, mh[i], &r));
      requests.push_back(r);
    }
    ROLE_TRY(peer.waitAll(requests, nullptr));
    for (int i = 0; i < kPairs; i++) {
      ROLE_CHECK(in[i] == 200 + i, "pair %d carried %d", i, in[i]);
      ROLE_OK(peer.net().deregMr(send[i], mh[i]));
      ROLE_OK(peer.net().deregMr(recv[i], mh[kPairs + i]));
      ROLE_OK(peer.net().closeSend(send[i]));
      ROLE_OK(peer.net().closeRecv(recv[i]));
    }
    return "";
  };
  ::setenv("NCCLNET_OFI_ENDPOINTS", "2", 1);
  std::string result = runRoles(version(), nullptr, role);
  ::unsetenv("NCCLNET_OFI_ENDPOINTS");
  EXPECT_EQ(result, "");
}

TEST_P(SdkOfi, ListensClosedWithoutAcceptAreHarmless) {
  auto role = [](Peer& peer, Link&) -> std::string {
    char unused[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* idle = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, unused, &idle));
    ROLE_OK(peer.net().closeListen(idle));  // never connected to
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    void* sendComm = nullptr;
    ROLE_TRY(peer.connect(handle, &sendComm));    // completes without the peer's accept
    ROLE_OK(peer.net().closeListen(listenComm));  // connected to, never accepted
    ROLE_OK(peer.net().closeSend(sendComm));
    // The endpoint still works afterwards.
    void* again = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &again));
    void* s = nullptr;
    void* r = nullptr;
    ROLE_TRY(peer.connectPair(handle, again, &s, &r));
    ROLE_OK(peer.net().closeListen(again));
    ROLE_OK(peer.net().closeSend(s));
    ROLE_OK(peer.net().closeRecv(r));
    return "";
  };
  EXPECT_EQ(runRoles(version(), nullptr, role), "");
}

// 0 B .. 16 MiB, crossing rxm's eager, segmented and rendezvous paths; every
// receive buffer is larger than its message, and guard bytes behind each
// message must stay untouched.
const std::vector<size_t> kSizes = {0, 1, 7, 64, 4095, 16384, 65536 + 3, 1 << 20, 16 << 20};
constexpr size_t kSlack = 64;

TEST_P(SdkOfi, TransfersEveryByteFromZeroToSixteenMiB) {
  auto receiver = [](Peer& peer, Link& link) -> std::string {
    void* recvComm = nullptr;
    ROLE_TRY(listenAndAccept(peer, link, &recvComm));
    std::vector<std::vector<unsigned char>> buffers;
    std::vector<void*> mhandles, requests;
    for (size_t i = 0; i < kSizes.size(); i++) {
      buffers.emplace_back(kSizes[i] + kSlack, 0xee);
      void* mh = nullptr;
      ROLE_OK(peer.net().regMr(recvComm, buffers[i].data(), buffers[i].size(), NCCL_PTR_HOST, &mh));
      mhandles.push_back(mh);
      void* data = buffers[i].data();
      size_t size = buffers[i].size();
      int tag = 1;
      void* r = nullptr;
      ROLE_TRY(peer.irecv(recvComm, 1, &data, &size, &tag, &mh, &r));
      requests.push_back(r);
    }
    std::vector<std::vector<int>> sizes;
    ROLE_TRY(peer.waitAll(requests, &sizes));
    for (size_t i = 0; i < kSizes.size(); i++) {
      ROLE_CHECK(sizes[i][0] == static_cast<int>(kSizes[i]), "message %zu: size %d, sent %zu", i,
                 sizes[i][0], kSizes[i]);
      ROLE_TRY(checkPattern(buffers[i].data(), kSizes[i], i));
      for (size_t g = kSizes[i]; g < buffers[i].size(); g++) {
        ROLE_CHECK(buffers[i][g] == 0xee, "message %zu wrote past its end at %zu", i, g);
      }
      ROLE_OK(peer.net().deregMr(recvComm, mhandles[i]));
    }
    ROLE_CHECK(link.signal(), "pipe");
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  auto sender = [](Peer& peer, Link& link) -> std::string {
    void* sendComm = nullptr;
    ROLE_TRY(receiveHandleAndConnect(peer, link, &sendComm));
    std::vector<std::vector<unsigned char>> buffers;
    std::vector<void*> mhandles, requests;
    for (size_t i = 0; i < kSizes.size(); i++) {
      buffers.emplace_back(kSizes[i] + 1);
      fillPattern(buffers[i].data(), kSizes[i], i);
      void* mh = nullptr;
      ROLE_OK(peer.net().regMr(sendComm, buffers[i].data(), buffers[i].size(), NCCL_PTR_HOST, &mh));
      mhandles.push_back(mh);
      void* r = nullptr;
      ROLE_TRY(peer.isend(sendComm, buffers[i].data(), kSizes[i], 1, mh, &r));
      requests.push_back(r);
    }
    std::vector<std::vector<int>> sizes;
    ROLE_TRY(peer.waitAll(requests, &sizes));
    for (size_t i = 0; i < kSizes.size(); i++) {
      ROLE_CHECK(sizes[i][0] == static_cast<int>(kSizes[i]), "send %zu reported %d", i,
                 sizes[i][0]);
      ROLE_OK(peer.net().deregMr(sendComm, mhandles[i]));
    }
    ROLE_CHECK(link.waitSignal(), "receiver never finished");
    ROLE_OK(peer.net().closeSend(sendComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), receiver, sender), "");
}

// Two grouped receives of 8 buffers, tags 1000..1007. The sender sends group
// 0 in reverse tag order and group 1 forwards, interleaving the groups: each
// message must land in the oldest group with a free buffer of its tag.
TEST_P(SdkOfi, GroupedReceivesRouteByTagInPostingOrder) {
  constexpr int kN = 8;
  constexpr int kGroups = 2;
  auto sizeOf = [](int group, int i) { return static_cast<size_t>(100 * (i + 1) + 7 * group); };
  auto seedOf = [](int group, int i) { return static_cast<uint64_t>(group * 100 + i); };
  auto receiver = [=](Peer& peer, Link& link) -> std::string {
    void* recvComm = nullptr;
    ROLE_TRY(listenAndAccept(peer, link, &recvComm));
    std::vector<unsigned char> arena(kGroups * kN * 4096, 0);
    void* mh = nullptr;
    ROLE_OK(peer.net().regMr(recvComm, arena.data(), arena.size(), NCCL_PTR_HOST, &mh));
    std::vector<void*> requests;
    for (int g = 0; g < kGroups; g++) {
      void* data[kN];
      size_t sizes[kN];
      int tags[kN];
      void* mhs[kN];
      for (int i = 0; i < kN; i++) {
        data[i] = arena.data() + (g * kN + i) * 4096;
        sizes[i] = 4096;
        tags[i] = 1000 + i;
        mhs[i] = mh;
      }
      void* r = nullptr;
      ROLE_TRY(peer.irecv(recvComm, kN, data, sizes, tags, mhs, &r));
      requests.push_back(r);
    }
    ROLE_CHECK(link.signal(), "pipe");  // receives are posted
    std::vector<std::vector<int>> sizes;
    ROLE_TRY(peer.waitAll(requests, &sizes));
    for (int g = 0; g < kGroups; g++) {
      for (int i = 0; i < kN; i++) {
        ROLE_CHECK(sizes[g][i] == static_cast<int>(sizeOf(g, i)), "group %d buffer %d: size %d", g,
                   i, sizes[g][i]);
        ROLE_TRY(checkPattern(arena.data() + (g * kN + i) * 4096, sizeOf(g, i), seedOf(g, i)));
      }
    }
    ROLE_OK(peer.net().deregMr(recvComm, mh));
    ROLE_CHECK(link.signal(), "pipe");
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  auto sender = [=](Peer& peer, Link& link) -> std::string {
    void* sendComm = nullptr;
    ROLE_TRY(receiveHandleAndConnect(peer, link, &sendComm));
    std::vector<unsigned char> arena(kGroups * kN * 4096);
    for (int g = 0; g < kGroups; g++) {
      for (int i = 0; i < kN; i++)
        fillPattern(arena.data() + (g * kN + i) * 4096, sizeOf(g, i), seedOf(g, i));
    }
    void* mh = nullptr;
    ROLE_OK(peer.net().regMr(sendComm, arena.data(), arena.size(), NCCL_PTR_HOST, &mh));
    // Half the messages go before the receiver has posted anything.
    std::vector<std::pair<int, int>> order;
    for (int k = 0; k < kN; k++) {
      order.push_back({0, kN - 1 - k});
      order.push_back({1, k});
    }
    std::vector<int> sentOfTag(kN, 0);
    std::vector<void*> requests;
    for (size_t k = 0; k < order.size(); k++) {
      if (k == order.size() / 2) ROLE_CHECK(link.waitSignal(), "receiver never posted");
      auto [g, i] = order[k];
      // Per tag, group 0's message must go first; reorder within the tag if needed.
      int group = sentOfTag[i]++;
      (void)g;
      void* r = nullptr;
      ROLE_TRY(peer.isend(sendComm, arena.data() + (group * kN + i) * 4096, sizeOf(group, i),
                          1000 + i, mh, &r));
      requests.push_back(r);
    }
    ROLE_TRY(peer.waitAll(requests, nullptr));
    ROLE_CHECK(link.waitSignal(), "receiver never finished");
    ROLE_OK(peer.net().deregMr(sendComm, mh));
    ROLE_OK(peer.net().closeSend(sendComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), receiver, sender), "");
}

// A send larger than its receive buffer fails the receive with
// ncclInvalidUsage and a log line, and writes nothing past the buffer. Each
// case runs in its own pair of processes: tcp;ofi_rxm 1.17 drops the
// connection between two endpoints after truncating a message into a
// posted receive (docs/plugins/ofi.md), so whatever follows a truncation
// between the same processes is the provider's, not ours.
TEST_P(SdkOfi, TruncationIsAnErrorNotCorruption) {
  // 16 KiB into 4 KiB: tcp;ofi_rxm 1.17 does not say by how much a
  // rendezvous-sized message overflowed; the log line must not guess.
  const std::vector<std::pair<size_t, size_t>> cases = {
      {1000, 100}, {16384, 4096}, {1 << 20, 512 << 10}};
  for (const auto& c : cases) {
    auto receiver = [=](Peer& peer, Link& link) -> std::string {
      void* recvComm = nullptr;
      ROLE_TRY(listenAndAccept(peer, link, &recvComm));
      std::vector<unsigned char> buffer(c.second + 4096, 0xee);
      void* mh = nullptr;
      ROLE_OK(peer.net().regMr(recvComm, buffer.data(), buffer.size(), NCCL_PTR_HOST, &mh));
      void* data = buffer.data();
      size_t size = c.second;
      int tag = 3;
      void* r = nullptr;
      ROLE_TRY(peer.irecv(recvComm, 1, &data, &size, &tag, &mh, &r));
      ROLE_CHECK(link.signal(), "pipe");  // posted: the sender may go
      int sizes[kMaxSubs] = {};
      ncclResult_t res = peer.wait(r, sizes, kWaitMs);
      ROLE_CHECK(res == ncclInvalidUsage, "%zu into %zu: test returned %d, not ncclInvalidUsage",
                 c.first, c.second, static_cast<int>(res));
      for (size_t g = c.second; g < buffer.size(); g++) {
        ROLE_CHECK(buffer[g] == 0xee, "byte %zu past the %zu-byte buffer was written", g, c.second);
      }
      ROLE_CHECK(countLogged("truncated") == 1, "no log line");
      ROLE_CHECK(countLogged(format("for a %zu-byte receive buffer", c.second)) == 1,
                 "the log line does not name the %zu-byte buffer", c.second);
      ROLE_CHECK(countLogged(format("a %zu-byte send", c.second)) == 0,
                 "the log line says the send was as large as the buffer");
      ROLE_CHECK(
          countLogged(format("a %zu-byte send", c.first)) + countLogged("a send of unknown size") ==
              1,
          "the log line gives a wrong send size");
      ROLE_CHECK(link.waitSignal(), "sender never finished");
      ROLE_OK(peer.net().deregMr(recvComm, mh));
      ROLE_OK(peer.net().closeRecv(recvComm));
      return "";
    };
    auto sender = [=](Peer& peer, Link& link) -> std::string {
      void* sendComm = nullptr;
      ROLE_TRY(receiveHandleAndConnect(peer, link, &sendComm));
      ROLE_CHECK(link.waitSignal(), "receiver never posted");
      std::vector<unsigned char> buffer(c.first);
      fillPattern(buffer.data(), buffer.size(), 9);
      void* mh = nullptr;
      ROLE_OK(peer.net().regMr(sendComm, buffer.data(), buffer.size(), NCCL_PTR_HOST, &mh));
      void* r = nullptr;
      ROLE_TRY(peer.isend(sendComm, buffer.data(), buffer.size(), 3, mh, &r));
      // The sender is not told: tcp;ofi_rxm completes the send normally.
      ncclResult_t res = peer.wait(r, nullptr, kWaitMs);
      ROLE_CHECK(res == ncclSuccess, "send of %zu returned %d", c.first, static_cast<int>(res));
      ROLE_OK(peer.net().deregMr(sendComm, mh));
      ROLE_OK(peer.net().closeSend(sendComm));
      ROLE_CHECK(link.signal(), "pipe");
      return "";
    };
    EXPECT_EQ(runRoles(version(), receiver, sender), "") << c.first << " into " << c.second;
  }
}

// The contract's windows (32 receives, 32 x maxRecvs sends) are accepted;
// beyond them a NULL request says "later"; everything then completes.
TEST_P(SdkOfi, FullWindowsThenNullRequestsAsBackPressure) {
  auto role = [](Peer& peer, Link&) -> std::string {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    void* sendComm = nullptr;
    void* recvComm = nullptr;
    ROLE_TRY(peer.connectPair(handle, listenComm, &sendComm, &recvComm));
    ROLE_OK(peer.net().closeListen(listenComm));
    constexpr int kSends = NCCL_NET_MAX_REQUESTS * 8;
    std::vector<uint64_t> out(kSends), in(kSends, 0);
    for (int i = 0; i < kSends; i++) out[i] = 0x5a5a000000000000ull + i;
    void *smh = nullptr, *rmh = nullptr;
    ROLE_OK(peer.net().regMr(sendComm, out.data(), out.size() * 8, NCCL_PTR_HOST, &smh));
    ROLE_OK(peer.net().regMr(recvComm, in.data(), in.size() * 8, NCCL_PTR_HOST, &rmh));
    auto post = [&](int i, void** r) {
      void* data = &in[i];
      size_t size = 8;
      int tag = 0;
      return peer.net().irecv(recvComm, 1, &data, &size, &tag, &rmh, nullptr, r);
    };
    std::vector<void*> recvs;
    for (int i = 0; i < NCCL_NET_MAX_REQUESTS; i++) {
      void* r = nullptr;
      ROLE_OK(post(i, &r));
      ROLE_CHECK(r != nullptr, "receive %d of the 32 guaranteed was refused", i);
      recvs.push_back(r);
    }
    void* extra = reinterpret_cast<void*>(0x1);  // as NCCL preloads it
    ROLE_OK(post(NCCL_NET_MAX_REQUESTS, &extra));
    ROLE_CHECK(extra == nullptr, "a 33rd receive must come back as a NULL request");
    std::vector<void*> sends;
    for (int i = 0; i < kSends; i++) {
      void* r = nullptr;
      ROLE_OK(peer.net().isend(sendComm, &out[i], 8, 0, smh, nullptr, &r));
      ROLE_CHECK(r != nullptr, "send %d of the %d guaranteed was refused", i, kSends);
      sends.push_back(r);
    }
    void* more = nullptr;
    ROLE_OK(peer.net().isend(sendComm, &out[0], 8, 0, smh, nullptr, &more));
    ROLE_CHECK(more == nullptr, "send %d must come back as a NULL request", kSends + 1);
    // Drain: receives in windows of 32, in order.
    for (int base = 0; base < kSends; base += NCCL_NET_MAX_REQUESTS) {
      if (base > 0) {
        recvs.clear();
        for (int i = base; i < base + NCCL_NET_MAX_REQUESTS; i++) {
          void* r = nullptr;
          ROLE_OK(post(i, &r));
          ROLE_CHECK(r != nullptr, "receive %d refused after the window drained", i);
          recvs.push_back(r);
        }
      }
      ROLE_TRY(peer.waitAll(recvs, nullptr));
    }
    ROLE_TRY(peer.waitAll(sends, nullptr));
    for (int i = 0; i < kSends; i++) {
      ROLE_CHECK(in[i] == out[i], "receive %d got %llx: order lost", i,
                 static_cast<unsigned long long>(in[i]));
    }
    ROLE_OK(peer.net().deregMr(sendComm, smh));
    ROLE_OK(peer.net().deregMr(recvComm, rmh));
    ROLE_OK(peer.net().closeSend(sendComm));
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), nullptr, role), "");
}

TEST_P(SdkOfi, HostMemoryNeedsNoFlush) {
  auto role = [](Peer& peer, Link&) -> std::string {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    void *sendComm = nullptr, *recvComm = nullptr;
    ROLE_TRY(peer.connectPair(handle, listenComm, &sendComm, &recvComm));
    char buffer[64];
    void* mh = nullptr;
    ROLE_OK(peer.net().regMr(recvComm, buffer, sizeof(buffer), NCCL_PTR_HOST, &mh));
    ROLE_CHECK(
        peer.net().regMr(recvComm, buffer, sizeof(buffer), NCCL_PTR_CUDA, &mh) != ncclSuccess,
        "GPU memory must be refused without FI_HMEM");
    void* data = buffer;
    int size = 64;
    void* r = reinterpret_cast<void*>(0x1);
    ROLE_OK(peer.net().iflush(recvComm, 1, &data, &size, &mh, &r));
    ROLE_CHECK(r == nullptr, "host memory: iflush returns a NULL request");
    ROLE_OK(peer.net().deregMr(recvComm, mh));
    ROLE_CHECK(peer.net().deregMr(recvComm, mh) != ncclSuccess, "double deregMr accepted");
    ROLE_OK(peer.net().closeListen(listenComm));
    ROLE_OK(peer.net().closeSend(sendComm));
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), nullptr, role), "");
}

// Peer death on tcp;ofi_rxm: a send to a process that died fails with
// ncclRemoteError, from isend (the peer was already declared gone) or from
// test() (the send left before). fault_test.cc covers the other states.
TEST_P(SdkOfi, SendsToADeadPeerFailWithRemoteError) {
  auto receiver = [](Peer& peer, Link& link) -> std::string {
    void* recvComm = nullptr;
    ROLE_TRY(listenAndAccept(peer, link, &recvComm));
    _exit(0);  // dies with the connection open; its pipe closes with it
  };
  auto sender = [](Peer& peer, Link& link) -> std::string {
    void* sendComm = nullptr;
    ROLE_TRY(receiveHandleAndConnect(peer, link, &sendComm));
    char byte;
    ROLE_CHECK(!link.receive(&byte, 1, kWaitMs / 1000.0), "the receiver should have died");
    std::vector<char> buffer(4 << 20);
    void* mh = nullptr;
    ROLE_OK(peer.net().regMr(sendComm, buffer.data(), buffer.size(), NCCL_PTR_HOST, &mh));
    // The first message may still leave through the socket before the
    // peer's reset comes back; a later one then fails.
    ncclResult_t res = ncclSuccess;
    for (int attempt = 0; attempt < 10 && res == ncclSuccess; attempt++) {
      void* r = nullptr;
      auto start = std::chrono::steady_clock::now();
      while (r == nullptr && res == ncclSuccess &&
             std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
        res = peer.net().isend(sendComm, buffer.data(), 8, 1, mh, nullptr, &r);
      }
      if (r != nullptr) res = peer.wait(r, nullptr, 5000);
    }
    ROLE_CHECK(res == ncclRemoteError, "sends to a dead peer returned %d", static_cast<int>(res));
    ROLE_CHECK(countLogged("is gone") + countLogged("not connected") + countLogged("reset") +
                       countLogged("Broken") >
                   0,
               "no log line says why");
    ROLE_OK(peer.net().deregMr(sendComm, mh));
    ROLE_OK(peer.net().closeSend(sendComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), receiver, sender), "");
}

INSTANTIATE_TEST_SUITE_P(Abi, SdkOfi, ::testing::Values(8, 11, 12),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "V" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace ncclnet::ofi::testing
