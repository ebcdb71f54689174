// SPDX-License-Identifier: Apache-2.0
// sdk-socket: eager sends. A send of at most kEagerBytes leaves before its
// receive is posted, within kEagerCredit bytes not yet paired with one; the
// receiver holds it until the receive comes. What these tests pin down:
// such sends report done on their own, the credit bounds them, held
// messages fill receives by tag in posting order, a held message too large
// for its receive fails only that receive, and a sender's close loses none
// of them.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "harness.hpp"
#include "wire.hpp"

namespace ncclnet::socket::testing {
namespace {

struct Message {
  std::vector<uint8_t> bytes;
  void* request = nullptr;
};

Message postSendOf(Session& s, void* sc, size_t size, int tag, uint64_t seed) {
  Message m;
  m.bytes.resize(size);
  fillPattern(m.bytes.data(), size, seed);
  EXPECT_EQ(postSend(s, sc, m.bytes.data(), size, tag, nullptr, &m.request), ncclSuccess);
  return m;
}

Message postRecvOf(Session& s, void* rc, size_t capacity, int tag) {
  Message m;
  m.bytes.assign(capacity, 0xAB);
  void* data = m.bytes.data();
  EXPECT_EQ(postRecv(s, rc, 1, &data, &capacity, &tag, nullptr, &m.request), ncclSuccess);
  return m;
}

// test() for up to `seconds`; true once done (an error fails the test).
bool doneWithin(Session& s, void* request, double seconds) {
  auto start = Clock::now();
  int done = 0;
  do {
    EXPECT_EQ(s.net().test(request, &done, nullptr), ncclSuccess);
  } while (!done && secondsSince(start) < seconds);
  return done != 0;
}

// Tests `recv` (and `send`, when not null: in one process, a send that
// waits for its clear-to-send moves only when it is tested) until the
// receive is done; its result.
ncclResult_t receiveWhileSending(Session& s, void* recv, int* size, void* send) {
  auto start = Clock::now();
  int recvDone = 0, sendDone = send == nullptr;
  while (!recvDone && secondsSince(start) < 10) {
    ncclResult_t res = s.net().test(recv, &recvDone, size);
    if (res != ncclSuccess) return res;
    if (!sendDone && s.net().test(send, &sendDone, nullptr) != ncclSuccess) return ncclSystemError;
  }
  return recvDone ? ncclSuccess : ncclTimeout;
}

struct Pair {
  Session s;
  void* sc = nullptr;
  void* rc = nullptr;
  Pair() { EXPECT_EQ(connectPair(s, &sc, &rc), ncclSuccess); }
  ~Pair() {
    EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
    EXPECT_EQ(s.net().closeRecv(rc), ncclSuccess);
  }
};

TEST(Eager, SmallSendsCompleteBeforeTheirReceives) {
  Pair p;
  const std::vector<size_t> sizes = {0, 1, 100, 4096, 8192, kEagerBytes, 7};
  std::vector<Message> sends;
  for (size_t i = 0; i < sizes.size(); i++) sends.push_back(postSendOf(p.s, p.sc, sizes[i], 1, i));
  for (size_t i = 0; i < sends.size(); i++) {
    EXPECT_TRUE(doneWithin(p.s, sends[i].request, 5)) << "a " << sizes[i] << "-byte send";
  }
  // One byte above the eager limit: it waits for its receive.
  Message large = postSendOf(p.s, p.sc, kEagerBytes + 1, 1, 99);
  EXPECT_FALSE(doneWithin(p.s, large.request, 0.2));

  for (size_t i = 0; i <= sizes.size(); i++) {
    size_t size = i < sizes.size() ? sizes[i] : kEagerBytes + 1;
    Message in = postRecvOf(p.s, p.rc, kEagerBytes + 100, 1);
    int got = -1;
    void* sending = i < sizes.size() ? nullptr : large.request;
    ASSERT_EQ(receiveWhileSending(p.s, in.request, &got, sending), ncclSuccess) << "receive " << i;
    EXPECT_EQ(got, static_cast<int>(size));
    EXPECT_EQ(checkPattern(in.bytes.data(), size, i < sizes.size() ? i : 99), "") << i;
  }
}

TEST(Eager, CreditBoundsTheBytesAheadOfTheReceives) {
  Pair p;
  constexpr int kSends = 40;
  constexpr int kCreditInSends = static_cast<int>(kEagerCredit / kEagerBytes);
  static_assert(kSends > kCreditInSends);
  std::vector<Message> sends;
  for (int i = 0; i < kSends; i++) sends.push_back(postSendOf(p.s, p.sc, kEagerBytes, 1, i));
  int done = 0;
  for (Message& m : sends) done += doneWithin(p.s, m.request, 0.05) ? 1 : 0;
  EXPECT_EQ(done, kCreditInSends);

  // The sends beyond the credit wait for their clear-to-sends, and each
  // completes before its receive.
  for (int i = 0; i < kSends; i++) {
    Message in = postRecvOf(p.s, p.rc, kEagerBytes, 1);
    void* sending = i < kCreditInSends ? nullptr : sends[i].request;
    ASSERT_EQ(receiveWhileSending(p.s, in.request, nullptr, sending), ncclSuccess) << i;
    EXPECT_EQ(checkPattern(in.bytes.data(), kEagerBytes, i), "") << i;
  }
}

// NCCL's LL protocol sends many tiny messages: the message count bounds
// them too, and each held one costs its own size.
TEST(Eager, TinyMessagesAreBoundedByCount) {
  Pair p;
  constexpr int kSends = static_cast<int>(kEagerMessages) + 40;
  // Tested as they go (an eager send's request is free once reported).
  std::vector<Message> sends;
  int done = 0;
  for (int i = 0; i < kSends; i++) {
    sends.push_back(postSendOf(p.s, p.sc, i % 9, 1, i));
    done += doneWithin(p.s, sends.back().request, 0.01) ? 1 : 0;
  }
  EXPECT_EQ(done, static_cast<int>(kEagerMessages));
  for (int i = 0; i < kSends; i++) {
    Message in = postRecvOf(p.s, p.rc, 64, 1);
    int got = -1;
    void* sending = i < static_cast<int>(kEagerMessages) ? nullptr : sends[i].request;
    ASSERT_EQ(receiveWhileSending(p.s, in.request, &got, sending), ncclSuccess) << i;
    EXPECT_EQ(got, i % 9);
    EXPECT_EQ(checkPattern(in.bytes.data(), i % 9, i), "") << i;
  }
}

// Sends of two tags, all held before any receive: each grouped receive takes
// the oldest held message of each buffer's tag.
TEST(Eager, HeldMessagesFillGroupedReceivesByTag) {
  Pair p;
  constexpr int kA = 3, kB = 5;
  // Posting order: A0 B0 A1 B1 A2.
  std::vector<Message> sends;
  sends.push_back(postSendOf(p.s, p.sc, 100, kA, 10));
  sends.push_back(postSendOf(p.s, p.sc, 200, kB, 20));
  sends.push_back(postSendOf(p.s, p.sc, 300, kA, 11));
  sends.push_back(postSendOf(p.s, p.sc, 400, kB, 21));
  sends.push_back(postSendOf(p.s, p.sc, 500, kA, 12));
  for (Message& m : sends) ASSERT_TRUE(doneWithin(p.s, m.request, 5));

  struct Expect {
    int tag;
    size_t size;
    uint64_t seed;
  };
  auto receive = [&](std::vector<Expect> expect) {
    int n = static_cast<int>(expect.size());
    std::vector<std::vector<uint8_t>> buffers(n, std::vector<uint8_t>(1000, 0xAB));
    void* data[kMaxRecvs];
    size_t sizes[kMaxRecvs];
    int tags[kMaxRecvs];
    for (int i = 0; i < n; i++) {
      data[i] = buffers[i].data();
      sizes[i] = 1000;
      tags[i] = expect[i].tag;
    }
    void* request = nullptr;
    ASSERT_EQ(postRecv(p.s, p.rc, n, data, sizes, tags, nullptr, &request), ncclSuccess);
    int got[kMaxRecvs] = {};
    ASSERT_EQ(waitFor(p.s, request, got, 10), ncclSuccess);
    for (int i = 0; i < n; i++) {
      EXPECT_EQ(got[i], static_cast<int>(expect[i].size)) << "buffer " << i;
      EXPECT_EQ(checkPattern(buffers[i].data(), expect[i].size, expect[i].seed), "") << i;
    }
  };
  receive({{kB, 200, 20}, {kA, 100, 10}});
  receive({{kA, 300, 11}, {kB, 400, 21}});
  receive({{kA, 500, 12}});
  // And a receive posted before its send still pairs as ever.
  Message in = postRecvOf(p.s, p.rc, 1000, kB);
  Message late = postSendOf(p.s, p.sc, 600, kB, 22);
  int got = -1;
  ASSERT_EQ(waitFor(p.s, in.request, &got, 10), ncclSuccess);
  EXPECT_EQ(got, 600);
  EXPECT_EQ(checkPattern(in.bytes.data(), 600, 22), "");
  EXPECT_EQ(waitFor(p.s, late.request, nullptr, 10), ncclSuccess);
}

// A small send that left before its receive was posted cannot be refused:
// the receive fails as truncated, writes nothing, and the comm goes on.
TEST(Eager, HeldMessageTooLargeFailsOnlyItsReceive) {
  Pair p;
  Message out = postSendOf(p.s, p.sc, 2000, 1, 1);
  ASSERT_TRUE(doneWithin(p.s, out.request, 5));
  Message in = postRecvOf(p.s, p.rc, 1000, 1);
  int got = -1;
  EXPECT_EQ(waitFor(p.s, in.request, &got, 10), ncclInvalidUsage);
  for (uint8_t byte : in.bytes) ASSERT_EQ(byte, 0xAB);

  Message next = postSendOf(p.s, p.sc, 500, 1, 2);
  Message into = postRecvOf(p.s, p.rc, 1000, 1);
  ASSERT_EQ(waitFor(p.s, into.request, &got, 10), ncclSuccess);
  EXPECT_EQ(got, 500);
  EXPECT_EQ(checkPattern(into.bytes.data(), 500, 2), "");
  EXPECT_EQ(waitFor(p.s, next.request, nullptr, 10), ncclSuccess);
}

// The sender's sends all report done, it closes its comm, and only then
// does the receiver post receives (and announce each with a clear-to-send,
// which now reaches a closed comm). Every message arrives; a receive
// posted after the last one fails instead of waiting.
TEST(EagerClose, MessagesOutliveTheSendersClose) {
  constexpr int kLarge = 31;  // of kEagerBytes: more than loopback's receive window
  constexpr int kSmall = 8;   // of 1000 B
  ChildProcess child([](Channel& parent) {
    Session s;
    CHILD_CHECK(s.ok());
    void* sc = nullptr;
    CHILD_CHECK(receiveHandleAndConnect(s, parent, &sc) == ncclSuccess);
    std::vector<std::vector<uint8_t>> out;
    std::vector<void*> requests;
    for (int i = 0; i < kLarge + kSmall; i++) {
      out.emplace_back(i < kLarge ? kEagerBytes : 1000);
      fillPattern(out.back().data(), out.back().size(), i);
      void* request = nullptr;
      CHILD_CHECK(postSend(s, sc, out.back().data(), out.back().size(), 1, nullptr, &request) ==
                  ncclSuccess);
      requests.push_back(request);
    }
    for (void* request : requests) CHILD_CHECK(waitFor(s, request, nullptr, 10) == ncclSuccess);
    CHILD_CHECK(s.net().closeSend(sc) == ncclSuccess);
    char closed = 1;
    CHILD_CHECK(parent.send(&closed, 1));
    char finished = 0;
    CHILD_CHECK(parent.receive(&finished, 1));
    return 0;
  });
  ASSERT_TRUE(child.started());
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  void* rc = nullptr;
  ASSERT_EQ(listenAndAccept(s, child.channel(), &rc), ncclSuccess);
  char closed = 0;
  ASSERT_TRUE(child.channel().receive(&closed, 1));
  for (int i = 0; i < kLarge + kSmall; i++) {
    Message in = postRecvOf(s, rc, kEagerBytes, 1);
    int got = -1;
    ASSERT_EQ(waitFor(s, in.request, &got, 10), ncclSuccess) << "receive " << i;
    size_t size = i < kLarge ? kEagerBytes : 1000;
    EXPECT_EQ(got, static_cast<int>(size));
    EXPECT_EQ(checkPattern(in.bytes.data(), size, i), "") << i;
  }
  Message extra = postRecvOf(s, rc, 1000, 1);
  auto start = Clock::now();
  ncclResult_t res =
      extra.request == nullptr ? ncclRemoteError : waitFor(s, extra.request, nullptr, 10);
  EXPECT_EQ(res, ncclRemoteError);
  EXPECT_LT(secondsSince(start), 5.0);
  char finished = 1;
  EXPECT_TRUE(child.channel().send(&finished, 1));
  EXPECT_TRUE(child.wait(30).succeeded());
  EXPECT_EQ(s.net().closeRecv(rc), ncclSuccess);
}

}  // namespace
}  // namespace ncclnet::socket::testing
