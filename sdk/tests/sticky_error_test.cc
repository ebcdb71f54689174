// SPDX-License-Identifier: Apache-2.0
// The sticky comm error: the first failure wins, is logged once, and every
// later call returns its code without a new line, from any thread.
#include "ncclnet/sticky_error.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

using ncclnet::Failure;
using ncclnet::StickyError;

// Counts the WARN lines a Logger writes through NCCL's logger function.
std::atomic<int> gWarns{0};
std::string gLastLine;
void countingLogger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt,
                    ...) {
  if (level != NCCL_LOG_WARN) return;
  char line[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  gLastLine = line;
  gWarns++;
}

class StickyErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gWarns = 0;
    gLastLine.clear();
  }
  ncclnet::Logger log_{countingLogger, "NET/test"};
};

TEST_F(StickyErrorTest, StartsOk) {
  StickyError e;
  EXPECT_TRUE(e.ok());
  EXPECT_EQ(e.code(), ncclSuccess);
  EXPECT_EQ(e.reason(), "");
  EXPECT_FALSE(e.record(ncclSuccess, "not a failure"));
  EXPECT_TRUE(e.ok());
}

TEST_F(StickyErrorTest, FirstFailureWinsAndIsLoggedOnce) {
  StickyError e;
  EXPECT_EQ(e.fail(log_, "recvComm to peer", Failure::kPeerGone, "closed with %d bytes left", 12),
            ncclRemoteError);
  EXPECT_EQ(gWarns, 1);
  EXPECT_NE(gLastLine.find("recvComm to peer: closed with 12 bytes left"), std::string::npos)
      << gLastLine;
  // A later, different failure returns the first code and logs nothing.
  EXPECT_EQ(e.fail(log_, "recvComm to peer", Failure::kSystemCall, "poll failed"), ncclRemoteError);
  EXPECT_FALSE(e.record(ncclInternalError, "later"));
  EXPECT_EQ(gWarns, 1);
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_EQ(e.reason(), "closed with 12 bytes left");
}

TEST_F(StickyErrorTest, RecordLeavesTheLineToItsCaller) {
  StickyError e;
  EXPECT_TRUE(e.record(ncclSystemError, "IBV_EVENT_QP_FATAL"));
  EXPECT_EQ(gWarns, 0);
  EXPECT_EQ(e.code(), ncclSystemError);
  // fail() after a record: the recorded code, still no line.
  EXPECT_EQ(e.fail(log_, "comm", Failure::kPeerGone, "closed"), ncclSystemError);
  EXPECT_EQ(gWarns, 0);
  EXPECT_EQ(e.reason(), "IBV_EVENT_QP_FATAL");
}

TEST_F(StickyErrorTest, ConcurrentFailuresLogExactlyOnce) {
  for (int round = 0; round < 20; round++) {
    gWarns = 0;
    StickyError e;
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    const Failure kinds[] = {Failure::kPeerGone, Failure::kSystemCall, Failure::kInternal,
                             Failure::kTruncated};
    for (Failure kind : kinds) {
      threads.emplace_back([&, kind] {
        while (!go.load()) std::this_thread::yield();
        for (int i = 0; i < 100; i++) e.fail(log_, "comm", kind, "%s", ncclnet::failureName(kind));
      });
    }
    go = true;
    for (auto& t : threads) t.join();
    EXPECT_EQ(gWarns, 1);
    // The code and the reason are those of the same (first) failure.
    bool matched = false;
    for (Failure kind : kinds) {
      if (e.reason() == ncclnet::failureName(kind)) {
        matched = true;
        EXPECT_EQ(e.code(), ncclnet::resultOf(kind));
      }
    }
    EXPECT_TRUE(matched) << e.reason();
  }
}

}  // namespace
