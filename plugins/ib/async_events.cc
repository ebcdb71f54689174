// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the async event watcher.
#include "async_events.hpp"
#include "ncclnet/thread_name.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>

namespace ncclnet::ib {
namespace {

constexpr int kPollMs = 500;  // how long the thread sleeps between looks at stop_

constexpr const char* kNoHint = "";

}  // namespace

EventClass classifyEvent(int type) {
  using S = EventClass::Scope;
  switch (type) {
    case IBV_EVENT_DEVICE_FATAL:
      return {"IBV_EVENT_DEVICE_FATAL", S::kDevice, true, ncclSystemError,
              "the HCA stopped (firmware or hardware error): check dmesg and the HCA's "
              "firmware; its connections cannot recover"};
    case IBV_EVENT_PORT_ERR:
      return {"IBV_EVENT_PORT_ERR", S::kPort, true, ncclSystemError,
              "the link went down (cable, transceiver, switch port or subnet manager): check "
              "ibstat and the switch; connections on the port cannot complete"};
    case IBV_EVENT_QP_FATAL:
      return {"IBV_EVENT_QP_FATAL", S::kQp, true, ncclSystemError,
              "the HCA hit an error on the QP that no completion reports (a failed DMA to host "
              "or GPU memory, for example)"};
    case IBV_EVENT_QP_REQ_ERR:
      return {"IBV_EVENT_QP_REQ_ERR", S::kQp, true, ncclRemoteError,
              "the peer sent a request the QP could not execute (opcode or length): do both "
              "ends run the same sdk-ib?"};
    case IBV_EVENT_QP_ACCESS_ERR:
      return {"IBV_EVENT_QP_ACCESS_ERR", S::kQp, true, ncclRemoteError,
              "the peer's RDMA access was refused (rkey, bounds or access rights): was a "
              "registered buffer deregistered or freed while still in use?"};
    case IBV_EVENT_CQ_ERR:
      return {"IBV_EVENT_CQ_ERR", S::kCq, true, ncclSystemError,
              "the completion queue failed (overrun): completions were lost"};
    case IBV_EVENT_COMM_EST: return {"IBV_EVENT_COMM_EST", S::kQp, false, ncclSuccess, kNoHint};
    case IBV_EVENT_SQ_DRAINED: return {"IBV_EVENT_SQ_DRAINED", S::kQp, false, ncclSuccess, kNoHint};
    case IBV_EVENT_PATH_MIG: return {"IBV_EVENT_PATH_MIG", S::kQp, false, ncclSuccess, kNoHint};
    case IBV_EVENT_PATH_MIG_ERR:
      return {"IBV_EVENT_PATH_MIG_ERR", S::kQp, false, ncclSuccess, kNoHint};
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return {"IBV_EVENT_QP_LAST_WQE_REACHED", S::kQp, false, ncclSuccess, kNoHint};
    case IBV_EVENT_PORT_ACTIVE:
      return {"IBV_EVENT_PORT_ACTIVE", S::kPort, false, ncclSuccess, kNoHint};
    case IBV_EVENT_LID_CHANGE:
      return {"IBV_EVENT_LID_CHANGE", S::kPort, false, ncclSuccess, kNoHint};
    case IBV_EVENT_PKEY_CHANGE:
      return {"IBV_EVENT_PKEY_CHANGE", S::kPort, false, ncclSuccess, kNoHint};
    case IBV_EVENT_SM_CHANGE: return {"IBV_EVENT_SM_CHANGE", S::kPort, false, ncclSuccess, kNoHint};
    case IBV_EVENT_CLIENT_REREGISTER:
      return {"IBV_EVENT_CLIENT_REREGISTER", S::kPort, false, ncclSuccess, kNoHint};
    case IBV_EVENT_GID_CHANGE:
      return {"IBV_EVENT_GID_CHANGE", S::kPort, false, ncclSuccess, kNoHint};
    // sdk-ib creates no SRQ and no WQ: nothing of its own can be affected.
    case IBV_EVENT_SRQ_ERR: return {"IBV_EVENT_SRQ_ERR", S::kUnused, false, ncclSuccess, kNoHint};
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      return {"IBV_EVENT_SRQ_LIMIT_REACHED", S::kUnused, false, ncclSuccess, kNoHint};
    case IBV_EVENT_WQ_FATAL: return {"IBV_EVENT_WQ_FATAL", S::kUnused, false, ncclSuccess, kNoHint};
    default: return {"an unknown event", S::kUnused, false, ncclSuccess, kNoHint};
  }
}

std::unique_ptr<AsyncWatcher> AsyncWatcher::start(const IbvApi& api, ibv_context* context,
                                                  const std::string& hca,
                                                  const ncclnet::Logger& log, std::string* why) {
  if (api.getAsyncEvent == nullptr || api.ackAsyncEvent == nullptr) {
    *why = "the verbs library has no ibv_get_async_event";
    return nullptr;
  }
  int fd = context->async_fd;
  int flags = fd >= 0 ? ::fcntl(fd, F_GETFL) : -1;
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    *why = std::string("its async fd cannot be made non-blocking: ") + std::strerror(errno);
    return nullptr;
  }
  int wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeFd < 0) {
    *why = std::string("eventfd failed: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<AsyncWatcher> watcher(new AsyncWatcher(api, context, hca, log, wakeFd));
  watcher->thread_ = std::thread([w = watcher.get()] {
    nameThisThread("sdk-ib events");
    w->run();
  });
  return watcher;
}

AsyncWatcher::AsyncWatcher(const IbvApi& api, ibv_context* context, const std::string& hca,
                           const ncclnet::Logger& log, int wakeFd)
    : api_(api), context_(context), hca_(hca), log_(log), wakeFd_(wakeFd), owner_(getpid()) {}

AsyncWatcher::~AsyncWatcher() {
  stop_.store(true);
  // Wakes the thread at once; were the write to fail, it would still see
  // stop_ within one poll timeout.
  uint64_t one = 1;
  ssize_t woken = ::write(wakeFd_, &one, sizeof(one));
  (void)woken;
  if (thread_.joinable()) {
    // In a child forked after the thread started, the thread does not
    // exist: there is nothing to join.
    if (owner_ == getpid())
      thread_.join();
    else
      thread_.detach();
  }
  ::close(wakeFd_);
}

void AsyncWatcher::watch(const ibv_qp* qp, int port, std::shared_ptr<Health> health,
                         const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  watched_[qp] = Watched{port, std::move(health), what};
}

void AsyncWatcher::watch(const ibv_cq* cq, int port, std::shared_ptr<Health> health,
                         const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  watched_[cq] = Watched{port, std::move(health), what};
}

void AsyncWatcher::unwatch(const void* object) {
  std::lock_guard<std::mutex> lock(mutex_);
  watched_.erase(object);
}

void AsyncWatcher::pollNow() {
  std::lock_guard<std::mutex> lock(mutex_);
  drainLocked();
}

void AsyncWatcher::run() {
  while (!stop_.load()) {
    pollfd fds[2] = {{context_->async_fd, POLLIN, 0}, {wakeFd_, POLLIN, 0}};
    int n = ::poll(fds, 2, kPollMs);
    if (n < 0 && errno != EINTR) {
      NCCLNET_WARN(log_, "%s: polling the async event fd failed: %s; events are no longer watched",
                   hca_.c_str(), std::strerror(errno));
      return;
    }
    if (n <= 0 || (fds[1].revents & POLLIN)) continue;  // stop_ decides
    if (fds[0].revents & POLLIN) {
      std::lock_guard<std::mutex> lock(mutex_);
      drainLocked();
    }
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
      NCCLNET_WARN(log_, "%s: the async event fd closed; events are no longer watched",
                   hca_.c_str());
      return;
    }
  }
}

