// SPDX-License-Identifier: Apache-2.0
// softverbs: the async event queue of a context, acknowledgements, and
// libibverbs' ibv_get_async_event / ibv_ack_async_event.
#include "async.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "objects.hpp"

#define SOFTVERBS_EXPORT __attribute__((visibility("default")))

namespace softverbs {
namespace {

constexpr auto kWaitStep = std::chrono::milliseconds(100);
constexpr auto kAckWait = std::chrono::seconds(5);

// Outstanding (read, not acknowledged) events per object.
struct AckTable {
  std::mutex mutex;
  std::condition_variable acked;
  std::unordered_map<const void*, int> outstanding;
};

AckTable& ackTable() {
  static AckTable table;  // destroyed when the library unloads, after every context
  return table;
}

}  // namespace

AsyncQueue::AsyncQueue() {
  // Blocking, like the uverbs async file: the application decides (fcntl).
  fd_ = ::eventfd(0, EFD_CLOEXEC);
}

AsyncQueue::~AsyncQueue() {
  if (fd_ >= 0) ::close(fd_);
}

void AsyncQueue::settle() {
  uint64_t value = 1;
  if (!events_.empty() && !signalled_) {
    signalled_ = ::write(fd_, &value, sizeof(value)) == sizeof(value);
  } else if (events_.empty() && signalled_) {
    // The counter is 1: this read returns at once whatever the fd's mode.
    signalled_ = ::read(fd_, &value, sizeof(value)) != sizeof(value);
  }
}

void AsyncQueue::push(const ibv_async_event& event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(event);
    settle();
  }
  ready_.notify_all();
}

int AsyncQueue::get(ibv_async_event* event) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool nonBlocking = (::fcntl(fd_, F_GETFL) & O_NONBLOCK) != 0;
  // A blocking caller waits as long as the API says (until an event), in
  // bounded steps.
  while (events_.empty()) {
    if (nonBlocking) {
      errno = EAGAIN;
      return -1;
    }
    ready_.wait_for(lock, kWaitStep);
  }
  *event = events_.front();
  events_.pop_front();
  settle();
  if (const void* object = objectOf(*event)) noteRead(object);
  return 0;
}

void AsyncQueue::drop(const void* object) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.erase(
      std::remove_if(events_.begin(), events_.end(),
                     [object](const ibv_async_event& e) { return objectOf(e) == object; }),
      events_.end());
  settle();
}

bool isQpEvent(int type) {
  switch (type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: return true;
    default: return false;
  }
}

const void* objectOf(const ibv_async_event& event) {
  if (isQpEvent(event.event_type)) return event.element.qp;
  if (event.event_type == IBV_EVENT_CQ_ERR) return event.element.cq;
  return nullptr;
}

void noteRead(const void* object) {
  AckTable& t = ackTable();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.outstanding[object]++;
}

void noteAcked(const void* object) {
  AckTable& t = ackTable();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.outstanding.find(object);
    if (it == t.outstanding.end()) return;  // acknowledged after its object went
    if (--it->second == 0) t.outstanding.erase(it);
  }
  t.acked.notify_all();
}

void awaitAcks(const void* object, const char* what) {
  AckTable& t = ackTable();
  std::unique_lock<std::mutex> lock(t.mutex);
  bool done = t.acked.wait_for(lock, kAckWait, [&] { return t.outstanding.count(object) == 0; });
  if (!done) {
    std::fprintf(stderr,
                 "softverbs: %s %p destroyed with %d async event(s) read but never acknowledged "
                 "(ibv_ack_async_event)\n",
                 what, object, t.outstanding[object]);
    t.outstanding.erase(object);
  }
}

}  // namespace softverbs

using namespace softverbs;

extern "C" {

SOFTVERBS_EXPORT int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  if (context == nullptr || event == nullptr) {
    errno = EINVAL;
    return -1;
  }
  AsyncQueue* queue = contextOf(context)->async.get();
  if (queue == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return queue->get(event);
}

SOFTVERBS_EXPORT void ibv_ack_async_event(ibv_async_event* event) {
  if (event == nullptr) return;
  if (const void* object = objectOf(*event)) noteAcked(object);
}

}  // extern "C"
