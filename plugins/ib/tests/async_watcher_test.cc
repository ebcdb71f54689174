// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the async event watcher on softverbs, through the plugin's own
// dlopen table — which events fail which comms, the one line each, and a
// prompt stop.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "async_events.hpp"
#include "ibv_api.hpp"
#include "softverbs/test_hooks.h"
#include "test_files.hpp"

namespace ncclnet::ib {
namespace {

using Clock = std::chrono::steady_clock;

std::mutex gMutex;
std::vector<std::pair<ncclDebugLogLevel, std::string>> gLines;

void capture(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(gMutex);
  gLines.emplace_back(level, text);
}

std::vector<std::string> lines(ncclDebugLogLevel level) {
  std::lock_guard<std::mutex> lock(gMutex);
  std::vector<std::string> out;
  for (const auto& l : gLines) {
    if (l.first == level) out.push_back(l.second);
  }
  return out;
}

bool failsWithin(const Health& health, double seconds = 5) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (health.code() != ncclSuccess) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

class AsyncWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      std::lock_guard<std::mutex> lock(gMutex);
      gLines.clear();
    }
    std::string why;
    std::string library = ncclnet::ib::testing::softverbsLibrary();
    ASSERT_TRUE(api_.load(library, &why)) << why;
    lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib_, nullptr);
    raise_ =
        reinterpret_cast<softverbs_raise_async_event_fn>(dlsym(lib_, SOFTVERBS_RAISE_ASYNC_EVENT));
    ASSERT_NE(raise_, nullptr);
    int n = 0;
    ibv_device** list = api_.getDeviceList(&n);
    ASSERT_GE(n, 1);
    ctx_ = api_.openDevice(list[0]);
    api_.freeDeviceList(list);
    ASSERT_NE(ctx_, nullptr);
    pd_ = api_.allocPd(ctx_);
    cq_ = api_.createCq(ctx_, 16, nullptr, nullptr, 0);
    ASSERT_NE(cq_, nullptr);
    ibv_qp_init_attr init{};
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = init.cap.max_recv_wr = 4;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    qp_ = api_.createQp(pd_, &init);
    ASSERT_NE(qp_, nullptr);
    watcher_ = AsyncWatcher::start(api_, ctx_, "softverbs0", log_, &why);
    ASSERT_NE(watcher_, nullptr) << why;
  }
  void TearDown() override {
    watcher_.reset();
    if (qp_ != nullptr) api_.destroyQp(qp_);
    if (cq_ != nullptr) api_.destroyCq(cq_);
    if (pd_ != nullptr) api_.deallocPd(pd_);
    if (ctx_ != nullptr) api_.closeDevice(ctx_);
    if (lib_ != nullptr) dlclose(lib_);
  }
  // One comm's objects, watched as the plugin watches them.
  std::shared_ptr<Health> watchQpAndCq() {
    auto health = std::make_shared<Health>();
    watcher_->watch(qp_, 1, health, "send comm to 127.0.0.1:1");
    watcher_->watch(cq_, 1, health, "send comm to 127.0.0.1:1");
    return health;
  }

  ncclnet::Logger log_{capture, "NET/sdk-ib"};
  IbvApi api_;
  void* lib_ = nullptr;
  softverbs_raise_async_event_fn raise_ = nullptr;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  std::unique_ptr<AsyncWatcher> watcher_;
};

TEST(AsyncEventClassTest, FatalOnesAndTheirResults) {
  for (int type :
       {IBV_EVENT_DEVICE_FATAL, IBV_EVENT_PORT_ERR, IBV_EVENT_QP_FATAL, IBV_EVENT_CQ_ERR}) {
    EXPECT_TRUE(classifyEvent(type).fatal) << type;
    EXPECT_EQ(classifyEvent(type).result, ncclSystemError) << type;
  }
  for (int type : {IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR}) {
    EXPECT_TRUE(classifyEvent(type).fatal) << type;
    EXPECT_EQ(classifyEvent(type).result, ncclRemoteError) << type;  // the peer's request
  }
  for (int type : {IBV_EVENT_PORT_ACTIVE, IBV_EVENT_LID_CHANGE, IBV_EVENT_GID_CHANGE,
                   IBV_EVENT_PKEY_CHANGE, IBV_EVENT_SM_CHANGE, IBV_EVENT_COMM_EST,
                   IBV_EVENT_SQ_DRAINED, IBV_EVENT_CLIENT_REREGISTER, IBV_EVENT_SRQ_ERR}) {
    EXPECT_FALSE(classifyEvent(type).fatal) << type;
  }
  EXPECT_STREQ(classifyEvent(IBV_EVENT_QP_ACCESS_ERR).name, "IBV_EVENT_QP_ACCESS_ERR");
  EXPECT_FALSE(classifyEvent(999).fatal);
}

