// SPDX-License-Identifier: Apache-2.0
// sdk-socket: two-process loopback tests. A forked child and the test
// process exchange the 128-byte listen handle over a pipe; each side loads
// the plugin through the SDK host Loader, as NCCL would.
#include <gtest/gtest.h>

#include <thread>

#include "harness.hpp"
#include "wire.hpp"

namespace ncclnet::socket::testing {
namespace {

constexpr int kTag = 7;

struct Buffer {
  std::vector<uint8_t> bytes;
  void* mhandle = nullptr;
};

// The receiving side's setup in a child: listen, hand the handle to the
// parent, accept.
int childAccept(Session& s, Channel& parent, void** recvComm) {
  CHILD_CHECK(s.ok());
  CHILD_CHECK(listenAndAccept(s, parent, recvComm) == ncclSuccess);
  return 0;
}

// The test's end of a connection to a child that listens (childAccept).
::testing::AssertionResult connectToChild(ChildProcess& child, Session& s, void** sendComm) {
  if (!child.started()) return ::testing::AssertionFailure() << "the child did not start";
  if (!s.ok()) return ::testing::AssertionFailure() << s.error();
  ncclResult_t res = receiveHandleAndConnect(s, child.channel(), sendComm);
  if (res != ncclSuccess) return ::testing::AssertionFailure() << "connect returned " << res;
  return ::testing::AssertionSuccess();
}

const std::vector<size_t> kSizes = {
    0,    1,     7,     8,     127,     128,           129,           4095,    4096,
    4097, 65535, 65536, 65537, 1 << 20, (1 << 20) + 3, (4 << 20) + 5, 64 << 20};
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xEE;
constexpr uint8_t kUntouched = 0xAB;

class Transfer : public ::testing::TestWithParam<int> {};

// Every size from 0 B to 64 MiB in flight at once; every byte checked, and
// nothing written past a message.
TEST_P(Transfer, EverySizeEveryByte) {
  int version = GetParam();
  ChildProcess child([version](Channel& parent) {
    Session s(version);
    void* rc = nullptr;
    if (childAccept(s, parent, &rc) != 0) return 1;
    std::vector<Buffer> buffers(kSizes.size());
    std::vector<void*> requests(kSizes.size());
    for (size_t i = 0; i < kSizes.size(); i++) {
      Buffer& b = buffers[i];
      b.bytes.assign(kSizes[i] + kGuard, kGuardByte);
      CHILD_CHECK(s.net().regMr(rc, b.bytes.data(), b.bytes.size(), NCCL_PTR_HOST, &b.mhandle) ==
                  ncclSuccess);
      void* data = b.bytes.data();
      size_t capacity = kSizes[i] + kGuard / 2;  // larger than the message: allowed
      int tag = kTag;
      CHILD_CHECK(s.net().irecv(rc, 1, &data, &capacity, &tag, &b.mhandle, nullptr, &requests[i]) ==
                  ncclSuccess);
      CHILD_CHECK(requests[i] != nullptr);
    }
    for (size_t i = 0; i < kSizes.size(); i++) {
      int size = -1;
      CHILD_CHECK(waitFor(s, requests[i], &size, 60) == ncclSuccess);
      CHILD_CHECK(size == static_cast<int>(kSizes[i]));
      CHILD_CHECK(checkPattern(buffers[i].bytes.data(), kSizes[i], i).empty());
      for (size_t g = kSizes[i]; g < buffers[i].bytes.size(); g++) {
        CHILD_CHECK(buffers[i].bytes[g] == kGuardByte);
      }
    }
    for (Buffer& b : buffers) CHILD_CHECK(s.net().deregMr(rc, b.mhandle) == ncclSuccess);
    CHILD_CHECK(s.net().closeRecv(rc) == ncclSuccess);
    return 0;
  });
  ASSERT_TRUE(child.started());
  Session s(version);
  ASSERT_TRUE(s.ok()) << s.error();
  if (version != 0) {
    ASSERT_EQ(s.version(), version);
  }
  void* sc = nullptr;
  ASSERT_EQ(receiveHandleAndConnect(s, child.channel(), &sc), ncclSuccess);
  std::vector<Buffer> buffers(kSizes.size());
  std::vector<void*> requests(kSizes.size());
  for (size_t i = 0; i < kSizes.size(); i++) {
    Buffer& b = buffers[i];
    b.bytes.resize(kSizes[i] + 1);
    fillPattern(b.bytes.data(), kSizes[i], i);
    ASSERT_EQ(s.net().regMr(sc, b.bytes.data(), b.bytes.size(), NCCL_PTR_HOST, &b.mhandle),
              ncclSuccess);
    while (requests[i] == nullptr) {
      ASSERT_EQ(
          s.net().isend(sc, b.bytes.data(), kSizes[i], kTag, b.mhandle, nullptr, &requests[i]),
          ncclSuccess);
    }
  }
  for (size_t i = 0; i < kSizes.size(); i++) {
    int size = -1;
    ASSERT_EQ(waitFor(s, requests[i], &size, 60), ncclSuccess)
        << "message " << i << " of " << kSizes[i] << " bytes";
    EXPECT_EQ(size, static_cast<int>(kSizes[i]));
  }
  ExitStatus status = child.wait(60);
  EXPECT_TRUE(status.succeeded()) << "the receiving child " << status.describe()
                                  << " (see its stderr)";
  for (Buffer& b : buffers) EXPECT_EQ(s.net().deregMr(sc, b.mhandle), ncclSuccess);
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
}

INSTANTIATE_TEST_SUITE_P(Abi, Transfer, ::testing::Values(0, 11, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 0 ? std::string("Newest")
                                                  : "V" + std::to_string(info.param);
                         });

// A send larger than its receive buffer fails on both sides with
// ncclInvalidUsage, writes nothing, and leaves the comm usable. A small one
// leaves before it sees its receive (eagerly): its send cannot be refused,
// only the receive fails.
TEST(Truncation, BothSidesFailNothingWritten) {
  struct Case {
    size_t capacity, sent;
  };
  static const Case kCases[] = {{1000, 2000}, {20000, 40000}, {4 << 20, 8 << 20}, {500, 500}};
  auto senderFails = [](const Case& c) { return c.sent > c.capacity && c.sent > kEagerBytes; };
  ChildProcess child([](Channel& parent) {
    Session s;
    void* rc = nullptr;
    if (childAccept(s, parent, &rc) != 0) return 1;
    std::vector<std::vector<uint8_t>> buffers;
    std::vector<void*> requests;
    for (const Case& c : kCases) {
      buffers.emplace_back(c.capacity + 4096, kUntouched);
      void* mh = nullptr;
      CHILD_CHECK(s.net().regMr(rc, buffers.back().data(), buffers.back().size(), NCCL_PTR_HOST,
                                &mh) == ncclSuccess);
      void* data = buffers.back().data();
      size_t capacity = c.capacity;
      int tag = kTag;
      void* request = nullptr;
      CHILD_CHECK(s.net().irecv(rc, 1, &data, &capacity, &tag, &mh, nullptr, &request) ==
                  ncclSuccess);
      requests.push_back(request);
    }
    // The sends are posted once the clear-to-sends are out: the large ones
    // are refused by their sender.
    char posted = 1;
    CHILD_CHECK(parent.send(&posted, 1));
    for (size_t i = 0; i < requests.size(); i++) {
      int size = -1;
      ncclResult_t res = waitFor(s, requests[i], &size, 30);
      CHILD_CHECK(res != ncclTimeout);
      if (kCases[i].sent > kCases[i].capacity) {
        CHILD_CHECK(res == ncclInvalidUsage);
        for (uint8_t byte : buffers[i]) CHILD_CHECK(byte == kUntouched);
      } else {
        CHILD_CHECK(res == ncclSuccess);
        CHILD_CHECK(size == static_cast<int>(kCases[i].sent));
        CHILD_CHECK(checkPattern(buffers[i].data(), kCases[i].sent, i).empty());
      }
    }
    CHILD_CHECK(s.net().closeRecv(rc) == ncclSuccess);
    return 0;
  });
  Session s;
  void* sc = nullptr;
  ASSERT_TRUE(connectToChild(child, s, &sc));
  char posted = 0;
  ASSERT_TRUE(child.channel().receive(&posted, 1));
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<void*> requests;
  for (size_t i = 0; i < std::size(kCases); i++) {
    buffers.emplace_back(kCases[i].sent);
    fillPattern(buffers.back().data(), kCases[i].sent, i);
    void* request = nullptr;
    ASSERT_EQ(
        s.net().isend(sc, buffers.back().data(), kCases[i].sent, kTag, nullptr, nullptr, &request),
        ncclSuccess);
    ASSERT_NE(request, nullptr);
    requests.push_back(request);
  }
  for (size_t i = 0; i < requests.size(); i++) {
    int size = -1;
    ncclResult_t res = waitFor(s, requests[i], &size, 30);
    ASSERT_NE(res, ncclTimeout);
    EXPECT_EQ(res, senderFails(kCases[i]) ? ncclInvalidUsage : ncclSuccess) << "send " << i;
  }
  EXPECT_TRUE(child.wait(30).succeeded());
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
}

// Grouped receives of 8 buffers, three outstanding at once: each send lands
// in the oldest receive, in the buffer whose tag matches.
TEST(GroupedRecv, TagsRouteIntoOldestReceive) {
  constexpr int kGroups = 3;
  constexpr int kN = 8;
  auto capacityOf = [](int slot) { return static_cast<size_t>(slot + 1) * 50000; };
  auto sizeOf = [&](int group, int slot) {
    return group == 1 && slot == 3 ? size_t{0} : capacityOf(slot) - 7 * group;
  };
  auto seedOf = [](int group, int slot) { return static_cast<uint64_t>(group * 100 + slot); };
  ChildProcess child([&](Channel& parent) {
    Session s;
    void* rc = nullptr;
    if (childAccept(s, parent, &rc) != 0) return 1;
    std::vector<std::vector<uint8_t>> buffers(kGroups * kN);
    std::vector<void*> requests(kGroups);
    for (int g = 0; g < kGroups; g++) {
      void* data[kN];
      size_t sizes[kN];
      int tags[kN];
      void* mhandles[kN] = {};
      for (int i = 0; i < kN; i++) {
        auto& b = buffers[g * kN + i];
        b.assign(capacityOf(i), 0);
        data[i] = b.data();
        sizes[i] = b.size();
        tags[i] = 100 + i;
      }
      CHILD_CHECK(s.net().irecv(rc, kN, data, sizes, tags, mhandles, nullptr, &requests[g]) ==
                  ncclSuccess);
      CHILD_CHECK(requests[g] != nullptr);
    }
    for (int g = 0; g < kGroups; g++) {
      int sizes[64] = {};
      CHILD_CHECK(waitFor(s, requests[g], sizes, 30) == ncclSuccess);
      for (int i = 0; i < kN; i++) {
        CHILD_CHECK(sizes[i] == static_cast<int>(sizeOf(g, i)));
        CHILD_CHECK(checkPattern(buffers[g * kN + i].data(), sizeOf(g, i), seedOf(g, i)).empty());
      }
    }
    CHILD_CHECK(s.net().closeRecv(rc) == ncclSuccess);
    return 0;
  });
  Session s;
  void* sc = nullptr;
  ASSERT_TRUE(connectToChild(child, s, &sc));
  // Tags go out in a different order in every group.
  const int kOrder[kGroups][kN] = {
      {7, 2, 0, 5, 1, 6, 3, 4}, {0, 1, 2, 3, 4, 5, 6, 7}, {3, 7, 6, 5, 4, 2, 1, 0}};
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<void*> requests;
  for (int g = 0; g < kGroups; g++) {
    for (int k = 0; k < kN; k++) {
      int slot = kOrder[g][k];
      buffers.emplace_back(sizeOf(g, slot) + 1);
      fillPattern(buffers.back().data(), sizeOf(g, slot), seedOf(g, slot));
      void* request = nullptr;
      ASSERT_EQ(s.net().isend(sc, buffers.back().data(), sizeOf(g, slot), 100 + slot, nullptr,
                              nullptr, &request),
                ncclSuccess);
      ASSERT_NE(request, nullptr);
      requests.push_back(request);
    }
  }
  for (void* request : requests) {
    int size = -1;
    ASSERT_EQ(waitFor(s, request, &size, 30), ncclSuccess);
  }
  EXPECT_TRUE(child.wait(30).succeeded());
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
}

// Requests are posted until the plugin answers NULL (32 receives, 32 x 8
// sends in flight), then drained while new ones are posted; order and
// content survive.
TEST(BackPressure, PostUntilNullThenDrain) {
  constexpr int kTotal = 300;
  constexpr int kMaxSends = NCCL_NET_MAX_REQUESTS * 8;
  auto sizeOf = [](int k) { return k % 5 == 0 ? size_t{200000} : size_t(1000 + k); };
  ChildProcess child([&](Channel& parent) {
    Session s;
    void* rc = nullptr;
    if (childAccept(s, parent, &rc) != 0) return 1;
    std::vector<std::vector<uint8_t>> buffers(kTotal);
    std::vector<std::pair<int, void*>> inFlight;  // (message, request), oldest first
    int posted = 0;
    auto post = [&]() -> ncclResult_t {
      auto& b = buffers[posted];
      b.assign(sizeOf(posted), 0);
      void* data = b.data();
      size_t size = b.size();
      int tag = kTag;
      void* mh = nullptr;
      void* request = nullptr;
      ncclResult_t res = s.net().irecv(rc, 1, &data, &size, &tag, &mh, nullptr, &request);
      if (res == ncclSuccess && request != nullptr) inFlight.emplace_back(posted++, request);
      return res;
    };
    while (posted < kTotal) {
      size_t before = inFlight.size();
      CHILD_CHECK(post() == ncclSuccess);
      if (inFlight.size() == before) break;  // NULL: back-pressure
    }
    CHILD_CHECK(posted == NCCL_NET_MAX_REQUESTS);
    for (int received = 0; received < kTotal; received++) {
      CHILD_CHECK(!inFlight.empty());
      auto [message, request] = inFlight.front();
      inFlight.erase(inFlight.begin());
      int size = -1;
      CHILD_CHECK(waitFor(s, request, &size, 30) == ncclSuccess);
      CHILD_CHECK(message == received);
      CHILD_CHECK(size == static_cast<int>(sizeOf(message)));
      CHILD_CHECK(checkPattern(buffers[message].data(), sizeOf(message), message).empty());
      std::vector<uint8_t>().swap(buffers[message]);
      if (posted < kTotal) CHILD_CHECK(post() == ncclSuccess);
    }
    CHILD_CHECK(s.net().closeRecv(rc) == ncclSuccess);
    return 0;
  });
  Session s;
  void* sc = nullptr;
  ASSERT_TRUE(connectToChild(child, s, &sc));
  std::vector<std::vector<uint8_t>> buffers(kTotal);
  for (int k = 0; k < kTotal; k++) {
    buffers[k].resize(sizeOf(k));
    fillPattern(buffers[k].data(), sizeOf(k), k);
  }
  std::vector<void*> inFlight;
  int posted = 0;
  for (;;) {
    void* request = nullptr;
    ASSERT_EQ(
        s.net().isend(sc, buffers[posted].data(), sizeOf(posted), kTag, nullptr, nullptr, &request),
        ncclSuccess);
    if (request == nullptr) break;
    inFlight.push_back(request);
    posted++;
  }
  EXPECT_EQ(posted, kMaxSends);
  size_t next = 0;
  while (next < inFlight.size()) {
    int size = -1;
    ASSERT_EQ(waitFor(s, inFlight[next], &size, 30), ncclSuccess) << "send " << next;
    next++;
    while (posted < kTotal) {
      void* request = nullptr;
      ASSERT_EQ(s.net().isend(sc, buffers[posted].data(), sizeOf(posted), kTag, nullptr, nullptr,
                              &request),
                ncclSuccess);
      if (request == nullptr) break;
      inFlight.push_back(request);
      posted++;
    }
  }
  EXPECT_EQ(posted, kTotal);
  EXPECT_TRUE(child.wait(30).succeeded());
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
}

// The sender dies mid-transfer: the receiver's test() fails within seconds.
TEST(PeerDeath, ReceiverSeesSenderDie) {
  constexpr size_t kSize = 16 << 20;
  // The parent listens here, so the handle goes the other way.
  ChildProcess child([](Channel& parent) {
    Session s;
    CHILD_CHECK(s.ok());
    void* sc = nullptr;
    CHILD_CHECK(receiveHandleAndConnect(s, parent, &sc) == ncclSuccess);
    std::vector<uint8_t> data(kSize, 0x5A);
    for (;;) {  // until killed
      void* request = nullptr;
      CHILD_CHECK(s.net().isend(sc, data.data(), kSize, kTag, nullptr, nullptr, &request) ==
                  ncclSuccess);
      if (request == nullptr) continue;
      CHILD_CHECK(waitFor(s, request, nullptr, 60) == ncclSuccess);
    }
  });
  ASSERT_TRUE(child.started());
  Session s;
  ASSERT_TRUE(s.ok()) << s.error();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = nullptr;
  ASSERT_EQ(listenOn(s, handle, &lc), ncclSuccess);
  ASSERT_TRUE(child.channel().send(handle, sizeof(handle)));
  void* rc = nullptr;
  ASSERT_EQ(acceptFrom(s, lc, &rc), ncclSuccess);
  std::vector<uint8_t> buffer(kSize);
  auto post = [&]() {
    void* data = buffer.data();
    size_t size = buffer.size();
    int tag = kTag;
    void* mh = nullptr;
    void* request = nullptr;
    EXPECT_EQ(s.net().irecv(rc, 1, &data, &size, &tag, &mh, nullptr, &request), ncclSuccess);
    return request;
  };
  void* request = post();
  ASSERT_NE(request, nullptr);
  ASSERT_EQ(waitFor(s, request, nullptr, 30), ncclSuccess);  // traffic flows
  request = post();
  ASSERT_NE(request, nullptr);
  child.kill();
  auto start = Clock::now();
  ncclResult_t res = ncclSuccess;
  while (res == ncclSuccess && secondsSince(start) < 10) {
    int done = 0;
    res = s.net().test(request, &done, nullptr);
    if (res == ncclSuccess && done) {  // that message made it out before the kill
      request = post();
      if (request == nullptr) res = ncclRemoteError;  // irecv itself reported the death
    }
  }
  EXPECT_NE(res, ncclSuccess) << "no error after " << secondsSince(start) << " s";
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_EQ(s.net().closeRecv(rc), ncclSuccess);
  EXPECT_EQ(s.net().closeListen(lc), ncclSuccess);
}

// The receiver dies with a large send in flight: the sender's test() fails
// within seconds.
TEST(PeerDeath, SenderSeesReceiverDie) {
  constexpr size_t kSize = 64 << 20;
  ChildProcess child([](Channel& parent) {
    Session s;
    void* rc = nullptr;
    if (childAccept(s, parent, &rc) != 0) return 1;
    std::vector<uint8_t> buffer(kSize);
    void* data = buffer.data();
    size_t size = kSize;
    int tag = kTag;
    void* mh = nullptr;
    void* request = nullptr;
    CHILD_CHECK(s.net().irecv(rc, 1, &data, &size, &tag, &mh, nullptr, &request) == ncclSuccess);
    char posted = 1;
    CHILD_CHECK(parent.send(&posted, 1));
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until killed
  });
  Session s;
  void* sc = nullptr;
  ASSERT_TRUE(connectToChild(child, s, &sc));
  char posted = 0;
  ASSERT_TRUE(child.channel().receive(&posted, 1));
  std::vector<uint8_t> data(kSize, 0x33);
  void* request = nullptr;
  ASSERT_EQ(s.net().isend(sc, data.data(), kSize, kTag, nullptr, nullptr, &request), ncclSuccess);
  ASSERT_NE(request, nullptr);
  int done = 0;
  for (int i = 0; i < 1000 && !done; i++)
    ASSERT_EQ(s.net().test(request, &done, nullptr), ncclSuccess);
  child.kill();
  auto start = Clock::now();
  ncclResult_t res = done ? ncclRemoteError : waitFor(s, request, nullptr, 10);
  EXPECT_NE(res, ncclSuccess);
  EXPECT_NE(res, ncclTimeout);
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_EQ(s.net().closeSend(sc), ncclSuccess);
}

}  // namespace
}  // namespace ncclnet::socket::testing
