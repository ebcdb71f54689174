// SPDX-License-Identifier: Apache-2.0
// sdk-ofi under faults: a peer SIGKILLed in every state a request can wait
// in, a handle with an unusable address, idle stray TCP connections to the
// endpoint's port, and memory over many connect/close cycles. Two
// processes over tcp;ofi_rxm on loopback; every wait is bounded.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dirent.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "peer.hpp"

namespace ncclnet::ofi::testing {
namespace {

// What docs/plugins/ofi.md promises for a dead peer whose kernel is alive:
// about 2.5 s with the default knobs; the test allows four times that.
constexpr int kDeathBoundMs = 10000;
// Where the listener's sockaddr lies in sdk-ofi's handle (comm.hpp: Handle).
constexpr size_t kHandleAddressLength = 4;
constexpr size_t kHandleAddress = 16;

int msSince(Clock::time_point start) {
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

// The message that shows a connection still works: one int, 42, tag 3,
// through a registration the caller deregisters (*mh) when it is done.
std::string sendTheAnswer(Peer& peer, void* sendComm, int* value, void** mh) {
  ROLE_OK(peer.net().regMr(sendComm, value, sizeof(*value), NCCL_PTR_HOST, mh));
  void* request = nullptr;
  ROLE_TRY(peer.isend(sendComm, value, sizeof(*value), 3, *mh, &request));
  ROLE_CHECK(peer.wait(request, nullptr) == ncclSuccess, "send failed");
  return "";
}

std::string receiveTheAnswer(Peer& peer, void* recvComm, int* value, void** mh) {
  ROLE_OK(peer.net().regMr(recvComm, value, sizeof(*value), NCCL_PTR_HOST, mh));
  void* data = value;
  size_t size = sizeof(*value);
  int tag = 3;
  void* request = nullptr;
  ROLE_TRY(peer.irecv(recvComm, 1, &data, &size, &tag, mh, &request));
  ROLE_CHECK(peer.wait(request, nullptr) == ncclSuccess, "receive failed");
  ROLE_CHECK(*value == 42, "received %d", *value);
  return "";
}

std::string sendPid(Link& link) {
  pid_t pid = getpid();
  ROLE_CHECK(link.send(&pid, sizeof(pid)), "pid not sent");
  return "";
}

std::string killPeer(Link& link) {
  pid_t pid = 0;
  ROLE_CHECK(link.receive(&pid, sizeof(pid)), "no pid from the peer");
  ROLE_CHECK(pid > 0 && kill(pid, SIGKILL) == 0, "kill -9 of %d failed", static_cast<int>(pid));
  return "";
}

// A role that waits to be killed (it fails if it is not, within 60 s).
std::string awaitDeath(Link& link) {
  char byte;
  link.receive(&byte, 1, 60);
  return "was never killed";
}

// After the peer died: the request fails with ncclRemoteError within the
// bound, the reason is logged once, and a new request fails at once.
std::string expectPeerGone(Peer& peer, void* request, Clock::time_point killed, const char* what) {
  ncclResult_t res = peer.wait(request, nullptr, kDeathBoundMs + 5000);
  int elapsed = msSince(killed);
  std::fprintf(stderr, "[ sdk-ofi ] %s: test() returned %d after %d ms\n", what,
               static_cast<int>(res), elapsed);
  ROLE_CHECK(res == ncclRemoteError, "%s: test() returned %d, expected ncclRemoteError", what,
             static_cast<int>(res));
  ROLE_CHECK(elapsed < kDeathBoundMs, "%s: the error took %d ms", what, elapsed);
  ROLE_CHECK(countLogged("is gone:") == 1, "%s: %d lines say the peer is gone, expected one", what,
             countLogged("is gone:"));
  return "";
}

class SdkOfiFaults : public ::testing::TestWithParam<int> {
 protected:
  int version() const { return GetParam(); }
};

// The receiver waits on a connection where nothing was sent; the sender is
// killed.
TEST_P(SdkOfiFaults, ReceiveFromAKilledSenderFails) {
  auto receiver = [](Peer& peer, Link& link) -> std::string {
    void* recvComm = nullptr;
    ROLE_TRY(listenAndAccept(peer, link, &recvComm));
    std::vector<char> buffer(1 << 20);
    void* mh = nullptr;
    ROLE_OK(peer.net().regMr(recvComm, buffer.data(), buffer.size(), NCCL_PTR_HOST, &mh));
    void* data = buffer.data();
    size_t size = buffer.size();
    int tag = 1;
    void* request = nullptr;
    ROLE_TRY(peer.irecv(recvComm, 1, &data, &size, &tag, &mh, &request));
    ROLE_TRY(killPeer(link));
    auto killed = Clock::now();
    ROLE_TRY(expectPeerGone(peer, request, killed, "idle receive"));
    auto start = Clock::now();
    void* again = nullptr;
    ROLE_CHECK(
        peer.net().irecv(recvComm, 1, &data, &size, &tag, &mh, nullptr, &again) == ncclRemoteError,
        "a new irecv on the comm should fail");
    ROLE_CHECK(msSince(start) < 100, "the new irecv took %d ms", msSince(start));
    ROLE_OK(peer.net().deregMr(recvComm, mh));
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  auto sender = [](Peer& peer, Link& link) -> std::string {
    void* sendComm = nullptr;
    ROLE_TRY(receiveHandleAndConnect(peer, link, &sendComm));
    ROLE_TRY(sendPid(link));
    return awaitDeath(link);
  };
  EXPECT_EQ(runRoles(version(), receiver, sender, 40000), "second role: killed by signal 9");
}

// Sender side: `size` bytes sent while the receiver (which posted a receive
// for them when `matched`) is killed.
std::string sendWhileTheReceiverDies(Peer& peer, Link& link, size_t size, const char* what) {
  void* sendComm = nullptr;
  ROLE_TRY(receiveHandleAndConnect(peer, link, &sendComm));
  ROLE_CHECK(link.waitSignal(), "the receiver is not ready");
  std::vector<char> buffer(size, 'x');
  void* mh = nullptr;
  ROLE_OK(peer.net().regMr(sendComm, buffer.data(), buffer.size(), NCCL_PTR_HOST, &mh));
  void* request = nullptr;
  ROLE_TRY(peer.isend(sendComm, buffer.data(), buffer.size(), 1, mh, &request));
  ROLE_TRY(killPeer(link));
  auto killed = Clock::now();
  ROLE_TRY(expectPeerGone(peer, request, killed, what));
  auto start = Clock::now();
  void* again = nullptr;
  ROLE_CHECK(
      peer.net().isend(sendComm, buffer.data(), 8, 1, mh, nullptr, &again) == ncclRemoteError,
      "a new isend on the comm should fail");
  ROLE_CHECK(msSince(start) < 100, "the new isend took %d ms", msSince(start));
  ROLE_OK(peer.net().deregMr(sendComm, mh));
  start = Clock::now();
  ROLE_OK(peer.net().closeSend(sendComm));
  ROLE_CHECK(msSince(start) < 1000, "closeSend took %d ms", msSince(start));
  return "";
}

std::string receiverThatDies(Peer& peer, Link& link, size_t size, bool post) {
  void* recvComm = nullptr;
  ROLE_TRY(listenAndAccept(peer, link, &recvComm));
  std::vector<char> buffer(size);
  void* mh = nullptr;
  ROLE_OK(peer.net().regMr(recvComm, buffer.data(), buffer.size(), NCCL_PTR_HOST, &mh));
  if (post) {
    void* data = buffer.data();
    int tag = 1;
    void* request = nullptr;
    ROLE_TRY(peer.irecv(recvComm, 1, &data, &size, &tag, &mh, &request));
  }
  ROLE_CHECK(link.signal(), "ready not sent");
  ROLE_TRY(sendPid(link));
  return awaitDeath(link);
}

// A 64 MiB send is in flight (its receive posted) when the receiver is
// killed.
TEST_P(SdkOfiFaults, SendInFlightToAKilledReceiverFails) {
  constexpr size_t kSize = 64 << 20;
  auto receiver = [](Peer& peer, Link& link) { return receiverThatDies(peer, link, kSize, true); };
  auto sender = [](Peer& peer, Link& link) {
    return sendWhileTheReceiverDies(peer, link, kSize, "64 MiB send in flight");
  };
  EXPECT_EQ(runRoles(version(), receiver, sender, 40000), "first role: killed by signal 9");
}

// The receiver never posted a receive for the send when it is killed.
TEST_P(SdkOfiFaults, UnmatchedSendToAKilledReceiverFails) {
  constexpr size_t kSize = 1 << 20;
  auto receiver = [](Peer& peer, Link& link) { return receiverThatDies(peer, link, kSize, false); };
  auto sender = [](Peer& peer, Link& link) {
    return sendWhileTheReceiverDies(peer, link, kSize, "unmatched 1 MiB send");
  };
  EXPECT_EQ(runRoles(version(), receiver, sender, 40000), "first role: killed by signal 9");
}

// Polls connect with `handle` until it fails; "" when it failed in bounds.
std::string connectFails(Peer& peer, char* handle, const char* what) {
  auto start = Clock::now();
  void* sendComm = nullptr;
  ncclResult_t res = ncclSuccess;
  while (res == ncclSuccess && sendComm == nullptr && msSince(start) < kDeathBoundMs) {
    res = peer.net().connect(peer.ctx(), 0, handle, &sendComm, nullptr);
  }
  std::fprintf(stderr, "[ sdk-ofi ] connect to %s returned %d after %d ms\n", what,
               static_cast<int>(res), msSince(start));
  ROLE_CHECK(sendComm == nullptr, "connect to %s succeeded", what);
  ROLE_CHECK(res != ncclSuccess, "connect to %s still pending after %d ms", what, kDeathBoundMs);
  return "";
}

// Handles that name no usable peer fail their own connect, cleanly, and
// leave the endpoint able to connect to a new, real peer.
TEST_P(SdkOfiFaults, ConnectToAnUnusableAddressFailsAlone) {
  auto receiver = [](Peer& peer, Link& link) -> std::string {
    void* recvComm = nullptr;
    ROLE_TRY(listenAndAccept(peer, link, &recvComm));
    int value = 0;
    void* mh = nullptr;
    ROLE_TRY(receiveTheAnswer(peer, recvComm, &value, &mh));
    ROLE_OK(peer.net().deregMr(recvComm, mh));
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  auto sender = [](Peer& peer, Link& link) -> std::string {
    char real[NCCL_NET_HANDLE_MAXSIZE];
    ROLE_CHECK(link.receive(real, sizeof(real)), "no handle from the receiver");
    // Garbage where the address should be: refused before libfabric sees it.
    char garbage[NCCL_NET_HANDLE_MAXSIZE];
    std::memcpy(garbage, real, sizeof(real));
    for (size_t i = kHandleAddress; i < sizeof(garbage); i++)
      garbage[i] = static_cast<char>(i * 37);
    ROLE_TRY(connectFails(peer, garbage, "a garbage address"));
    ROLE_CHECK(countLogged("not a usable") == 1, "one line should say why the address is bad");
    // A well-formed address where nobody listens: the connection is refused.
    char closed[NCCL_NET_HANDLE_MAXSIZE];
    std::memcpy(closed, real, sizeof(real));
    sockaddr_in nobody{};
    nobody.sin_family = AF_INET;
    nobody.sin_port = htons(1);
    nobody.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::memcpy(closed + kHandleAddress, &nobody, sizeof(nobody));
    uint16_t length = sizeof(nobody);
    std::memcpy(closed + kHandleAddressLength, &length, sizeof(length));
    ROLE_TRY(connectFails(peer, closed, "a closed port"));
    ROLE_CHECK(countLogged("is gone:") == 1, "one line should say the closed port's peer is gone");
    // The real peer, new to this endpoint, still works.
    void* sendComm = nullptr;
    ROLE_TRY(peer.connect(real, &sendComm));
    int value = 42;
    void* mh = nullptr;
    ROLE_TRY(sendTheAnswer(peer, sendComm, &value, &mh));
    ROLE_OK(peer.net().deregMr(sendComm, mh));
    ROLE_OK(peer.net().closeSend(sendComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), receiver, sender, 40000), "");
}

int openFds() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) count += entry->d_name[0] != '.';
  closedir(dir);
  return count;
}

// Opens `count` TCP connections to the handle's address that send nothing.
std::string openStrays(const char* handle, int count, std::vector<int>* fds) {
  uint16_t length = 0;
  std::memcpy(&length, handle + kHandleAddressLength, sizeof(length));
  ROLE_CHECK(length == sizeof(sockaddr_in), "the listener's address is not IPv4 (%u bytes)",
             length);
  sockaddr_in target;
  std::memcpy(&target, handle + kHandleAddress, sizeof(target));
  for (int i = 0; i < count; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ROLE_CHECK(fd >= 0, "socket failed");
    ROLE_CHECK(connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)) == 0,
               "stray connect %d failed", i);
    fds->push_back(fd);
  }
  return "";
}

// Waits until the listener has shut every stray down (each reads EOF).
std::string awaitStraysClosed(std::vector<int>* fds, int timeoutMs) {
  auto start = Clock::now();
  for (int fd : *fds) {
    pollfd p{fd, POLLIN, 0};
    int left = timeoutMs - msSince(start);
    ROLE_CHECK(left > 0 && poll(&p, 1, left) == 1, "a stray is still open after %d ms", timeoutMs);
    char byte;
    ROLE_CHECK(read(fd, &byte, 1) <= 0, "a stray received data");
    close(fd);
  }
  fds->clear();
  return "";
}

// Connections to the endpoint's port that never speak are shut down after
// NCCLNET_OFI_STRAY_TIMEOUT_MS, without disturbing the real peer that
// connects behind them, and the WARN about them is not repeated within a
// minute.
TEST_P(SdkOfiFaults, IdleStrayConnectionsAreShutDown) {
  setenv("NCCLNET_OFI_STRAY_TIMEOUT_MS", "1000", 1);
  auto listener = [](Peer& peer, Link& link) -> std::string {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    int before = openFds();
    ROLE_CHECK(link.send(handle, sizeof(handle)), "handle not sent");
    ROLE_CHECK(link.waitSignal(), "the strays were not opened");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int withStrays = openFds();
    void* recvComm = nullptr;
    ROLE_TRY(peer.accept(listenComm, &recvComm));
    ROLE_OK(peer.net().closeListen(listenComm));
    int value = 0;
    void* mh = nullptr;
    ROLE_TRY(receiveTheAnswer(peer, recvComm, &value, &mh));
    ROLE_CHECK(link.waitSignal(30), "the strays were not seen closed");
    // The provider closes a shut-down descriptor at its next progress.
    int after = openFds();
    for (auto start = Clock::now(); after > before + 4 && msSince(start) < 2000;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      after = openFds();
    }
    std::fprintf(stderr, "[ sdk-ofi ] listener fds: %d before the strays, %d with them, %d after\n",
                 before, withStrays, after);
    // The real connection holds one or two descriptors of its own.
    ROLE_CHECK(after <= before + 4, "fds %d -> %d: the strays were not freed", before, after);
    ROLE_CHECK(countLogged("NCCLNET_OFI_STRAY_TIMEOUT_MS;") == 1,
               "%d WARN lines about strays, expected 1",
               countLogged("NCCLNET_OFI_STRAY_TIMEOUT_MS;"));
    ROLE_OK(peer.net().deregMr(recvComm, mh));
    ROLE_OK(peer.net().closeRecv(recvComm));
    return "";
  };
  auto client = [](Peer& peer, Link& link) -> std::string {
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    ROLE_CHECK(link.receive(handle, sizeof(handle)), "no handle from the listener");
    std::vector<int> strays;
    ROLE_TRY(openStrays(handle, 100, &strays));
    ROLE_CHECK(link.signal(), "not signalled");
    // The real connection, behind 100 strays.
    void* sendComm = nullptr;
    ROLE_TRY(peer.connect(handle, &sendComm));
    int value = 42;
    void* mh = nullptr;
    ROLE_TRY(sendTheAnswer(peer, sendComm, &value, &mh));
    ROLE_TRY(awaitStraysClosed(&strays, 10000));
    // A second wave within the minute: shut down too, logged as INFO.
    ROLE_TRY(openStrays(handle, 20, &strays));
    ROLE_TRY(awaitStraysClosed(&strays, 10000));
    ROLE_CHECK(link.signal(), "not signalled");
    ROLE_OK(peer.net().deregMr(sendComm, mh));
    ROLE_OK(peer.net().closeSend(sendComm));
    return "";
  };
  EXPECT_EQ(runRoles(version(), listener, client, 50000), "");
  unsetenv("NCCLNET_OFI_STRAY_TIMEOUT_MS");
}

// A partition, made by dropping every TCP segment on lo with nft: a receiver waiting across a
// partition longer than NCCLNET_OFI_PEER_TIMEOUT_MS (3 s here) fails with
// ncclRemoteError; one across a 1.5 s partition completes once it heals.
// Needs root in a network namespace of its own, so it is disabled; run it
// as root with
//   unshare -n sh -c 'ip link set lo up && sdk_ofi_transfer_tests
//     --gtest_also_run_disabled_tests --gtest_filter=*Partition*'
constexpr const char* kPartition =
    "nft add table inet partition && nft add chain inet partition in "
    "'{ type filter hook input priority 0; }' && "
    "nft add rule inet partition in meta l4proto tcp drop";
constexpr const char* kHeal = "nft delete table inet partition";

TEST_P(SdkOfiFaults, DISABLED_PartitionLongerThanThePeerTimeoutFails) {
  setenv("NCCLNET_OFI_PEER_TIMEOUT_MS", "3000", 1);
  auto receiver = [](Peer& peer, Link& link) -> std::string {
    void* recvComm = nullptr;
    ROLE_TRY(listenAndAccept(peer, link, &recvComm));
    int values[2] = {0, 0};
    void* mh = nullptr;
    ROLE_OK(peer.net().regMr(recvComm, values, sizeof(values), NCCL_PTR_HOST, &mh));
    for (int round = 0; round < 2; round++) {
      void* data = &values[round];
      size_t size = sizeof(int);
      int tag = 3;
      void* request = nullptr;
      ROLE_TRY(peer.irecv(recvComm, 1, &data, &size, &tag, &mh, &request));
      ROLE_CHECK(link.signal(), "not signalled");
      auto start = Clock::now();
      ncclResult_t res = peer.wait(request, nullptr, 20000);
      std::fprintf(stderr, "[ sdk-ofi ] partition round %d: test() returned %d after %d ms\n",
                   round, static_cast<int>(res), msSince(start));
      if (round == 0) {
        ROLE_CHECK(res == ncclSuccess && values[0] == 42, "short partition: %d, value %d",
                   static_cast<int>(res), values[0]);
      } else {
        ROLE_CHECK(res == ncclRemoteError, "long partition: test() returned %d",
                   static_cast<int>(res));
      }
    }
    return "";
  };
  auto sender = [](Peer& peer, Link& link) -> std::string {
    void* sendComm = nullptr;
    ROLE_TRY(receiveHandleAndConnect(peer, link, &sendComm));
    int value = 42;
    void* mh = nullptr;
    ROLE_OK(peer.net().regMr(sendComm, &value, sizeof(value), NCCL_PTR_HOST, &mh));
    ROLE_CHECK(link.waitSignal(), "round 0 not posted");
    ROLE_CHECK(std::system(kPartition) == 0, "nft failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ROLE_CHECK(std::system(kHeal) == 0, "nft failed");
    void* request = nullptr;
    ROLE_TRY(peer.isend(sendComm, &value, sizeof(value), 3, mh, &request));
    ROLE_CHECK(peer.wait(request, nullptr) == ncclSuccess, "send failed");
    ROLE_CHECK(link.waitSignal(), "round 1 not posted");
    ROLE_CHECK(std::system(kPartition) == 0, "nft failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(8000));
    ROLE_CHECK(std::system(kHeal) == 0, "nft failed");
    return "";
  };
  EXPECT_EQ(runRoles(version(), receiver, sender, 40000), "");
  unsetenv("NCCLNET_OFI_PEER_TIMEOUT_MS");
}

long residentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long pages = 0, resident = 0;
  int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

std::string connectCloseCycles(Peer& peer, int cycles) {
  for (int i = 0; i < cycles; i++) {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    void* sendComm = nullptr;
    void* recvComm = nullptr;
    ROLE_OK(peer.net().listen(peer.ctx(), 0, handle, &listenComm));
    ROLE_TRY(peer.connectPair(handle, listenComm, &sendComm, &recvComm));
    ROLE_OK(peer.net().closeSend(sendComm));
    ROLE_OK(peer.net().closeRecv(recvComm));
    ROLE_OK(peer.net().closeListen(listenComm));
  }
  return "";
}

// Everything a connection takes is returned when it closes: the heap in
// use after 2000 listen/connect/accept/close cycles is what it was before,
// but for less than one small allocation every four cycles.
// Resident memory is reported too: it creeps by ~96 B per cycle, all of it
// first touches of pages in the ring libfabric maps at endpoint open (80
// MiB for tcp;ofi_rxm in 1.17; docs/plugins/ofi.md), none of it per comm.
TEST_P(SdkOfiFaults, ConnectionMemoryIsReturnedAtClose) {
  auto role = [](Peer& peer, Link&) -> std::string {
    ROLE_TRY(connectCloseCycles(peer, 300));  // warm-up: pools, maps, caches
    long rssBefore = residentBytes();
    size_t heapBefore = mallinfo2().uordblks;
    constexpr int kCycles = 2000;
    ROLE_TRY(connectCloseCycles(peer, kCycles));
    size_t heapAfter = mallinfo2().uordblks;
    long rssAfter = residentBytes();
    double heapPerCycle =
        (static_cast<double>(heapAfter) - static_cast<double>(heapBefore)) / kCycles;
    std::fprintf(stderr,
                 "[ sdk-ofi ] over %d cycles: heap in use %zu -> %zu bytes (%.1f B/cycle), "
                 "RSS %ld -> %ld bytes (%.1f B/cycle)\n",
                 kCycles, heapBefore, heapAfter, heapPerCycle, rssBefore, rssAfter,
                 static_cast<double>(rssAfter - rssBefore) / kCycles);
    // A leak of anything per connection is at least one 16-byte chunk per
    // cycle; a few KiB once (a container growing its table, a provider's
    // pool) are not a leak and come and go between runs.
    ROLE_CHECK(heapPerCycle < 4, "the heap grew %.1f bytes per connect/close cycle", heapPerCycle);
    return "";
  };
  EXPECT_EQ(runRoles(version(), nullptr, role, 55000), "");
}

INSTANTIATE_TEST_SUITE_P(Abi, SdkOfiFaults, ::testing::Values(12),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "V" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace ncclnet::ofi::testing
