// SPDX-License-Identifier: Apache-2.0
// sdk-ib: fatal async events become errors from the affected comms' next
// call, with exactly one log line each — never a hang; the others are INFO.
// Events are raised under the plugin through softverbs' test hook, or by
// what raises them on real hardware (a remote access error).
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "local_pair.hpp"

namespace ncclnet::ib::testing {
namespace {

int count(const std::vector<std::string>& lines, const std::string& needle) {
  int n = 0;
  for (const std::string& line : lines) n += line.find(needle) != std::string::npos;
  return n;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += "\n  " + line;
  return out;
}

// A posted receive with a registered buffer, on pair.recv.
struct PostedRecv {
  std::vector<char> bytes = std::vector<char>(8192);
  void* mh = nullptr;
  void* req = nullptr;
};

ncclResult_t postRecv(LocalPair& pair, PostedRecv* r) {
  Session& s = *pair.receiver;
  ncclResult_t res =
      s.net().regMr(pair.recv, r->bytes.data(), r->bytes.size(), NCCL_PTR_HOST, &r->mh);
  if (res != ncclSuccess) return res;
  void* data = r->bytes.data();
  size_t size = r->bytes.size();
  int tag = 0;
  return s.net().irecv(pair.recv, 1, &data, &size, &tag, &r->mh, nullptr, &r->req);
}

// One plugin instance (one context on softverbs0, one watcher) holding
// both ends of a connection.
class IbAsyncEvents : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    session_ = std::make_unique<Session>(GetParam());
    ASSERT_TRUE(session_->ok()) << session_->error();
    ASSERT_EQ(connectLocal(*session_, *session_, &pair_), ncclSuccess);
  }
  void TearDown() override {
    auto start = Clock::now();
    if (session_ && session_->ok()) closeLocal(&pair_);
    session_.reset();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << "closing took too long";
  }
  Session& net() { return *session_; }

  std::unique_ptr<Session> session_;
  LocalPair pair_;
};

TEST_P(IbAsyncEvents, DeviceFatalFailsEveryCommWithOneLine) {
  PostedRecv r;
  ASSERT_EQ(postRecv(pair_, &r), ncclSuccess);
  ASSERT_NE(r.req, nullptr);
  size_t mark = logMark();
  ASSERT_EQ(raiseAsyncEvent(IBV_EVENT_DEVICE_FATAL, 0), 0);
  // The receive waits for nothing that can still come: it fails.
  EXPECT_EQ(waitFor(net(), r.req, nullptr, 10), ncclSystemError);
  void* sreq = nullptr;
  EXPECT_EQ(net().net().isend(pair_.send, r.bytes.data(), 0, 0, nullptr, nullptr, &sreq),
            ncclSystemError);
  EXPECT_EQ(sreq, nullptr);
  std::vector<std::string> warnings = warningsSince(mark);
  EXPECT_EQ(count(warnings, "IBV_EVENT_DEVICE_FATAL on softverbs0: its 2 connection(s) fail"), 1)
      << joined(warnings);
  EXPECT_EQ(count(warnings, "Hint:"), 1) << joined(warnings);
  EXPECT_EQ(warnings.size(), 1u) << joined(warnings);
}

