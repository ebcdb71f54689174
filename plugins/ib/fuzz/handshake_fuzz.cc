// SPDX-License-Identifier: Apache-2.0
// Fuzzes sdk-ib's out-of-band handshake from both ends, through the built
// plugin's table on softverbs, as a remote process meets it:
//
//   accept side   the input arrives on a TCP connection to a live listen,
//                 as from a stray or a peer (connect.cc: stepHandshake);
//   connect side  the input is the listener's answer to the plugin's own
//                 connect (connect.cc: stepConnect), after the plugin sent
//                 its ConnInfo.
//
// The first input byte picks the side (bit 0) and whether the hello prefix
// (magic, version, secret) is made right (bit 1), so that most inputs get
// past it into the QP numbers, GID, LID and MTU that reach softverbs'
// modify_qp. The sender of the input then half-closes, so every handshake
// ends at once, in a comm or an error: one that does neither within the
// deadline is reported as a hang.
//
// Checks beyond "no crash": on the accept side a connection without the
// listen's secret never makes accept fail (it is a stray; contract rule 56),
// and the listen still accepts after any input. The made-up GIDs name
// addresses softverbs would connect its link to, so the process runs in a
// network namespace of its own (root only; otherwise exit code 77, skip).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "connect.hpp"
#include "ncclnet/testing/net_polling.hpp"
#include "ncclnet/testing/private_network.hpp"

namespace {

using ncclnet::ib::ConnInfo;
using ncclnet::ib::Handle;
using Clock = std::chrono::steady_clock;

constexpr auto kDeadline = std::chrono::seconds(3);
constexpr size_t kHelloPrefix = offsetof(ConnInfo, nqps);
enum Mode : uint8_t { kConnectSide = 1, kValidPrefix = 2 };

void quietLogger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "sdk-ib handshake fuzz: %s (errno: %s)\n", what, std::strerror(errno));
  std::abort();
}

struct Rig {
  ncclnet::testing::PluginSession session{{.plugin = SDK_IB_PLUGIN_PATH,
                                           .netName = "sdk-ib",
                                           .version = 12,
                                           .loaderCheck = true,
                                           .commId = 1,
                                           .logger = quietLogger}};
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  int listener = -1;  // the fuzzer's own listen, for the connect side
  sockaddr_in listenerAddress{};
};

Rig* rig = nullptr;

void setUp() {
  ncclnet::testing::enterPrivateNetworkOrSkip("sdk-ib handshake fuzz");
  setenv("NCCL_IBVERBS_LIB", SOFTVERBS_LIBRARY, 1);
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  setenv("NCCL_IB_CONNECT_TIMEOUT_MS", "2000", 1);
  rig = new Rig;
  if (!rig->session.ok()) fail(rig->session.error().c_str());
  if (rig->session.net().listen(rig->session.ctx(), 0, rig->handle, &rig->listenComm) !=
      ncclSuccess) {
    fail("listen failed");
  }
  rig->listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  rig->listenerAddress.sin_family = AF_INET;
  rig->listenerAddress.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(rig->listenerAddress);
  if (rig->listener < 0 ||
      ::bind(rig->listener, reinterpret_cast<sockaddr*>(&rig->listenerAddress), length) != 0 ||
      ::listen(rig->listener, 16) != 0 ||
      ::getsockname(rig->listener, reinterpret_cast<sockaddr*>(&rig->listenerAddress), &length) !=
          0) {
    fail("the fuzzer's own listen socket");
  }
}

bool writeAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;  // the plugin may drop a stray mid-write
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The input as the peer sends it, with the hello prefix made right on
// request (only where the input is long enough to hold it).
std::vector<uint8_t> message(const uint8_t* data, size_t size, bool validPrefix, uint64_t secret) {
  std::vector<uint8_t> bytes(data, data + size);
  if (validPrefix && bytes.size() >= kHelloPrefix) {
    ConnInfo hello;
    hello.secret = secret;
    std::memcpy(bytes.data(), &hello, kHelloPrefix);
  }
  return bytes;
}

