// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the control socket's send queue, headers copied and inline
// payloads sent in place, against a peer that reads slowly.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "connection_sockets.hpp"

namespace ncclnet::socket {
namespace {

struct CoreOnSocketpair {
  Fd peer;
  std::unique_ptr<ConnectionSockets> core;

  CoreOnSocketpair() {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
    // A small send buffer: a payload goes out over many partial sendmsg()
    // calls, each ending inside some range.
    int small = 4096;
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    peer = Fd(fds[1]);
    core = std::make_unique<ConnectionSockets>(Fd(fds[0]), std::vector<Fd>{}, Shape{}, true,
                                               Logger(nullptr, "test"), "core test");
  }

  // Flushes and reads until `want` bytes arrived or 30 s passed.
  std::vector<uint8_t> drain(size_t want) {
    std::vector<uint8_t> got;
    uint8_t buffer[1500];  // smaller than the socket buffer: many reads
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
      core->flushControl();
      ssize_t n = ::recv(peer.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n > 0) got.insert(got.end(), buffer, buffer + n);
    }
    return got;
  }
};

std::vector<uint8_t> pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; i++) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

// Every byte arrives once, in queueing order, whether it was copied or sent
// from where it lies, also when ranges are queued while earlier ones are
// half sent; a copied header may be overwritten at once.
TEST(ControlQueue, CopiedAndInPlaceRangesArriveInOrder) {
  CoreOnSocketpair pair;
  ASSERT_NE(pair.core, nullptr);
  ConnectionSockets& core = *pair.core;
  std::vector<uint8_t> first = pattern(100 << 10, 1), second = pattern(3, 2),
                       third = pattern(40 << 10, 3);
  std::vector<uint8_t> expected;
  auto copied = [&](uint8_t value, size_t size) {
    std::vector<uint8_t> header(size, value);
    core.queueControl(header.data(), header.size());
    expected.insert(expected.end(), header.begin(), header.end());
    std::memset(header.data(), 0xee, header.size());  // the queue holds its own copy
  };
  auto inPlace = [&](const std::vector<uint8_t>& payload) {
    core.queueControlInPlace(payload.data(), payload.size());
    expected.insert(expected.end(), payload.begin(), payload.end());
  };
  copied(0xa1, 32);
  inPlace(first);
  copied(0xa2, 32);
  copied(0xa3, 8);  // joins the range before it
  inPlace(second);
  core.flushControl();  // partly sent: the socket takes a few KiB
  EXPECT_LT(core.controlSent(), core.controlQueued());
  inPlace(third);
  copied(0xa4, 104);
  EXPECT_EQ(core.controlQueued(), expected.size());

  std::vector<uint8_t> got = pair.drain(expected.size());
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
  EXPECT_EQ(core.controlSent(), core.controlQueued());
  EXPECT_TRUE(core.health().ok());

  // Empty afterwards: what is queued next goes out alone.
  copied(0xa5, 16);
  got = pair.drain(16);
  EXPECT_EQ(got, std::vector<uint8_t>(16, 0xa5));
}

}  // namespace
}  // namespace ncclnet::socket