void AsyncWatcher::drainLocked() {
  ibv_async_event event;
  // Non-blocking: EAGAIN once every delivered event is handled.
  while (api_.getAsyncEvent(context_, &event) == 0) {
    handleLocked(event);
    api_.ackAsyncEvent(&event);  // last: the QP or CQ may be destroyed right after
  }
}

int AsyncWatcher::liveLocked(int port) const {
  std::unordered_set<const Health*> live;
  for (const auto& entry : watched_) {
    const Watched& w = entry.second;
    if ((port == 0 || w.port == port) && w.health->ok()) live.insert(w.health.get());
  }
  return static_cast<int>(live.size());
}

void AsyncWatcher::failLocked(int port, ncclResult_t result, const char* name) {
  for (auto& entry : watched_) {
    if (port == 0 || entry.second.port == port) entry.second.health->record(result, name);
  }
}

void AsyncWatcher::handleLocked(const ibv_async_event& event) {
  const int type = static_cast<int>(event.event_type);
  const EventClass c = classifyEvent(type);
  switch (c.scope) {
    case EventClass::kDevice: {
      // The line comes first: a comm that sees its failure finds it logged.
      NCCLNET_WARN(log_, "async event %s on %s: its %d connection(s) fail. Hint: %s", c.name,
                   hca_.c_str(), liveLocked(0), c.hint);
      failLocked(0, c.result, c.name);
      return;
    }
    case EventClass::kPort:
      if (!c.fatal) {
        NCCLNET_INFO(log_, NCCL_NET, "async event %s on %s port %d", c.name, hca_.c_str(),
                     event.element.port_num);
        return;
      }
      NCCLNET_WARN(log_, "async event %s on %s port %d: its %d connection(s) fail. Hint: %s",
                   c.name, hca_.c_str(), event.element.port_num, liveLocked(event.element.port_num),
                   c.hint);
      failLocked(event.element.port_num, c.result, c.name);
      return;
    case EventClass::kUnused:
      NCCLNET_INFO(log_, NCCL_NET, "async event %s (%d) on %s: not for an object sdk-ib uses",
                   c.name, type, hca_.c_str());
      return;
    case EventClass::kQp:
    case EventClass::kCq: break;
  }
  const bool onQp = c.scope == EventClass::kQp;
  const void* object = onQp ? static_cast<const void*>(event.element.qp) : event.element.cq;
  const std::string which = onQp ? "QP " + std::to_string(event.element.qp->qp_num) : "a CQ";
  auto it = watched_.find(object);
  if (!c.fatal || it == watched_.end()) {
    if (type == IBV_EVENT_COMM_EST) return;  // routine: the first packet on a connection
    NCCLNET_INFO(log_, NCCL_NET, "async event %s on %s, %s%s", c.name, hca_.c_str(), which.c_str(),
                 it == watched_.end() ? " (no longer in use)" : "");
    return;
  }
  const Watched& w = it->second;
  NCCLNET_WARN(log_, "async event %s on %s port %d, %s of the %s: the connection fails. Hint: %s",
               c.name, hca_.c_str(), w.port, onQp ? which.c_str() : "the CQ", w.what.c_str(),
               c.hint);
  w.health->record(c.result, c.name);
}

}  // namespace ncclnet::ib
