// SPDX-License-Identifier: Apache-2.0
// The one-sided bookkeeping without a plugin: handles are plain addresses
// here, as the ledger never follows them.
#include "rma_ledger.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ncclnet/abi/net_device.h"

namespace ncclnet::check {
namespace {

void quiet(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

class RmaLedgerTest : public ::testing::Test {
 protected:
  RmaLedgerTest() : reporter_(Logger(quiet, "NET/check"), false), ledger_(reporter_, "rma") {
    reporter_.setTap([this](const std::string& line) { lines_.push_back(line); });
  }

  // Two ranks, one context, two registrations.
  void connect(int maxRecvs = 1) {
    ledger_.addListen(&listen_, 0);
    ledger_.addColl(&coll_, &listen_, 2, 0, maxRecvs);
    ledger_.addContext(&ctx_, &coll_);
    ledger_.addMr(&coll_, &src_, 64, NCCL_PTR_HOST, 0);
    ledger_.addMr(&coll_, &dst_, 128, NCCL_PTR_HOST, 0);
  }
  // A put to `rank` that returned `res` and `request`.
  void put(uint32_t rank, ncclResult_t res, void* request, void* owner = nullptr) {
    RmaLedger::Post post = ledger_.beforeOp(owner ? owner : &ctx_, 0, rank, {&src_, &dst_});
    ledger_.afterOp(post, RmaOp::Put, res, request);
  }

  Reporter reporter_;
  RmaLedger ledger_;
  std::vector<std::string> lines_;
  char listen_, coll_, ctx_, src_, dst_;
  char requests_[128];
};

TEST_F(RmaLedgerTest, LimitIsPerPeer) {
  connect();
  for (int i = 0; i < 32; i++) put(0, ncclSuccess, &requests_[i]);
  put(0, ncclInternalError, nullptr);  // the 33rd to rank 0: allowed to refuse
  EXPECT_TRUE(lines_.empty());
  put(1, ncclInternalError, nullptr);  // rank 1 has none outstanding
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("rule 76 RmaRequestsReturned: iput returned 3 with 0 of 32"),
            std::string::npos)
      << lines_[0];
}

// A dead peer fails the next put with a remote (or system) error, which
// rule 78 asks for: no refusal.
TEST_F(RmaLedgerTest, ThePeerGoneIsNoRefusal) {
  connect();
  put(1, ncclRemoteError, nullptr);
  put(1, ncclSystemError, nullptr);
  EXPECT_TRUE(lines_.empty());
  put(1, ncclInvalidUsage, nullptr);
  EXPECT_EQ(lines_.size(), 1u);
}

TEST_F(RmaLedgerTest, DoneRequestsFreeTheQueue) {
  connect();
  for (int i = 0; i < 32; i++) put(0, ncclSuccess, &requests_[i]);
  ledger_.afterTest(&requests_[0], ncclSuccess, 0);  // not done yet
  EXPECT_EQ(ledger_.outstandingRequests(), 32);
  ledger_.afterTest(&requests_[0], ncclSuccess, 1);
  EXPECT_EQ(ledger_.outstandingRequests(), 31);
  put(0, ncclInternalError, nullptr);  // 31 outstanding: must be taken
  EXPECT_EQ(lines_.size(), 1u);
}

TEST_F(RmaLedgerTest, LimitScalesWithMaxRecvs) {
  connect(4);
  for (int i = 0; i < 100; i++) put(0, ncclSuccess, &requests_[i]);
  put(0, ncclInternalError, nullptr);
  EXPECT_EQ(lines_.size(), 1u);  // 100 of 128
}

TEST_F(RmaLedgerTest, MalformedCallsAreNotJudged) {
  connect();
  put(2, ncclInvalidArgument, nullptr);  // no rank 2 in a collComm of 2
  char stranger;
  RmaLedger::Post post = ledger_.beforeOp(&ctx_, 0, 0, {&src_, &stranger});
  ledger_.afterOp(post, RmaOp::Get, ncclInvalidArgument, nullptr);
  put(0, ncclSuccess, nullptr, &stranger);  // a context the checker never saw
  EXPECT_TRUE(lines_.empty());
}

TEST_F(RmaLedgerTest, TestOfUnknownRequestIsNotJudged) {
  connect();
  ledger_.afterTest(&requests_[5], ncclSuccess, 1);
  put(0, ncclSuccess, &requests_[0]);
  ledger_.afterTest(&requests_[0], ncclSuccess, 1);
  ledger_.afterTest(&requests_[0], ncclSuccess, 1);  // tested again: the caller's
  EXPECT_TRUE(lines_.empty());
  EXPECT_EQ(ledger_.outstandingRequests(), 0);
}

TEST_F(RmaLedgerTest, CloseForgetsAndListsRegistrations) {
  connect();
  put(0, ncclSuccess, &requests_[0]);
  std::string registrations;
  EXPECT_EQ(ledger_.closeColl(&coll_, &registrations), 1u);
  EXPECT_EQ(registrations,
            "rma collComm #1 (rank 0 of 2, dev 0): 2 symmetric registration(s), in order: m=1 64 "
            "B type 1 flags 0x0, m=2 128 B type 1 flags 0x0");
  EXPECT_EQ(ledger_.outstandingRequests(), 0);
  put(0, ncclSuccess, nullptr);  // the context went with its collComm
  EXPECT_TRUE(lines_.empty());
}

TEST_F(RmaLedgerTest, PropertiesOncePerProblem) {
  ledger_.checkProperties(0, NCCL_NET_DEVICE_GIN_PROXY, 6, NCCL_PTR_HOST, false);
  ledger_.checkProperties(0, NCCL_NET_DEVICE_GIN_PROXY, 6, NCCL_PTR_HOST, false);
  ledger_.checkProperties(0, NCCL_NET_DEVICE_GIN_PROXY, 8, NCCL_PTR_HOST, false);
  ledger_.checkProperties(0, NCCL_NET_DEVICE_GIN_GDAKI, 3, 0, true);  // device code: fine
  EXPECT_EQ(lines_.size(), 1u);
  ledger_.checkProperties(1, NCCL_NET_DEVICE_GIN_GDAKI, 1, NCCL_PTR_HOST, false);
  ledger_.checkProperties(2, NCCL_NET_DEVICE_UNPACK, 1, NCCL_PTR_HOST, true);
  EXPECT_EQ(lines_.size(), 3u);
}

}  // namespace
}  // namespace ncclnet::check