TEST_F(AsyncWatcherTest, QpFatalFailsTheCommWithOneLine) {
  auto health = watchQpAndCq();
  auto other = std::make_shared<Health>();  // another comm: untouched
  ASSERT_EQ(raise_(0, IBV_EVENT_QP_FATAL, qp_->qp_num), 0);
  ASSERT_TRUE(failsWithin(*health));
  EXPECT_EQ(health->code(), ncclSystemError);
  EXPECT_EQ(other->code(), ncclSuccess);
  std::vector<std::string> warnings = lines(NCCL_LOG_WARN);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("IBV_EVENT_QP_FATAL on softverbs0 port 1, QP " +
                             std::to_string(qp_->qp_num) + " of the send comm to 127.0.0.1:1"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("Hint: "), std::string::npos);
}

TEST_F(AsyncWatcherTest, CqErrFailsTheCommThatOwnsTheCq) {
  auto health = watchQpAndCq();
  ASSERT_EQ(raise_(0, IBV_EVENT_CQ_ERR, qp_->qp_num), 0);
  ASSERT_TRUE(failsWithin(*health));
  std::vector<std::string> warnings = lines(NCCL_LOG_WARN);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("IBV_EVENT_CQ_ERR on softverbs0 port 1, the CQ of the send comm"),
            std::string::npos)
      << warnings[0];
}

TEST_F(AsyncWatcherTest, AccessErrorIsTheRemoteSide) {
  auto health = watchQpAndCq();
  ASSERT_EQ(raise_(0, IBV_EVENT_QP_ACCESS_ERR, qp_->qp_num), 0);
  ASSERT_TRUE(failsWithin(*health));
  EXPECT_EQ(health->code(), ncclRemoteError);
}

TEST_F(AsyncWatcherTest, PortErrFailsCommsOnThatPort) {
  auto health = watchQpAndCq();
  ASSERT_EQ(raise_(0, IBV_EVENT_PORT_ERR, 1), 0);
  ASSERT_TRUE(failsWithin(*health));
  std::vector<std::string> warnings = lines(NCCL_LOG_WARN);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("IBV_EVENT_PORT_ERR on softverbs0 port 1: its 1 connection(s) fail"),
            std::string::npos)
      << warnings[0];
  ASSERT_EQ(raise_(0, IBV_EVENT_PORT_ACTIVE, 1), 0);  // back: INFO only
  watcher_->pollNow();
  EXPECT_EQ(lines(NCCL_LOG_WARN).size(), 1u);
}

TEST_F(AsyncWatcherTest, NonFatalEventsAreInfo) {
  auto health = watchQpAndCq();
  ASSERT_EQ(raise_(0, IBV_EVENT_LID_CHANGE, 1), 0);
  ASSERT_EQ(raise_(0, IBV_EVENT_SQ_DRAINED, qp_->qp_num), 0);
  ASSERT_EQ(raise_(0, IBV_EVENT_COMM_EST, qp_->qp_num), 0);  // routine: not even INFO
  watcher_->pollNow();
  std::vector<std::string> infos = lines(NCCL_LOG_INFO);
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_NE(infos[0].find("IBV_EVENT_LID_CHANGE on softverbs0 port 1"), std::string::npos);
  EXPECT_NE(infos[1].find("IBV_EVENT_SQ_DRAINED"), std::string::npos);
  EXPECT_TRUE(lines(NCCL_LOG_WARN).empty());
  EXPECT_EQ(health->code(), ncclSuccess);
}

TEST_F(AsyncWatcherTest, AnEventForAnUnwatchedQpFailsNothing) {
  auto health = watchQpAndCq();
  watcher_->unwatch(qp_);
  ASSERT_EQ(raise_(0, IBV_EVENT_QP_FATAL, qp_->qp_num), 0);
  watcher_->pollNow();
  EXPECT_EQ(health->code(), ncclSuccess);
  EXPECT_TRUE(lines(NCCL_LOG_WARN).empty());
}

TEST_F(AsyncWatcherTest, PollNowHandlesWhatIsDeliveredBeforeReturning) {
  auto health = watchQpAndCq();
  ASSERT_EQ(raise_(0, IBV_EVENT_DEVICE_FATAL, 0), 0);
  watcher_->pollNow();  // whether the thread or this call handles it
  EXPECT_EQ(health->code(), ncclSystemError);
  EXPECT_EQ(lines(NCCL_LOG_WARN).size(), 1u);
}

TEST_F(AsyncWatcherTest, StopsAtOnce) {
  auto start = Clock::now();
  watcher_.reset();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(200));
}

TEST_F(AsyncWatcherTest, AcknowledgesSoAQpCanBeDestroyed) {
  auto health = watchQpAndCq();
  ASSERT_EQ(raise_(0, IBV_EVENT_QP_FATAL, qp_->qp_num), 0);
  ASSERT_TRUE(failsWithin(*health));
  watcher_->unwatch(qp_);
  auto start = Clock::now();
  EXPECT_EQ(api_.destroyQp(qp_), 0);  // waits for unacknowledged events: there are none
  qp_ = nullptr;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace ncclnet::ib
