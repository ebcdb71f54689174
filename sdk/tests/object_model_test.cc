// SPDX-License-Identifier: Apache-2.0
// The object model seen from NCCL's side: testnet is written on it, so every
// handle it gives out is the SDK's, and every misuse below is refused by the
// SDK (an error and one WARN line) before testnet sees the call.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "ncclnet/host/loader.hpp"
#include "ncclnet/host/log_capture.hpp"
#include "plugin_paths.hpp"

namespace {

using ncclnet::host::countCaptured;
using ncclnet::host::LoadedPlugin;
using ncclnet::host::Loader;
using ncclnet::host::LoaderOptions;
using ncclnet::host::NetView;

class ObjectModel : public ::testing::Test {
 protected:
  void SetUp() override {
    LoaderOptions options;
    options.pluginList = ncclnet::testing::pluginPath("sdk-testnet");
    options.netName = "";
    options.pinnedVersion = 12;
    Loader loader(options);
    ASSERT_EQ(loader.load(&plugin_), ncclSuccess) << loader.report().outcome;
    net_ = &plugin_->net();
    ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    ASSERT_EQ(net_->init(&ctx_, 7, &config, ncclnet::host::captureLogger, nullptr), ncclSuccess);
    ASSERT_NO_FATAL_FAILURE(connectPair());
    ncclnet::host::clearCapturedLines();
  }
  void TearDown() override {
    if (net_ == nullptr) return;
    if (send_ != nullptr) {
      EXPECT_EQ(net_->closeSend(send_), ncclSuccess);
    }
    if (recv_ != nullptr) {
      EXPECT_EQ(net_->closeRecv(recv_), ncclSuccess);
    }
    EXPECT_EQ(net_->finalize(ctx_), ncclSuccess);
  }

  void connectPair() {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen = nullptr;
    ASSERT_EQ(net_->listen(ctx_, 0, handle, &listen), ncclSuccess);
    for (int i = 0; i < 10 && (send_ == nullptr || recv_ == nullptr); i++) {
      if (send_ == nullptr) {
        ASSERT_EQ(net_->connect(ctx_, 0, handle, &send_, nullptr), ncclSuccess);
      }
      if (recv_ == nullptr) {
        ASSERT_EQ(net_->accept(listen, &recv_, nullptr), ncclSuccess);
      }
    }
    ASSERT_NE(send_, nullptr);
    ASSERT_NE(recv_, nullptr);
    ASSERT_EQ(net_->closeListen(listen), ncclSuccess);
  }

  void* reg(void* comm) {
    void* mh = nullptr;
    EXPECT_EQ(net_->regMr(comm, buffer_, sizeof(buffer_), NCCL_PTR_HOST, &mh), ncclSuccess);
    return mh;
  }

  // One WARN line naming `needle`, and no other.
  void expectOneWarning(const std::string& needle) {
    EXPECT_EQ(countCaptured(NCCL_LOG_WARN, needle), 1) << needle;
    EXPECT_EQ(countCaptured(NCCL_LOG_WARN, ""), 1);
    ncclnet::host::clearCapturedLines();
  }

