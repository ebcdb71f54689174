// SPDX-License-Identifier: Apache-2.0
// The checker's bookkeeping without a plugin: handles are plain addresses
// here, as the ledger never follows them.
#include "ledger.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ncclnet::check {
namespace {

void quiet(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

class LedgerTest : public ::testing::Test {
 protected:
  LedgerTest() : reporter_(Logger(quiet, "NET/check"), false), ledger_(reporter_, true) {
    reporter_.setTap([this](const std::string& line) { lines_.push_back(line); });
  }

  // A listen, a connected pair and one registration on each end.
  void connect(int maxRecvs = 1) {
    ledger_.addListen(&listen_, 0);
    ledger_.addSend(&send_, 0, maxRecvs);
    ledger_.addRecv(&recv_, &listen_);
    sendComm_ = ledger_.find(&send_, CommKind::Send, "test");
    recvComm_ = ledger_.find(&recv_, CommKind::Recv, "test");
    ledger_.addMr(sendComm_, &sendMr_);
    ledger_.addMr(recvComm_, &recvMr_);
  }
  void* postSend(void* request, size_t size = 100, int tag = 1) {
    void* mhandle = &sendMr_;
    auto comm = ledger_.beforePost(&send_, PostKind::Send, 1, &mhandle, "isend");
    ledger_.afterPost(comm, PostKind::Send, 1, &size, &tag, &mhandle, request);
    return request;
  }
  void* postRecv(void* request, int n = 1, size_t size = 100) {
    std::vector<void*> mhandles(n, &recvMr_);
    std::vector<size_t> sizes(n, size);
    std::vector<int> tags(n, 1);
    auto comm = ledger_.beforePost(&recv_, PostKind::Recv, n, mhandles.data(), "irecv");
    ledger_.afterPost(comm, PostKind::Recv, n, sizes.data(), tags.data(), mhandles.data(), request);
    return request;
  }
  void complete(void* request, std::vector<int> sizes) {
    ASSERT_TRUE(ledger_.beforeTest(request).known);
    ledger_.afterTest(request, ncclSuccess, 1, sizes.data());
  }
  // The one line reported since the last call, or "" (and a failure) when
  // there were none or several.
  std::string onlyLine() {
    std::vector<std::string> lines;
    lines.swap(lines_);
    EXPECT_EQ(lines.size(), 1u) << (lines.empty() ? "no line" : lines.front());
    return lines.empty() ? "" : lines.front();
  }
  void expectNoLine() {
    EXPECT_TRUE(lines_.empty()) << lines_.front();
    lines_.clear();
  }

  Reporter reporter_;
  Ledger ledger_;
  std::vector<std::string> lines_;
  char listen_ = 0, send_ = 0, recv_ = 0, sendMr_ = 0, recvMr_ = 0;
  char requests_[200] = {};
  std::shared_ptr<CommState> sendComm_, recvComm_;
};

// After a failed connect, accept or regMr NCCL's teardown closes the NULL
// comm and deregisters the NULL handle it was left with (net.cc
// sendProxyFree, recvProxyFree): no misuse.
TEST_F(LedgerTest, NcclsTeardownOfWhatFailedIsNoMisuse) {
  connect();
  EXPECT_EQ(ledger_.close(nullptr, CommKind::Send, "closeSend"), 0u);
  EXPECT_EQ(ledger_.close(nullptr, CommKind::Recv, "closeRecv"), 0u);
  EXPECT_EQ(ledger_.close(nullptr, CommKind::Listen, "closeListen"), 0u);
  EXPECT_EQ(ledger_.beforeDereg(sendComm_, nullptr), 0u);
  expectNoLine();
  char stranger = 0;
  ledger_.close(&stranger, CommKind::Send, "closeSend");
  EXPECT_NE(onlyLine().find("not an open sendComm"), std::string::npos);
}

TEST_F(LedgerTest, CompletedRequestIsForgotten) {
  connect();
  void* r = postSend(&requests_[0]);
  TestTicket t = ledger_.beforeTest(r);
  EXPECT_TRUE(t.known);
  ledger_.afterTest(r, ncclSuccess, 0, nullptr);  // not done: still in flight
  complete(r, {100});
  expectNoLine();
  EXPECT_FALSE(ledger_.beforeTest(r).known);
  EXPECT_NE(onlyLine().find("rule 35 CompletionReportsSizes (caller): test of request"),
            std::string::npos);
}

TEST_F(LedgerTest, TallyCountsEveryTestOfACompletedRequest) {
  connect();
  void* send = postSend(&requests_[0]);
  void* recv = postRecv(&requests_[1]);
  for (int i = 0; i < 3; i++) {  // three polls that find the send not done
    ASSERT_TRUE(ledger_.beforeTest(send).known);
    ledger_.afterTest(send, ncclSuccess, 0, nullptr);
  }
  complete(send, {100});
  EXPECT_EQ(ledger_.testTally().completed, 1u);
  EXPECT_EQ(ledger_.testTally().tests, 4u);
  ASSERT_TRUE(ledger_.beforeTest(recv).known);  // a failed request counts as ended
  ledger_.afterTest(recv, ncclRemoteError, 0, nullptr);
  EXPECT_EQ(ledger_.testTally().completed, 2u);
  EXPECT_EQ(ledger_.testTally().tests, 5u);
}

TEST_F(LedgerTest, PeakInFlightIsTheMostAtOnceOnOneComm) {
  connect(8);
  for (int i = 0; i < 3; i++) postSend(&requests_[i]);
  complete(&requests_[0], {100});
  complete(&requests_[1], {100});
  postSend(&requests_[3]);  // two in flight now: the peak stays 3
  postRecv(&requests_[10], 2);
  postRecv(&requests_[11], 2);
  EXPECT_EQ(ledger_.peakInFlight().send, 3);
  EXPECT_EQ(ledger_.peakInFlight().recv, 2);
  void* flush = &requests_[12];  // a flush takes its receive's slot, not a new one
  auto comm = ledger_.beforePost(&recv_, PostKind::Flush, 1, nullptr, "iflush");
  ledger_.afterPost(comm, PostKind::Flush, 1, nullptr, nullptr, nullptr, flush);
  EXPECT_EQ(ledger_.peakInFlight().recv, 2);
}

TEST_F(LedgerTest, RequestThatFailedIsForgotten) {
  connect();
  void* r = postRecv(&requests_[0]);
  ASSERT_TRUE(ledger_.beforeTest(r).known);
  ledger_.afterTest(r, ncclRemoteError, 0, nullptr);
  expectNoLine();
  EXPECT_TRUE(ledger_.outstanding(Clock::now()).empty());
}

TEST_F(LedgerTest, RequestStillInFlightReturnedAgainIsRule29) {
  connect();
  postSend(&requests_[0]);
  postSend(&requests_[0]);
  std::string line = onlyLine();
  EXPECT_NE(line.find("rule 29 NullRequestRetry"), std::string::npos) << line;
  EXPECT_NE(line.find("isend #1"), std::string::npos) << "the stale record is named: " << line;
}

TEST_F(LedgerTest, RecvCommTakes32) {
  connect();
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; i++) postRecv(&requests_[i]);
  expectNoLine();
  postRecv(&requests_[NCCL_NET_MAX_REQUESTS]);
  EXPECT_NE(onlyLine().find("rule 28 InFlightLimits (caller): irecv with 32 requests"),
            std::string::npos);
}

TEST_F(LedgerTest, SendCommTakes32TimesMaxRecvs) {
  connect(/*maxRecvs=*/4);
  for (int i = 0; i < 4 * NCCL_NET_MAX_REQUESTS; i++) postSend(&requests_[i]);
  expectNoLine();
  complete(&requests_[0], {100});
  postSend(&requests_[4 * NCCL_NET_MAX_REQUESTS]);  // a completed one made room
  expectNoLine();
  postSend(&requests_[4 * NCCL_NET_MAX_REQUESTS + 1]);
  EXPECT_NE(onlyLine().find("rule 28 InFlightLimits (caller): isend with 128 requests"),
            std::string::npos);
}

TEST_F(LedgerTest, ReceiveSmallerThanPostedIsFine) {
  connect();
  complete(postRecv(&requests_[0], 1, 4096), {100});
  expectNoLine();
}

TEST_F(LedgerTest, ReceiveLargerThanPostedIsRule32) {
  connect();
  complete(postRecv(&requests_[0], 1, 4096), {4097});
  std::string line = onlyLine();
  EXPECT_NE(line.find("rule 32 TruncationIsAnError: test reported 4097 bytes in buffer 0, which "
                      "holds 4096"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("recvComm #"), std::string::npos) << line;
  EXPECT_NE(line.find("irecv #1 [4096 B tag 1] posted"), std::string::npos) << line;
}

TEST_F(LedgerTest, SendReportingMoreThanPostedIsRule35) {
  connect();
  complete(postSend(&requests_[0], 100), {101});
  EXPECT_NE(onlyLine().find("rule 35 CompletionReportsSizes: test reported a send of 101 bytes"),
            std::string::npos);
  complete(postSend(&requests_[1], 100), {-1});
  EXPECT_NE(onlyLine().find("a send of -1 bytes"), std::string::npos);
}

// A send whose receive was smaller: NCCL's IB reports the bytes the receive
// took, and one process cannot tell that from a wrong size.
TEST_F(LedgerTest, SendReportingLessThanPostedIsTheReceivesSize) {
  connect();
  complete(postSend(&requests_[0], 8192), {4096});
  expectNoLine();
}

TEST_F(LedgerTest, GroupedReceiveMissingASizeIsRule31) {
  connect();
  complete(postRecv(&requests_[0], 3), {10, 20, -1});
  EXPECT_NE(onlyLine().find("rule 31 GroupedCompletion: test reported done without a size for "
                            "buffer 2 of 3"),
            std::string::npos);
}

TEST_F(LedgerTest, NullSizesAreNotChecked) {
  connect();
  void* r = postRecv(&requests_[0], 2);
  ASSERT_TRUE(ledger_.beforeTest(r).known);
  ledger_.afterTest(r, ncclSuccess, 1, nullptr);
  expectNoLine();
}

TEST_F(LedgerTest, UnknownCommIsRule53) {
  connect();
  char stranger = 0;
  EXPECT_EQ(ledger_.beforePost(&stranger, PostKind::Send, 0, nullptr, "isend"), nullptr);
  EXPECT_NE(onlyLine().find("rule 53 GarbageHandlesRejected (caller): isend on"),
            std::string::npos);
}

TEST_F(LedgerTest, CommOfTheWrongKindIsRule53) {
  connect();
  EXPECT_EQ(ledger_.find(&recv_, CommKind::Send, "isend"), nullptr);
  EXPECT_NE(onlyLine().find("isend takes a sendComm, got a recvComm"), std::string::npos);
}

TEST_F(LedgerTest, MhandleOfAnotherCommIsRule54) {
  connect();
  void* mhandle = &recvMr_;  // registered on the recvComm
  ledger_.beforePost(&send_, PostKind::Send, 1, &mhandle, "isend");
  EXPECT_NE(onlyLine().find("rule 54 BadMhandlesRejected (caller): isend: buffer 0 has mhandle"),
            std::string::npos);
}

TEST_F(LedgerTest, DeregOfAnMhandleInUseIsRule27) {
  connect();
  void* r = postSend(&requests_[0]);
  ledger_.beforeDereg(sendComm_, &sendMr_);
  EXPECT_NE(
      onlyLine().find("rule 27 DeregMrReleases (caller): deregMr of mhandle #1 while 1 request(s)"),
      std::string::npos);
  complete(r, {100});
  ledger_.beforeDereg(sendComm_, &sendMr_);
  expectNoLine();
  ledger_.dropMr(sendComm_, &sendMr_);
  ledger_.beforeDereg(sendComm_, &sendMr_);
  EXPECT_NE(onlyLine().find("rule 54"), std::string::npos) << "deregistered twice";
}

TEST_F(LedgerTest, OneMhandleForTwoRegistrationsTakesTwoDeregs) {
  connect();
  EXPECT_EQ(ledger_.addMr(sendComm_, &sendMr_), 1u) << "a cache hit keeps the number";
  ledger_.beforeDereg(sendComm_, &sendMr_);
  ledger_.dropMr(sendComm_, &sendMr_);
  ledger_.beforeDereg(sendComm_, &sendMr_);
  ledger_.dropMr(sendComm_, &sendMr_);
  expectNoLine();
  ledger_.beforeDereg(sendComm_, &sendMr_);
  EXPECT_NE(onlyLine().find("rule 54"), std::string::npos);
}

TEST_F(LedgerTest, CloseWithRegistrationsIsRule27AndForgetsTheComm) {
  connect();
  postSend(&requests_[0]);
  EXPECT_NE(ledger_.close(&send_, CommKind::Send, "closeSend"), 0u);
  EXPECT_NE(onlyLine().find("rule 27 DeregMrReleases (caller): closeSend with 1 mhandle(s)"),
            std::string::npos);
  EXPECT_TRUE(ledger_.outstanding(Clock::now()).empty()) << "its requests are dropped";
  EXPECT_EQ(ledger_.find(&send_, CommKind::Send, "isend"), nullptr);
  EXPECT_NE(onlyLine().find("rule 53"), std::string::npos);
}

TEST_F(LedgerTest, IrecvConsumedOncePerCompletedReceive) {
  connect();
  void* r = postRecv(&requests_[0], 2);
  ledger_.consumed(&recv_, 2, r);
  EXPECT_NE(onlyLine().find("rule 37 IrecvConsumedAccepted (caller): irecvConsumed of request"),
            std::string::npos);
  complete(r, {1, 2});
  postRecv(r, 2);  // the plugin recycles the request before NCCL consumes it
  ledger_.consumed(&recv_, 2, r);
  expectNoLine();
  ledger_.consumed(&recv_, 2, r);
  EXPECT_NE(onlyLine().find("which test has not reported done yet"), std::string::npos);
}

TEST_F(LedgerTest, IrecvConsumedWithAnotherNIsRule37) {
  connect();
  complete(postRecv(&requests_[0], 2), {1, 2});
  ledger_.consumed(&recv_, 1, &requests_[0]);
  EXPECT_NE(onlyLine().find("irecvConsumed with n=1 for a receive posted with n=2"),
            std::string::npos);
}

TEST_F(LedgerTest, OutstandingListsEveryRequestOldestFirst) {
  connect();
  postRecv(&requests_[0]);
  postSend(&requests_[1], 7, 3);
  std::vector<Ledger::Outstanding> all = ledger_.outstanding(Clock::now());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_GE(all[0].ageSec, all[1].ageSec);
  EXPECT_NE(all[1].text.find("sendComm #2 (dev 0) | isend #2 [7 B tag 3] posted"),
            std::string::npos)
      << all[1].text;
  EXPECT_NE(all[1].text.find("never tested"), std::string::npos) << all[1].text;
}

}  // namespace
}  // namespace ncclnet::check
