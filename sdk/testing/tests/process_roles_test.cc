// SPDX-License-Identifier: Apache-2.0
// Test kit: two roles in two children, and what runRoles says of each.
#include "ncclnet/testing/process_roles.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "ncclnet/testing/deadline.hpp"
#include "ncclnet/testing/role_check.hpp"

namespace ncclnet::testing {
namespace {

TEST(ProcessRoles, RolesTalkToEachOther) {
  std::string failed = runRoles(
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

TEST(ProcessRoles, AFailingRoleIsNamedWithWhatItSaid) {
  std::string failed = runRoles([](Channel&) -> std::string { return ""; },
                                [](Channel&) -> std::string {
                                  ROLE_CHECK(1 + 1 == 3, "arithmetic is %s", "broken");
                                  return "";
                                },
                                20);
  EXPECT_NE(failed.find("second role: "), std::string::npos) << failed;
  EXPECT_NE(failed.find("arithmetic is broken"), std::string::npos) << failed;
  EXPECT_EQ(failed.find("first role"), std::string::npos) << failed;
}

TEST(ProcessRoles, AHungRoleIsKilledAndReportedStuck) {
  auto start = Clock::now();
  std::string failed = runRoles(
      [](Channel&) -> std::string {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        return "";
      },
      [](Channel&) -> std::string { return ""; }, 0.5);
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_EQ(failed, "first role: still running at its deadline: killed");
}

TEST(ProcessRoles, ACrashedRoleIsReportedWithItsSignal) {
  std::string failed = runRoles(
      nullptr,
      [](Channel&) -> std::string {
        ::raise(SIGABRT);
        return "";
      },
      20);
  EXPECT_EQ(failed, "role: killed by signal 6");
}

}  // namespace
}  // namespace ncclnet::testing