TEST_P(IbAsyncEvents, PortErrFailsTheConnectionsOnThePortUntilPortActive) {
  PostedRecv r;
  ASSERT_EQ(postRecv(pair_, &r), ncclSuccess);
  size_t mark = logMark();
  ASSERT_EQ(raiseAsyncEvent(IBV_EVENT_PORT_ERR, 1), 0);
  EXPECT_EQ(waitFor(net(), r.req, nullptr, 10), ncclSystemError);
  std::vector<std::string> warnings = warningsSince(mark);
  EXPECT_EQ(count(warnings, "IBV_EVENT_PORT_ERR on softverbs0 port 1: its 2 connection(s) fail"), 1)
      << joined(warnings);
  EXPECT_EQ(warnings.size(), 1u) << joined(warnings);
  // The link comes back: new connections work, the old ones stay failed.
  mark = logMark();
  ASSERT_EQ(raiseAsyncEvent(IBV_EVENT_PORT_ACTIVE, 1), 0);
  LocalPair fresh;
  ASSERT_EQ(connectLocal(net(), net(), &fresh), ncclSuccess);
  std::string why;
  EXPECT_EQ(transfer(fresh, 4096, 3, &why), ncclSuccess) << why;
  closeLocal(&fresh);
  EXPECT_TRUE(warningsSince(mark).empty()) << joined(warningsSince(mark));
  bool activeLogged = false;
  for (const LogLine& line : logSince(mark)) {
    activeLogged |=
        line.level == NCCL_LOG_INFO &&
        line.text.find("IBV_EVENT_PORT_ACTIVE on softverbs0 port 1") != std::string::npos;
  }
  EXPECT_TRUE(activeLogged);
}

TEST_P(IbAsyncEvents, RemoteAccessErrorIsOneLineOnEachSide) {
  PostedRecv r;
  ASSERT_EQ(postRecv(pair_, &r), ncclSuccess);
  ASSERT_EQ(net().net().deregMr(pair_.recv, r.mh), ncclSuccess);  // the CTS rkey is stale
  std::vector<char> src(4096);
  void* smh = nullptr;
  ASSERT_EQ(net().net().regMr(pair_.send, src.data(), src.size(), NCCL_PTR_HOST, &smh),
            ncclSuccess);
  size_t mark = logMark();
  void* sreq = nullptr;
  ASSERT_EQ(postSend(net(), pair_.send, src.data(), src.size(), 0, smh, &sreq, 10), ncclSuccess);
  EXPECT_EQ(waitFor(net(), sreq, nullptr, 10), ncclRemoteError);
  EXPECT_EQ(waitFor(net(), r.req, nullptr, 10), ncclRemoteError);
  std::vector<std::string> warnings = warningsSince(mark);
  // The responder learns of it through IBV_EVENT_QP_ACCESS_ERR, the
  // requester through its completion; the flushes that follow add nothing.
  EXPECT_EQ(count(warnings, "IBV_EVENT_QP_ACCESS_ERR on softverbs0 port 1, QP"), 1)
      << joined(warnings);
  EXPECT_EQ(count(warnings, "of the receive comm from"), 1) << joined(warnings);
  EXPECT_EQ(count(warnings, "remote access error"), 1) << joined(warnings);
  EXPECT_EQ(count(warnings, "lushed"), 0) << joined(warnings);
  EXPECT_EQ(warnings.size(), 2u) << joined(warnings);
  EXPECT_EQ(net().net().deregMr(pair_.send, smh), ncclSuccess);
}

TEST_P(IbAsyncEvents, NonFatalEventsAreInfoOnly) {
  size_t mark = logMark();
  ASSERT_EQ(raiseAsyncEvent(IBV_EVENT_LID_CHANGE, 1), 0);
  ASSERT_EQ(raiseAsyncEvent(IBV_EVENT_GID_CHANGE, 1), 0);
  // The comms keep working (and the watcher has seen the events by the
  // time the transfer is through, or soon after).
  std::string why;
  EXPECT_EQ(transfer(pair_, 1000, 7, &why), ncclSuccess) << why;
  auto deadline = Clock::now() + std::chrono::seconds(5);
  int infos = 0;
  while (infos < 2 && Clock::now() < deadline) {
    infos = 0;
    for (const LogLine& line : logSince(mark)) {
      infos += line.level == NCCL_LOG_INFO &&
               (line.text.find("IBV_EVENT_LID_CHANGE") != std::string::npos ||
                line.text.find("IBV_EVENT_GID_CHANGE") != std::string::npos);
    }
  }
  EXPECT_EQ(infos, 2);
  EXPECT_TRUE(warningsSince(mark).empty()) << joined(warningsSince(mark));
}

INSTANTIATE_TEST_SUITE_P(Abi, IbAsyncEvents, ::testing::Values(8, 11),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "V" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace ncclnet::ib::testing
