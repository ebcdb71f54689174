// SPDX-License-Identifier: Apache-2.0
// Test kit: a channel read ends at its deadline, or at once when the peer
// has gone.
#include "ncclnet/testing/channel.hpp"

#include <gtest/gtest.h>

#include "ncclnet/testing/deadline.hpp"

namespace ncclnet::testing {
namespace {

TEST(Channel, ReceiveEndsAtItsDeadline) {
  Channel a, b;
  ASSERT_TRUE(Channel::makePair(&a, &b));
  char byte = 0;
  auto start = Clock::now();
  EXPECT_FALSE(a.receive(&byte, 1, 0.2));
  double took = secondsSince(start);
  EXPECT_GE(took, 0.19);
  EXPECT_LT(took, 5.0);
}

TEST(Channel, ReceiveEndsWhenThePeerCloses) {
  Channel a, b;
  ASSERT_TRUE(Channel::makePair(&a, &b));
  ASSERT_TRUE(b.send("xy", 2));
  b.close();
  char two[2];
  EXPECT_TRUE(a.receive(two, 2, 5));
  auto start = Clock::now();
  EXPECT_FALSE(a.receive(two, 1, 10));
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_FALSE(a.send("z", 1)) << "a send to a closed peer must fail, not raise SIGPIPE";
}

TEST(Deadline, PollUntilStopsAtTheDeadline) {
  int calls = 0;
  EXPECT_FALSE(pollUntil(
      Deadline(0.05),
      [&] {
        calls++;
        return false;
      },
      std::chrono::microseconds(1000)));
  EXPECT_GT(calls, 1);
  EXPECT_TRUE(pollUntil(Deadline(5), [&] { return ++calls > 10; }));
}

}  // namespace
}  // namespace ncclnet::testing
