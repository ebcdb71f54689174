// SPDX-License-Identifier: Apache-2.0
// The transport scenarios catch plugins that a single-message API test
// passes: one completes a receive before its bytes are in place, one lets a
// send overtake the previous one.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "ncclnet/transport/pattern.hpp"
#include "scenario.hpp"

namespace ncclnet::transport::testing {
namespace {

TransportConfig small() {
  TransportConfig c;
  c.buffSizes[index(Protocol::Simple)] = 8 * 65536;
  c.p2pChunkSize = 16384;
  return c;
}

// The plain API check: connect, one 256 KiB isend and irecv, test both to
// completion, compare. Both broken plugins pass it.
void plainRoundTrip(const std::string& path) {
  std::unique_ptr<host::LoadedPlugin> plugin;
  std::string why;
  ASSERT_EQ(loadPlugin(path, &plugin, &why), ncclSuccess) << why;
  host::NetView& net = plugin->net();
  void* ctx = nullptr;
  ncclNetCommConfig_v12_t config{.trafficClass = -1};
  ASSERT_EQ(net.init(&ctx, 1, &config, host::stderrLogger(), host::profilerCallback()),
            ncclSuccess);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void *listenComm = nullptr, *sendComm = nullptr, *recvComm = nullptr;
  ASSERT_EQ(net.listen(ctx, 0, handle, &listenComm), ncclSuccess);
  ncclNetDeviceHandle_v12_t* none = nullptr;
  for (int i = 0; i < 1000 && (sendComm == nullptr || recvComm == nullptr); i++) {
    if (sendComm == nullptr) {
      ASSERT_EQ(net.connect(ctx, 0, handle, &sendComm, &none), ncclSuccess);
    }
    if (recvComm == nullptr) {
      ASSERT_EQ(net.accept(listenComm, &recvComm, &none), ncclSuccess);
    }
  }
  ASSERT_TRUE(sendComm && recvComm);
  const size_t n = 256 << 10;
  std::vector<uint8_t> src(n), dst(n, 0);
  fillPattern(src.data(), n, 99, 0);
  void *smh = nullptr, *rmh = nullptr, *sreq = nullptr, *rreq = nullptr;
  ASSERT_EQ(net.regMr(sendComm, src.data(), n, NCCL_PTR_HOST, &smh), ncclSuccess);
  ASSERT_EQ(net.regMr(recvComm, dst.data(), n, NCCL_PTR_HOST, &rmh), ncclSuccess);
  void* data = dst.data();
  size_t size = n;
  int tag = 0;
  ASSERT_EQ(net.irecv(recvComm, 1, &data, &size, &tag, &rmh, nullptr, &rreq), ncclSuccess);
  ASSERT_EQ(net.isend(sendComm, src.data(), n, 0, smh, nullptr, &sreq), ncclSuccess);
  ASSERT_TRUE(sreq && rreq);
  int sdone = 0, rdone = 0, ssize = 0, rsize = 0;
  for (int i = 0; i < 100000 && !(sdone && rdone); i++) {
    if (!sdone) {
      ASSERT_EQ(net.test(sreq, &sdone, &ssize), ncclSuccess);
    }
    if (!rdone) {
      ASSERT_EQ(net.test(rreq, &rdone, &rsize), ncclSuccess);
    }
    std::this_thread::yield();
  }
  ASSERT_TRUE(sdone && rdone);
  EXPECT_EQ(rsize, static_cast<int>(n));
  EXPECT_EQ(findMismatch(dst.data(), n, 99, 0), n);
  EXPECT_EQ(net.deregMr(sendComm, smh), ncclSuccess);
  EXPECT_EQ(net.deregMr(recvComm, rmh), ncclSuccess);
  EXPECT_EQ(net.closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(net.closeRecv(recvComm), ncclSuccess);
  EXPECT_EQ(net.closeListen(listenComm), ncclSuccess);
  EXPECT_EQ(net.finalize(ctx), ncclSuccess);
}

ncclResult_t ringScenario(const std::string& path, std::string* why) {
  Scenario s;
  ncclResult_t res = s.start(path, 2, small(), why);
  if (res != ncclSuccess) return res;
  res = s.ring(2, false, false, why);
  if (res != ncclSuccess) return res;
  return s.randomRounds(10, 400000, RoundOptions{}, 21, why);
}

TEST(BrokenPlugins, CorrectLoopnetPassesTheRing) {
  std::string why;
  EXPECT_EQ(ringScenario(loopnetPath(""), &why), ncclSuccess) << why;
}

TEST(BrokenPlugins, EarlyCompletionPassesThePlainRoundTrip) {
  plainRoundTrip(loopnetPath("early-completion"));
}

TEST(BrokenPlugins, EarlyCompletionIsCaughtByTheRing) {
  std::string why;
  EXPECT_NE(ringScenario(loopnetPath("early-completion"), &why), ncclSuccess);
  EXPECT_NE(why.find("device:"), std::string::npos) << why;
  std::cout << "caught: " << why << "\n";
}

TEST(BrokenPlugins, ReorderedSendsPassThePlainRoundTrip) {
  plainRoundTrip(loopnetPath("reorder-sends"));
}

TEST(BrokenPlugins, ReorderedSendsAreCaughtByTheRing) {
  std::string why;
  EXPECT_NE(ringScenario(loopnetPath("reorder-sends"), &why), ncclSuccess);
  EXPECT_NE(why.find("device:"), std::string::npos) << why;
  std::cout << "caught: " << why << "\n";
}

}  // namespace
}  // namespace ncclnet::transport::testing
