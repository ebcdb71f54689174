// SPDX-License-Identifier: Apache-2.0
// sdk-ib: connections to a listen port that are not its peer — idle, closed
// at once, random bytes, another wire version, a hello with the wrong
// secret — never fail accept nor delay the real peer; each is dropped with
// one rate-limited WARN, idle ones after NCCL_IB_CONNECT_TIMEOUT_MS.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "connect.hpp"
#include "harness.hpp"

namespace ncclnet::ib::testing {
namespace {

using ncclnet::ib::ConnInfo;
using ncclnet::ib::Handle;

// A blocking TCP connection to the listen address in `handle`.
int connectRaw(const char* handle) {
  Handle h;
  std::memcpy(&h, handle, sizeof(h));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&h.addr.v4), sizeof(h.addr.v4)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

uint64_t secretOf(const char* handle) {
  Handle h;
  std::memcpy(&h, handle, sizeof(h));
  return h.secret;
}

// Accepts while it answers "not yet"; false at the first error or comm.
bool acceptStaysQuiet(Session& s, void* listenComm, double seconds) {
  Deadline deadline(seconds);
  while (!deadline.expired()) {
    void* comm = nullptr;
    if (s.net().accept(listenComm, &comm, nullptr) != ncclSuccess || comm != nullptr) return false;
  }
  return true;
}

// Whether the peer closed `fd` within `seconds`.
bool closedWithin(int fd, double seconds, Session& s, void* listenComm) {
  Deadline deadline(seconds);
  while (!deadline.expired()) {
    void* comm = nullptr;
    s.net().accept(listenComm, &comm, nullptr);  // accept does the closing
    pollfd p{fd, POLLIN, 10};
    char byte;
    if (::poll(&p, 1, 10) == 1 && ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0) return true;
  }
  return false;
}

int countWith(const std::vector<std::string>& lines, const std::string& needle) {
  int n = 0;
  for (const std::string& line : lines) n += line.find(needle) != std::string::npos;
  return n;
}

// A sender in a child: on a byte from the parent, connects first with the
// handle's secret changed (must fail), then with the real handle.
int senderOnCue(Channel& parent) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (!parent.receive(handle, sizeof(handle))) return 90;
  Session s(11);
  if (!s.ok()) return 91;
  char forged[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(forged, handle, sizeof(forged));
  reinterpret_cast<Handle*>(forged)->secret ^= 1;
  void* comm = nullptr;
  if (connectTo(s, forged, &comm, 10) == ncclSuccess) return 92;
  if (connectTo(s, handle, &comm, 10) != ncclSuccess || comm == nullptr) return 93;
  char done = 1;
  parent.send(&done, 1);
  s.net().closeSend(comm);
  return 0;
}

class IbStrays : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(s_.ok()) << s_.error();
    ASSERT_EQ(s_.net().listen(s_.ctx(), 0, handle_, &listen_), ncclSuccess);
  }
  void TearDown() override {
    for (int fd : strays_) ::close(fd);
    if (listen_ != nullptr) {
      EXPECT_EQ(s_.net().closeListen(listen_), ncclSuccess);
    }
  }
  int stray() {
    int fd = connectRaw(handle_);
    if (fd >= 0) strays_.push_back(fd);
    return fd;
  }

  Session s_{11};
  char handle_[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen_ = nullptr;
  std::vector<int> strays_;
};

TEST_F(IbStrays, EveryKindIsDroppedAndTheRealPeerStillConnects) {
  ChildProcess sender(senderOnCue);
  size_t mark = logMark();
  int idle = stray();
  ASSERT_GE(idle, 0);
  ASSERT_GE(stray(), 0);  // closed at once
  ::close(strays_.back());
  strays_.pop_back();
  std::vector<char> noise(200);
  for (size_t i = 0; i < noise.size(); i++) noise[i] = static_cast<char>(i * 37 + 11);
  int random = stray();
  ASSERT_TRUE(writeAll(random, noise.data(), noise.size()));
  ConnInfo otherVersion;
  otherVersion.version = ncclnet::ib::kWireVersion + 1;
  otherVersion.secret = secretOf(handle_);
  ASSERT_TRUE(writeAll(stray(), &otherVersion, sizeof(otherVersion)));
  ASSERT_TRUE(acceptStaysQuiet(s_, listen_, 0.3)) << "a stray failed accept or became a comm";

  // The sender's forged hello, then the real one, while the idle stray waits.
  ASSERT_TRUE(sender.channel().send(handle_, sizeof(handle_)));
  void* comm = nullptr;
  auto start = Clock::now();
  ASSERT_EQ(acceptFrom(s_, listen_, &comm, 20), ncclSuccess);
  ASSERT_NE(comm, nullptr);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10)) << "far below the 60 s timeout";
  char done = 0;
  EXPECT_TRUE(sender.channel().receive(&done, 1));
  EXPECT_TRUE(sender.wait(10).succeeded());
  EXPECT_EQ(s_.net().closeRecv(comm), ncclSuccess);

  std::vector<std::string> warnings = warningsSince(mark);
  EXPECT_EQ(countWith(warnings, "dropped a connection from"), 4)
      << "closed, random, version, secret";
  EXPECT_EQ(countWith(warnings, "wrong magic"), 1);
  EXPECT_EQ(countWith(warnings, "wire version"), 1);
  EXPECT_EQ(countWith(warnings, "secret is not this listen's"), 1);
}

TEST(IbStrayTimeout, IdleStraysAreClosedAfterTheConnectTimeout) {
  ScopedEnv env;  // read at init: this test's session is the process's only one
  env.set("NCCL_IB_CONNECT_TIMEOUT_MS", "300");
  Session s(11);
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listen = nullptr;
  ASSERT_EQ(s.net().listen(s.ctx(), 0, handle, &listen), ncclSuccess);
  int fd = connectRaw(handle);
  ASSERT_GE(fd, 0);
  size_t mark = logMark();
  auto start = Clock::now();
  EXPECT_TRUE(closedWithin(fd, 5, s, listen));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(250));
  EXPECT_EQ(countWith(warningsSince(mark), "no complete handshake within"), 1);
  ::close(fd);
  EXPECT_EQ(s.net().closeListen(listen), ncclSuccess);
}

TEST_F(IbStrays, AFloodLogsAFewLinesAndNeverFailsAccept) {
  size_t mark = logMark();
  for (int i = 0; i < 110; i++) {
    int fd = connectRaw(handle_);
    ASSERT_GE(fd, 0);
    ::close(fd);
    if (i % 10 == 9) {
      ASSERT_TRUE(acceptStaysQuiet(s_, listen_, 0.02));
    }
  }
  ASSERT_TRUE(acceptStaysQuiet(s_, listen_, 0.2));
  std::vector<std::string> warnings = warningsSince(mark);
  EXPECT_GE(warnings.size(), 1u);
  EXPECT_LE(warnings.size(), 5u);
}

}  // namespace
}  // namespace ncclnet::ib::testing