  std::unique_ptr<LoadedPlugin> plugin_;
  NetView* net_ = nullptr;
  void* ctx_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  char buffer_[4096] = {};
};

TEST_F(ObjectModel, HandlesAreNotAddresses) {
  int local = 0;
  // The handles carry their kind in bits no user-space address has.
  auto top = [](const void* p) { return reinterpret_cast<uintptr_t>(p) >> 60; };
  EXPECT_EQ(top(&local), 0u);
  EXPECT_NE(top(send_), 0u);
  EXPECT_NE(top(recv_), 0u);
  EXPECT_NE(top(send_), top(recv_));
}

TEST_F(ObjectModel, ARequestTestedAfterDoneIsRefused) {
  void* smh = reg(send_);
  void* rmh = reg(recv_);
  void* rreq = nullptr;
  void* sreq = nullptr;
  void* data = buffer_;
  size_t size = 64;
  int tag = 3;
  ASSERT_EQ(net_->irecv(recv_, 1, &data, &size, &tag, &rmh, nullptr, &rreq), ncclSuccess);
  ASSERT_EQ(net_->isend(send_, buffer_, 64, 3, smh, nullptr, &sreq), ncclSuccess);
  ASSERT_NE(sreq, nullptr);
  ASSERT_NE(rreq, nullptr);
  int done = 0;
  int sizes[1] = {};
  ASSERT_EQ(net_->test(sreq, &done, sizes), ncclSuccess);
  ASSERT_EQ(done, 1);
  ASSERT_EQ(net_->test(rreq, &done, sizes), ncclSuccess);
  ASSERT_EQ(done, 1);
  EXPECT_EQ(sizes[0], 64);
  EXPECT_EQ(net_->test(sreq, &done, sizes), ncclInvalidArgument);
  expectOneWarning("is not a request in flight");
  EXPECT_EQ(net_->deregMr(send_, smh), ncclSuccess);
  EXPECT_EQ(net_->deregMr(recv_, rmh), ncclSuccess);
}

TEST_F(ObjectModel, AFailedRequestIsForgottenToo) {
  void* smh = reg(send_);
  void* rmh = reg(recv_);
  void* rreq = nullptr;
  void* sreq = nullptr;
  void* data = buffer_;
  size_t size = 32;  // smaller than the send: both requests fail (truncation)
  int tag = 5;
  ASSERT_EQ(net_->irecv(recv_, 1, &data, &size, &tag, &rmh, nullptr, &rreq), ncclSuccess);
  ASSERT_EQ(net_->isend(send_, buffer_ + 1024, 64, 5, smh, nullptr, &sreq), ncclSuccess);
  ASSERT_NE(rreq, nullptr);
  int done = 0;
  EXPECT_NE(net_->test(rreq, &done, nullptr), ncclSuccess);
  EXPECT_EQ(done, 1);
  ncclnet::host::clearCapturedLines();
  EXPECT_EQ(net_->test(rreq, &done, nullptr), ncclInvalidArgument)
      << "testnet reused the request: the SDK must not hand it back";
  expectOneWarning("is not a request in flight");
  EXPECT_NE(net_->test(sreq, &done, nullptr), ncclSuccess);
  EXPECT_EQ(net_->deregMr(send_, smh), ncclSuccess);
  EXPECT_EQ(net_->deregMr(recv_, rmh), ncclSuccess);
}

TEST_F(ObjectModel, AnMhandleOfAnotherCommIsRefused) {
  void* rmh = reg(recv_);
  void* request = nullptr;
  EXPECT_EQ(net_->isend(send_, buffer_, 64, 0, rmh, nullptr, &request), ncclInvalidArgument);
  EXPECT_EQ(request, nullptr);
  expectOneWarning("was registered on comm");
  EXPECT_EQ(net_->deregMr(send_, rmh), ncclInvalidArgument);
  expectOneWarning("was registered on comm");
  EXPECT_EQ(net_->deregMr(recv_, rmh), ncclSuccess);
}

TEST_F(ObjectModel, ADeregisteredMhandleIsRefused) {
  void* smh = reg(send_);
  ASSERT_EQ(net_->deregMr(send_, smh), ncclSuccess);
  void* request = nullptr;
  EXPECT_EQ(net_->isend(send_, buffer_, 64, 0, smh, nullptr, &request), ncclInvalidArgument);
  expectOneWarning("is not a live registration");
  EXPECT_EQ(net_->deregMr(send_, smh), ncclInvalidArgument);
  expectOneWarning("is not a live registration");
}

TEST_F(ObjectModel, AHandleOfTheWrongKindIsRefused) {
  void* request = nullptr;
  void* data = buffer_;
  size_t size = 64;
  int tag = 0;
  EXPECT_EQ(net_->isend(recv_, buffer_, 64, 0, nullptr, nullptr, &request), ncclInvalidArgument);
  expectOneWarning("is not a live sendComm");
  EXPECT_EQ(net_->irecv(send_, 1, &data, &size, &tag, nullptr, nullptr, &request),
            ncclInvalidArgument);
  expectOneWarning("is not a live recvComm");
  EXPECT_EQ(net_->closeRecv(send_), ncclInvalidArgument);
  expectOneWarning("is not a live recvComm");
}

TEST_F(ObjectModel, AClosedCommAndItsRequestsAreRefused) {
  void* smh = reg(send_);
  void* sreq = nullptr;
  ASSERT_EQ(net_->isend(send_, buffer_, 64, 0, smh, nullptr, &sreq), ncclSuccess);
  ASSERT_NE(sreq, nullptr);
  void* closed = send_;
  send_ = nullptr;
  ASSERT_EQ(net_->closeSend(closed), ncclSuccess);
  void* request = nullptr;
  EXPECT_EQ(net_->isend(closed, buffer_, 64, 0, nullptr, nullptr, &request), ncclInvalidArgument);
  expectOneWarning("is not a live sendComm");
  int done = 0;
  EXPECT_EQ(net_->test(sreq, &done, nullptr), ncclInvalidArgument);
  expectOneWarning("is not a request in flight");
  EXPECT_EQ(net_->closeSend(closed), ncclInvalidArgument);
  expectOneWarning("is not a live sendComm");
}

// What a failed connect, accept or regMr left in NCCL's slots, which its
// teardown closes and deregisters all the same (src/transport/net.cc
// sendProxyFree, recvProxyFree): success, and nothing logged, so that
// NCCL's cleanup of the other connections goes on.
TEST_F(ObjectModel, NullHandlesNcclTearsDownAreAccepted) {
  EXPECT_EQ(net_->deregMr(send_, nullptr), ncclSuccess);
  EXPECT_EQ(net_->closeSend(nullptr), ncclSuccess);
  EXPECT_EQ(net_->closeRecv(nullptr), ncclSuccess);
  EXPECT_EQ(net_->closeListen(nullptr), ncclSuccess);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, ""), 0);
}

