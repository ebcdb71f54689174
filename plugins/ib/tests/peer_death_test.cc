// SPDX-License-Identifier: Apache-2.0
// sdk-ib: a send to a receiver whose process was killed (kill -9) fails
// with ncclRemoteError and one WARN naming the peer, both when the send was
// already waiting for its clear-to-send entry and when it was posted after
// the death; later calls fail at once and the comm still closes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "harness.hpp"

namespace ncclnet::ib::testing {
namespace {

// How long a dead receiver may take to surface: the handshake connection
// closes when the kernel reaps the process; isend looks every 20 ms.
constexpr double kBoundSeconds = 1.0;

// A receiver that accepts one connection, says so, and waits to be killed.
int receiverThatWaits(Channel& parent) {
  Session s(11);
  if (!s.ok()) return 90;
  void* recvComm = nullptr;
  if (listenAndAccept(s, parent, &recvComm) != ncclSuccess || recvComm == nullptr) return 93;
  char ready = 1;
  if (!parent.send(&ready, 1)) return 94;
  char never;
  parent.receive(&never, 1, 60);
  return 95;
}

class IbPeerDeath : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(s_.ok()) << s_.error();
    ASSERT_EQ(receiveHandleAndConnect(s_, child_.channel(), &comm_), ncclSuccess);
    char ready = 0;
    ASSERT_TRUE(child_.channel().receive(&ready, 1));
    ASSERT_EQ(s_.net().regMr(comm_, buffer_.data(), buffer_.size(), NCCL_PTR_HOST, &mh_),
              ncclSuccess);
  }
  void TearDown() override {
    if (mh_ != nullptr) {
      EXPECT_EQ(s_.net().deregMr(comm_, mh_), ncclSuccess);
    }
    if (comm_ != nullptr) {
      EXPECT_EQ(s_.net().closeSend(comm_), ncclSuccess);
    }
  }

  ncclResult_t isendOnce(void** request) {
    return s_.net().isend(comm_, buffer_.data(), buffer_.size(), 0, mh_, nullptr, request);
  }
  // isend until it answers something other than "not yet" or `seconds` pass.
  ncclResult_t isendUntilAnswered(double seconds) {
    Deadline deadline(seconds);
    while (!deadline.expired()) {
      void* request = nullptr;
      ncclResult_t res = isendOnce(&request);
      if (res != ncclSuccess) return res;
      if (request != nullptr) return ncclInternalError;  // nobody posted a receive
    }
    return ncclTimeout;
  }
  // The one WARN, and the calls after it.
  void expectOneWarningThenFastFailures(size_t mark) {
    std::vector<std::string> warnings = warningsSince(mark);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("isend to 127.0.0.1:"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("receiver closed its connection"), std::string::npos) << warnings[0];
    void* request = nullptr;
    auto start = Clock::now();
    EXPECT_EQ(isendOnce(&request), ncclRemoteError);
    EXPECT_EQ(request, nullptr);
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(5));
    EXPECT_EQ(warningsSince(mark).size(), 1u) << "later calls add no line";
  }

  // kill -9 the receiver: isend fails with ncclRemoteError within the
  // bound, with one WARN line, and every call after it fails at once.
  void killReceiverThenExpectRemoteError() {
    size_t mark = logMark();
    child_.kill();
    auto died = Clock::now();
    EXPECT_EQ(isendUntilAnswered(10), ncclRemoteError);
    double seconds = std::chrono::duration<double>(Clock::now() - died).count();
    EXPECT_LT(seconds, kBoundSeconds);
    RecordProperty("surfaced_us", static_cast<int>(seconds * 1e6));
    expectOneWarningThenFastFailures(mark);
  }

  ChildProcess child_{receiverThatWaits};
  Session s_{11};
  void* comm_ = nullptr;
  void* mh_ = nullptr;
  std::vector<char> buffer_ = std::vector<char>(4096);
};

TEST_F(IbPeerDeath, SendWaitingForClearToSendFailsWhenTheReceiverDies) {
  EXPECT_EQ(isendUntilAnswered(0.1), ncclTimeout) << "the receiver lives: no answer yet";
  killReceiverThenExpectRemoteError();
}

TEST_F(IbPeerDeath, SendPostedAfterTheReceiverDiedFails) {
  killReceiverThenExpectRemoteError();
}

}  // namespace
}  // namespace ncclnet::ib::testing
