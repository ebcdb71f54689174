// SPDX-License-Identifier: Apache-2.0
// sdk-socket: a closed send comm's control socket stays open for its
// receiver (closing_sockets.hpp): the receiver reads every byte and then
// the end of the stream, may still write, and the socket goes once the
// receiver closed its end.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>

#include "closing_sockets.hpp"

namespace ncclnet::socket {
namespace {

TEST(ClosingSockets, KeepsTheSocketUntilTheReceiverCloses) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
  Fd receiver(fds[1]);
  const char last[] = "the last eager bytes";
  ASSERT_EQ(::send(fds[0], last, sizeof(last), 0), static_cast<ssize_t>(sizeof(last)));

  ClosingSockets closing;
  closing.park(Fd(fds[0]));
  EXPECT_EQ(closing.parked(), 1u);

  // The receiver gets the bytes, then the end of the stream, and its late
  // frames are taken (a closed socket would answer them with a reset).
  char got[sizeof(last)] = {};
  ASSERT_EQ(::recv(receiver.get(), got, sizeof(got), 0), static_cast<ssize_t>(sizeof(got)));
  EXPECT_STREQ(got, last);
  EXPECT_EQ(::recv(receiver.get(), got, sizeof(got), 0), 0);
  const char frame[104] = {};
  EXPECT_EQ(::send(receiver.get(), frame, sizeof(frame), MSG_NOSIGNAL),
            static_cast<ssize_t>(sizeof(frame)));
  closing.sweep();
  EXPECT_EQ(closing.parked(), 1u) << "let go of while its receiver was still open";

  receiver.reset();
  closing.sweep();
  EXPECT_EQ(closing.parked(), 0u) << "kept after its receiver closed";
}

TEST(ClosingSockets, ParkingManySweepsNowAndThen) {
  ClosingSockets closing;
  std::vector<Fd> receivers;
  for (int i = 0; i < 40; i++) {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
    ::close(fds[1]);  // every receiver already gone
    closing.park(Fd(fds[0]));
  }
  // Sweeps ran as the list doubled, so fewer than all 40 are still there,
  // and an explicit sweep lets the rest go.
  EXPECT_LT(closing.parked(), 40u);
  closing.sweep();
  EXPECT_EQ(closing.parked(), 0u);
}

}  // namespace
}  // namespace ncclnet::socket
