// SPDX-License-Identifier: Apache-2.0
// sdk-socket: when a send may report done. Its bytes must have left the
// plugin's queues: NCCL makes no further call on a comm whose sends all
// reported done, so bytes still queued then would never go out.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "harness.hpp"

namespace ncclnet::socket::testing {
namespace {

constexpr int kMessages = 32;       // NCCL's requests per comm
constexpr size_t kBytes = 1 << 20;  // all of it inline: 32 MiB on the control socket

struct InlineEnv {
  InlineEnv() { setenv("NCCL_SOCKET_INLINE", "1048576", 1); }
  ~InlineEnv() { unsetenv("NCCL_SOCKET_INLINE"); }
};

// 32 MiB of inline payload is more than loopback's socket buffers hold, so
// while the receiver reads nothing, some sends must stay not done.
TEST(SendCompletion, InlineSendWaitsUntilItsBytesLeaveTheQueue) {
  InlineEnv inlineEnv;
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  void* sc = nullptr;
  void* rc = nullptr;
  ASSERT_EQ(connectPair(s, &sc, &rc), ncclSuccess);

  std::vector<std::vector<uint8_t>> in(kMessages), out(kMessages);
  std::vector<void*> recvs(kMessages), sends(kMessages);
  for (int i = 0; i < kMessages; i++) {
    out[i].assign(kBytes, 0);
    void* data = out[i].data();
    size_t capacity = kBytes;
    int tag = 1;
    ASSERT_EQ(s.net().irecv(rc, 1, &data, &capacity, &tag, nullptr, nullptr, &recvs[i]),
              ncclSuccess);
    ASSERT_NE(recvs[i], nullptr);
  }
  for (int i = 0; i < kMessages; i++) {
    in[i].resize(kBytes);
    fillPattern(in[i].data(), kBytes, i);
    ASSERT_EQ(s.net().isend(sc, in[i].data(), kBytes, 1, nullptr, nullptr, &sends[i]), ncclSuccess);
    ASSERT_NE(sends[i], nullptr);
  }
  // Only the sender makes calls for a while: every send gets matched (the
  // clear-to-sends are out), but the receiver reads nothing.
  std::vector<int> sendDone(kMessages, 0);
  auto until = Clock::now() + std::chrono::milliseconds(300);
  while (Clock::now() < until) {
    for (int i = 0; i < kMessages; i++) {
      if (!sendDone[i]) {
        ASSERT_EQ(s.net().test(sends[i], &sendDone[i], nullptr), ncclSuccess);
      }
    }
  }
  int doneEarly = 0;
  for (int d : sendDone) doneEarly += d;
  EXPECT_LT(doneEarly, kMessages) << "every send reported done with megabytes still queued";

  // Now both sides: everything arrives, byte for byte.
  std::vector<int> recvDone(kMessages, 0);
  auto deadline = Clock::now() + std::chrono::seconds(30);
  int remaining = 2 * kMessages - doneEarly;
  while (remaining > 0 && Clock::now() < deadline) {
    for (int i = 0; i < kMessages; i++) {
      if (!sendDone[i]) {
        ASSERT_EQ(s.net().test(sends[i], &sendDone[i], nullptr), ncclSuccess);
        remaining -= sendDone[i];
      }
      if (!recvDone[i]) {
        int size = -1;
        ASSERT_EQ(s.net().test(recvs[i], &recvDone[i], &size), ncclSuccess);
        if (recvDone[i]) {
          EXPECT_EQ(size, static_cast<int>(kBytes));
          remaining--;
        }
      }
    }
  }
  ASSERT_EQ(remaining, 0) << "not everything completed within 30 s";
  for (int i = 0; i < kMessages; i++) EXPECT_EQ(checkPattern(out[i].data(), kBytes, i), "") << i;
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
  EXPECT_EQ(s.net().closeRecv(rc), ncclSuccess);
}

}  // namespace
}  // namespace ncclnet::socket::testing
