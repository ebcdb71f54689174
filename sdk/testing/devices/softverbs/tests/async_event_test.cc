// SPDX-License-Identifier: Apache-2.0
// softverbs: asynchronous events behave as libibverbs' do — a pollable
// async_fd, blocking or non-blocking reads, acknowledgements that a
// destroy waits for — and the errors real hardware reports this way raise
// them.
#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <thread>

#include "../test_hooks.h"
#include "fixture.hpp"

namespace softverbs::testing {
namespace {

using Clock = std::chrono::steady_clock;

bool readable(ibv_context* ctx, int timeoutMs) {
  pollfd p{ctx->async_fd, POLLIN, 0};
  return ::poll(&p, 1, timeoutMs) == 1 && (p.revents & POLLIN);
}

void makeNonBlocking(ibv_context* ctx) {
  int flags = fcntl(ctx->async_fd, F_GETFL);
  ASSERT_GE(flags, 0);
  ASSERT_EQ(fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK), 0);
}

// The next event within `seconds` (non-blocking fd), false if none came.
bool nextEvent(ibv_context* ctx, ibv_async_event* event, double seconds = 5) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (ibv_get_async_event(ctx, event) == 0) return true;
    if (errno != EAGAIN) return false;
    readable(ctx, 10);
  }
  return false;
}

bool noEvent(ibv_context* ctx) {
  ibv_async_event event;
  return ibv_get_async_event(ctx, &event) != 0 && errno == EAGAIN;
}

class AsyncEventTest : public PairTest {
 protected:
  void SetUp() override {
    PairTest::SetUp();
    if (HasFatalFailure()) return;
    makeNonBlocking(ctx_);
  }
  // A QP the test destroys itself.
  void forget(ibv_qp* qp) { qps_.erase(std::find(qps_.begin(), qps_.end(), qp)); }
};

