// SPDX-License-Identifier: Apache-2.0
// The in-process example of docs/testing.md, run on testnet: if this stops
// compiling or passing, the page is wrong.
#include <gtest/gtest.h>

#include <vector>

#include "ncclnet/testing/byte_pattern.hpp"
#include "ncclnet/testing/net_polling.hpp"

namespace {

using namespace ncclnet::testing;

TEST(KitExample, OneMessageBetweenTwoCommsOfOneProcess) {
  PluginSession s({.plugin = TESTNET_PLUGIN_PATH, .netName = "sdk-testnet", .version = 12});
  ASSERT_TRUE(s.ok()) << s.error();
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  ASSERT_EQ(connectLoopback(s, s, &sendComm, &recvComm), ncclSuccess);

  std::vector<char> out(4096), in(4096);
  fillPattern(out.data(), out.size(), /*seed=*/1);
  void *sendMh = nullptr, *recvMh = nullptr;
  ASSERT_EQ(s.net().regMr(sendComm, out.data(), out.size(), NCCL_PTR_HOST, &sendMh), ncclSuccess);
  ASSERT_EQ(s.net().regMr(recvComm, in.data(), in.size(), NCCL_PTR_HOST, &recvMh), ncclSuccess);

  void* data = in.data();
  size_t size = in.size();
  int tag = 0;
  void *recvReq = nullptr, *sendReq = nullptr;
  ASSERT_EQ(postRecv(s, recvComm, 1, &data, &size, &tag, &recvMh, &recvReq), ncclSuccess);
  ASSERT_EQ(postSend(s, sendComm, out.data(), out.size(), tag, sendMh, &sendReq), ncclSuccess);
  int received = -1;
  ASSERT_EQ(waitFor(s, sendReq, nullptr), ncclSuccess);
  ASSERT_EQ(waitFor(s, recvReq, &received), ncclSuccess);
  EXPECT_EQ(received, 4096);
  EXPECT_EQ(checkPattern(in.data(), in.size(), 1), "");  // else: "byte N of 4096 ..."

  EXPECT_EQ(s.net().deregMr(sendComm, sendMh), ncclSuccess);
  EXPECT_EQ(s.net().deregMr(recvComm, recvMh), ncclSuccess);
  EXPECT_EQ(s.net().closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(s.net().closeRecv(recvComm), ncclSuccess);
}

}  // namespace