void acceptSide(const uint8_t* data, size_t size, bool validPrefix) {
  Handle h;
  std::memcpy(&h, rig->handle, sizeof(h));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&h.addr.v4), sizeof(h.addr.v4))) {
    fail("cannot reach the plugin's listen socket");
  }
  std::vector<uint8_t> bytes = message(data, size, validPrefix, h.secret);
  bool proved = validPrefix && bytes.size() >= kHelloPrefix;
  writeAll(fd, bytes.data(), bytes.size());
  ::shutdown(fd, SHUT_WR);
  auto deadline = Clock::now() + kDeadline;
  for (;;) {
    void* recvComm = nullptr;
    ncclResult_t res = rig->session.net().accept(rig->listenComm, &recvComm, nullptr);
    if (res != ncclSuccess) {
      if (!proved) fail("accept failed on a connection without the listen's secret");
      break;  // a peer that held the secret: its failure is the job's
    }
    if (recvComm != nullptr) {
      rig->session.net().closeRecv(recvComm);
      break;
    }
    // Done once the plugin has let go of our connection.
    pollfd p{fd, POLLIN, 0};
    char byte;
    if (::poll(&p, 1, 1) == 1 && ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0) break;
    if (Clock::now() > deadline) fail("accept neither finished nor dropped a half-closed peer");
  }
  ::close(fd);
}

// The plugin's own connect to its listen still succeeds: no input left
// the listen unable to take its real peer.
void realPeerStillAccepted() {
  if (const char* why = ncclnet::testing::listenStillAccepts(rig->session, rig->handle,
                                                             rig->listenComm, kDeadline.count())) {
    fail(why);
  }
}

// The plugin connects to the fuzzer's listen; the input is the answer.
void connectSide(const uint8_t* data, size_t size, bool validPrefix) {
  Handle h{};
  h.magic = ncclnet::ib::kHandleMagic;
  h.addr.v4 = rig->listenerAddress;
  h.secret = 0x5eed'0000'0000'0000ull | size;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  std::memcpy(handle, &h, sizeof(h));
  void* sendComm = nullptr;
  if (rig->session.net().connect(rig->session.ctx(), 0, handle, &sendComm, nullptr) !=
      ncclSuccess) {
    fail("connect to a listening loopback socket failed at once");
  }
  pollfd p{rig->listener, POLLIN, 0};
  if (sendComm != nullptr || ::poll(&p, 1, 2000) != 1) fail("the plugin's connect never arrived");
  int fd = ::accept4(rig->listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) fail("accept4");
  // The plugin's ConnInfo first, as a listener reads it.
  ConnInfo theirs;
  size_t got = 0;
  auto deadline = Clock::now() + kDeadline;
  while (got < sizeof(theirs)) {
    if (rig->session.net().connect(rig->session.ctx(), 0, handle, &sendComm, nullptr) !=
        ncclSuccess) {
      fail("connect failed before its ConnInfo was read");
    }
    ssize_t n =
        ::recv(fd, reinterpret_cast<char*>(&theirs) + got, sizeof(theirs) - got, MSG_DONTWAIT);
    if (n > 0) got += static_cast<size_t>(n);
    if (Clock::now() > deadline) fail("the plugin never sent its ConnInfo");
  }
  std::vector<uint8_t> bytes = message(data, size, validPrefix, h.secret);
  writeAll(fd, bytes.data(), bytes.size());
  ::shutdown(fd, SHUT_WR);
  deadline = Clock::now() + kDeadline;
  for (;;) {
    ncclResult_t res =
        rig->session.net().connect(rig->session.ctx(), 0, handle, &sendComm, nullptr);
    if (res != ncclSuccess) break;  // refused the answer: what it must do
    if (sendComm != nullptr) {
      rig->session.net().closeSend(sendComm);
      break;
    }
    if (Clock::now() > deadline) fail("connect neither finished nor failed on a half-closed peer");
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setUp();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t mode = data[0];
  if (mode & kConnectSide) {
    connectSide(data + 1, size - 1, mode & kValidPrefix);
  } else {
    acceptSide(data + 1, size - 1, mode & kValidPrefix);
    static unsigned acceptInputs = 0;
    if (++acceptInputs % 64 == 0) realPeerStillAccepted();
  }
  return 0;
}