TEST_F(ObjectModel, ACopyOfAHandleMidConnectStartsItsOwnConnect) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net_->listen(ctx_, 0, handle, &listen), ncclSuccess);
  void* first = nullptr;
  ASSERT_EQ(net_->connect(ctx_, 0, handle, &first, nullptr), ncclSuccess);
  ASSERT_EQ(first, nullptr) << "testnet connects on the second call";
  // A copy carries the pending connect's mark: it must not finish that one
  // (testnet counts calls per connect, so a shared one would finish now).
  char copy[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(copy, handle, sizeof(copy));
  std::memset(copy + NCCL_NET_HANDLE_MAXSIZE - 16, 0, 16);  // what another process sees
  void* other = nullptr;
  ASSERT_EQ(net_->connect(ctx_, 0, copy, &other, nullptr), ncclSuccess);
  EXPECT_EQ(other, nullptr);
  ASSERT_EQ(net_->connect(ctx_, 0, handle, &first, nullptr), ncclSuccess);
  EXPECT_NE(first, nullptr);
  ASSERT_EQ(net_->connect(ctx_, 0, copy, &other, nullptr), ncclSuccess);
  EXPECT_NE(other, nullptr);
  EXPECT_EQ(net_->closeSend(first), ncclSuccess);
  EXPECT_EQ(net_->closeSend(other), ncclSuccess);
  EXPECT_EQ(net_->closeListen(listen), ncclSuccess);
}

TEST_F(ObjectModel, PropertiesStartFromNcclDefaults) {
  ncclNetProperties_v12_t p;
  std::memset(&p, 0x5a, sizeof(p));
  ASSERT_EQ(net_->getProperties(0, &p), ncclSuccess);
  // testnet leaves these to the SDK.
  EXPECT_EQ(p.pciPath, nullptr);
  EXPECT_EQ(p.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(p.forceFlush, 0);
  EXPECT_EQ(p.netDeviceType, NCCL_NET_DEVICE_HOST);
  EXPECT_EQ(p.netDeviceVersion, NCCL_NET_DEVICE_INVALID_VERSION);
  EXPECT_EQ(p.vProps.ndevs, 1);
  EXPECT_EQ(p.vProps.devs[0], 0);
  EXPECT_EQ(p.maxMultiRequestSize, 1);
}

}  // namespace
