// SPDX-License-Identifier: Apache-2.0
// Test kit: two sides in two children, and what runPair says of each.
#include "ncclnet/testing/process_pair.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "ncclnet/testing/deadline.hpp"
#include "ncclnet/testing/side_check.hpp"

namespace ncclnet::testing {
namespace {

TEST(ProcessPair, SidesTalkToEachOther) {
  std::string failed = runPair(
      [](Channel& peer) -> std::string {
        ROLE_CHECK(peer.sendValue(uint64_t{0x1234}), "send");
        uint64_t back = 0;
        ROLE_CHECK(peer.receiveValue(&back, 10), "no answer");
        ROLE_CHECK(back == 0x1235, "answer %llu", static_cast<unsigned long long>(back));
        return "";
      },
      [](Channel& peer) -> std::string {
        uint64_t value = 0;
        ROLE_CHECK(peer.receiveValue(&value, 10), "nothing came");
        ROLE_CHECK(peer.sendValue(value + 1), "send");
        return "";
      },
      20);
  EXPECT_EQ(failed, "");
}

TEST(ProcessPair, AFailingSideIsNamedWithWhatItSaid) {
  std::string failed = runPair([](Channel&) -> std::string { return ""; },
                               [](Channel&) -> std::string {
                                 ROLE_CHECK(1 + 1 == 3, "arithmetic is %s", "broken");
                                 return "";
                               },
                               20);
  EXPECT_NE(failed.find("second: "), std::string::npos) << failed;
  EXPECT_NE(failed.find("arithmetic is broken"), std::string::npos) << failed;
  EXPECT_EQ(failed.find("first"), std::string::npos) << failed;
}

TEST(ProcessPair, AHungSideIsKilledAndReportedStuck) {
  auto start = Clock::now();
  std::string failed = runPair(
      [](Channel&) -> std::string {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        return "";
      },
      [](Channel&) -> std::string { return ""; }, 0.5);
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_EQ(failed, "first: still running at its deadline: killed");
}

TEST(ProcessPair, ACrashedSideIsReportedWithItsSignal) {
  std::string failed = runPair(
      nullptr,
      [](Channel&) -> std::string {
        ::raise(SIGABRT);
        return "";
      },
      20);
  EXPECT_NE(failed.find("side: killed by signal 6"), std::string::npos) << failed;
}

}  // namespace
}  // namespace ncclnet::testing
