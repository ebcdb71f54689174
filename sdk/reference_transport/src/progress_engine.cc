// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the progress thread.
#include "progress_engine.hpp"

#include <chrono>
#include <list>
#include <set>

#include "idle_backoff.hpp"

namespace ncclnet::transport::detail {

namespace {
using Key = std::pair<const void*, int>;
using Clock = std::chrono::steady_clock;
constexpr auto kIdleWait = std::chrono::milliseconds(50);
constexpr auto kDescribeEvery = std::chrono::milliseconds(100);

bool touches(const ProxyOpState& op, const std::vector<const ConnectionState*>& conns) {
  for (const SubProgress& sub : op.subs) {
    for (const ConnectionState* c : conns) {
      if (sub.conn == c) return true;
    }
  }
  return false;
}

bool overlaps(const std::vector<Key>& keys, const std::set<Key>& held) {
  for (const Key& k : keys) {
    if (held.count(k)) return true;
  }
  return false;
}
}  // namespace

ProgressEngine::ProgressEngine(TransportState& core) : core_(core), thread_([this] { run(); }) {}

ProgressEngine::~ProgressEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ProgressEngine::post(std::unique_ptr<ProxyOpState> op) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_.push_back(std::move(op));
  }
  cv_.notify_all();
}

void ProgressEngine::cancel(const ConnectionState* conn) {
  std::unique_lock<std::mutex> lock(mutex_);
  cancels_.push_back(conn);
  uint64_t ticket = ++cancelsPosted_;
  cv_.notify_all();
  if (!cv_.wait_for(lock, std::chrono::seconds(10),
                    [&] { return cancelsServed_ >= ticket || stop_; })) {
    NCCLNET_WARN(core_.log, "progress thread did not acknowledge a connection teardown");
  }
}

void ProgressEngine::run() {
  std::list<std::unique_ptr<ProxyOpState>> waiting;
  std::list<std::unique_ptr<ProxyOpState>> active;
  std::set<Key> busy;
  auto lastDescribe = Clock::now();
  IdleBackoff backoff;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (active.empty() && waiting.empty() && incoming_.empty() && cancels_.empty() && !stop_) {
        cv_.wait_for(lock, kIdleWait);
      }
      if (stop_) break;
      while (!incoming_.empty()) {
        waiting.push_back(std::move(incoming_.front()));
        incoming_.pop_front();
      }
      if (!cancels_.empty()) {
        for (auto* list : {&active, &waiting}) {
          for (auto it = list->begin(); it != list->end();) {
            if (!touches(**it, cancels_)) {
              ++it;
              continue;
            }
            NCCLNET_WARN(core_.log, "connection freed under a running operation:\n%s",
                         describe(**it).c_str());
            if (list == &active) {
              for (const Key& k : (*it)->keys) busy.erase(k);
            }
            (*it)->completion->finish(ncclInternalError);
            it = list->erase(it);
          }
        }
        cancels_.clear();
        cancelsServed_ = cancelsPosted_;
        cv_.notify_all();
      }
    }
    // Start every waiting operation whose keys no running or earlier
    // waiting operation holds (first come, first served per key).
    std::set<Key> claimed = busy;
    for (auto it = waiting.begin(); it != waiting.end();) {
      if (overlaps((*it)->keys, claimed)) {
        claimed.insert((*it)->keys.begin(), (*it)->keys.end());
        ++it;
        continue;
      }
      busy.insert((*it)->keys.begin(), (*it)->keys.end());
      claimed.insert((*it)->keys.begin(), (*it)->keys.end());
      active.push_back(std::move(*it));
      it = waiting.erase(it);
    }

    bool progressed = false;
    bool describeNow = Clock::now() - lastDescribe > kDescribeEvery;
    for (auto it = active.begin(); it != active.end();) {
      ProxyOpState& op = **it;
      ncclResult_t res = op.direction == Direction::Send ? sendProgress(core_, op, &progressed)
                                                         : recvProgress(core_, op, &progressed);
      if (res != ncclSuccess || op.complete()) {
        if (res != ncclSuccess) {
          NCCLNET_WARN(core_.log, "proxy operation failed (%d):\n%s", res, describe(op).c_str());
        }
        for (const Key& k : op.keys) busy.erase(k);
        op.completion->finish(res);
        it = active.erase(it);
        progressed = true;
        continue;
      }
      if (describeNow) op.completion->setPending(describe(op));
      ++it;
    }
    if (describeNow) {
      for (auto& op : waiting)
        op->completion->setPending(
            "queued behind an earlier operation on the same connection or pool");
      lastDescribe = Clock::now();
    }
    backoff.pass(progressed);
  }
  for (auto& op : active) op->completion->finish(ncclInternalError);
  for (auto& op : waiting) op->completion->finish(ncclInternalError);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& op : incoming_) op->completion->finish(ncclInternalError);
  incoming_.clear();
}

}  // namespace ncclnet::transport::detail