TEST_F(AsyncEventTest, FdIsPollableAndQuietWithoutEvents) {
  ASSERT_GE(ctx_->async_fd, 0);
  EXPECT_FALSE(readable(ctx_, 0));
  ibv_async_event event;
  EXPECT_EQ(ibv_get_async_event(ctx_, &event), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST_F(AsyncEventTest, RemoteAccessErrorRaisesQpAccessErrOnTheResponderBeforeItsFlush) {
  ASSERT_EQ(postRecv(b_, nullptr, 0, 0, 77), 0);  // to be flushed
  ASSERT_EQ(postWrite(a_, IBV_WR_RDMA_WRITE, bufA_.data(), 64, mrA_->lkey,
                      addrB() + kBytes - 32 /* past the end */, mrB_->rkey, 1),
            0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqB_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  // The responder learns of the error only by the event, already there
  // when its flush is.
  EXPECT_TRUE(readable(ctx_, 0));
  ibv_async_event event;
  ASSERT_EQ(ibv_get_async_event(ctx_, &event), 0);
  EXPECT_EQ(event.event_type, IBV_EVENT_QP_ACCESS_ERR);
  EXPECT_EQ(event.element.qp, b_);
  ibv_ack_async_event(&event);
  // The requester was told by its completion: no event for it.
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_TRUE(noEvent(ctx_));
  EXPECT_FALSE(readable(ctx_, 0));
}

TEST_F(AsyncEventTest, LengthErrorOfASendIsReportedByCompletionOnly) {
  ASSERT_EQ(postRecv(b_, bufB_.data(), 16, mrB_->lkey, 1), 0);
  ASSERT_EQ(postWrite(a_, IBV_WR_SEND, bufA_.data(), 32, mrA_->lkey, 0, 0, 2), 0);
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqB_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
  EXPECT_TRUE(noEvent(ctx_));
}

TEST_F(AsyncEventTest, InjectedDeviceFatalReachesEveryContextAndStopsEveryQp) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  ibv_context* other = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  ASSERT_NE(other, nullptr);
  makeNonBlocking(other);
  ASSERT_EQ(postRecv(a_, nullptr, 0, 0, 5), 0);
  ASSERT_EQ(softverbs_raise_async_event(0, IBV_EVENT_DEVICE_FATAL, 0), 0);
  for (ibv_context* ctx : {ctx_, other}) {
    ibv_async_event event;
    ASSERT_TRUE(nextEvent(ctx, &event));
    EXPECT_EQ(event.event_type, IBV_EVENT_DEVICE_FATAL);
    ibv_ack_async_event(&event);
  }
  ibv_wc wc;
  ASSERT_TRUE(pollOne(cqA_, &wc));
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(stateOf(a_), IBV_QPS_ERR);
  EXPECT_EQ(stateOf(b_), IBV_QPS_ERR);
  EXPECT_EQ(ibv_close_device(other), 0);
}

TEST_F(AsyncEventTest, InjectedPortErrTakesThePortDownUntilPortActive) {
  ASSERT_EQ(softverbs_raise_async_event(0, IBV_EVENT_PORT_ERR, 1), 0);
  ibv_async_event event;
  ASSERT_TRUE(nextEvent(ctx_, &event));
  EXPECT_EQ(event.event_type, IBV_EVENT_PORT_ERR);
  EXPECT_EQ(event.element.port_num, 1);
  ibv_ack_async_event(&event);
  ibv_port_attr port;
  ASSERT_EQ(ibv_query_port(ctx_, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_DOWN);
  ASSERT_EQ(softverbs_raise_async_event(0, IBV_EVENT_PORT_ACTIVE, 1), 0);
  ASSERT_TRUE(nextEvent(ctx_, &event));
  EXPECT_EQ(event.event_type, IBV_EVENT_PORT_ACTIVE);
  ibv_ack_async_event(&event);
  ASSERT_EQ(ibv_query_port(ctx_, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
}

TEST_F(AsyncEventTest, InjectionRefusesWhatDoesNotExist) {
  EXPECT_EQ(softverbs_raise_async_event(0, IBV_EVENT_PORT_ERR, 2), EINVAL);  // one port
  EXPECT_EQ(softverbs_raise_async_event(3, IBV_EVENT_DEVICE_FATAL, 0), ENODEV);
  EXPECT_EQ(softverbs_raise_async_event(0, IBV_EVENT_QP_FATAL, 0xfffff), ENOENT);
  EXPECT_EQ(softverbs_raise_async_event(0, IBV_EVENT_SRQ_ERR, a_->qp_num), EINVAL);
  EXPECT_TRUE(noEvent(ctx_));
}

TEST_F(AsyncEventTest, CqErrNamesTheCq) {
  ASSERT_EQ(softverbs_raise_async_event(0, IBV_EVENT_CQ_ERR, a_->qp_num), 0);
  ibv_async_event event;
  ASSERT_TRUE(nextEvent(ctx_, &event));
  EXPECT_EQ(event.event_type, IBV_EVENT_CQ_ERR);
  EXPECT_EQ(event.element.cq, cqA_);
  ibv_ack_async_event(&event);
}

TEST_F(AsyncEventTest, DestroyWaitsForTheAcknowledgement) {
  ASSERT_EQ(softverbs_raise_async_event(0, IBV_EVENT_QP_FATAL, a_->qp_num), 0);
  ibv_async_event event;
  ASSERT_TRUE(nextEvent(ctx_, &event));
  ASSERT_EQ(event.element.qp, a_);
  EXPECT_EQ(stateOf(a_), IBV_QPS_ERR);
  forget(a_);
  std::atomic<bool> destroyed{false};
  std::thread destroyer([&] {
    EXPECT_EQ(ibv_destroy_qp(a_), 0);
    destroyed.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(destroyed.load()) << "ibv_destroy_qp returned before the event was acknowledged";
  ibv_ack_async_event(&event);
  destroyer.join();  // bounded: softverbs waits at most a few seconds
  EXPECT_TRUE(destroyed.load());
}

TEST_F(AsyncEventTest, UnreadEventsGoWithTheirQp) {
  ASSERT_EQ(softverbs_raise_async_event(0, IBV_EVENT_SQ_DRAINED, a_->qp_num), 0);
  ASSERT_TRUE(readable(ctx_, 1000));
  forget(a_);
  ASSERT_EQ(ibv_destroy_qp(a_), 0);  // never read: nothing to wait for
  EXPECT_FALSE(readable(ctx_, 0));
  EXPECT_TRUE(noEvent(ctx_));
}

TEST_F(AsyncEventTest, BlockingReadWaitsForTheNextEvent) {
  int flags = fcntl(ctx_->async_fd, F_GETFL);
  ASSERT_EQ(fcntl(ctx_->async_fd, F_SETFL, flags & ~O_NONBLOCK), 0);
  auto reader = std::async(std::launch::async, [this] {
    ibv_async_event event;
    int rc = ibv_get_async_event(ctx_, &event);
    if (rc == 0) ibv_ack_async_event(&event);
    return rc == 0 ? static_cast<int>(event.event_type) : -1;
  });
  EXPECT_EQ(reader.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  ASSERT_EQ(softverbs_raise_async_event(0, IBV_EVENT_LID_CHANGE, 1), 0);
  ASSERT_EQ(reader.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(reader.get(), IBV_EVENT_LID_CHANGE);
}

}  // namespace
}  // namespace softverbs::testing
