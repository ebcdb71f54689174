// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the endpoint's watchdog thread, and the receives that take the
// peers' pings and answers (see remote.hpp and stray.hpp).
#include <algorithm>
#include <cstddef>

#include "endpoint.hpp"
#include "ncclnet/thread_name.hpp"
#include "probe_inbox.hpp"

namespace ncclnet::ofi {

ncclResult_t Endpoint::startWatchdog() {
  // Often enough that a ping goes out close to its interval.
  tick_ = std::chrono::milliseconds(std::clamp(config_.probeIntervalMs / 5, 5, 100));
  inbox_ = std::make_unique<ProbeInbox>(this);
  ncclResult_t res = inbox_->post();
  if (res != ncclSuccess) return res;
  if (nic_.provider.find("tcp") != std::string::npos) {
    strays_ = StraySweeper::forAddress(address_, config_.strayTimeoutMs, log_);
  }
  watchdog_ = std::thread([this] {
    nameThisThread("sdk-ofi watch");
    watchdog();
  });
  if (config_.progressThread) {
    progressThread_ = std::thread([this] {
      nameThisThread("sdk-ofi progress");
      progressLoop();
    });
  }
  return ncclSuccess;
}

void Endpoint::stopWatchdog() {
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  progressStop_ = true;
  if (progressThread_.joinable()) progressThread_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

void Endpoint::progressLoop() {
  // Spins while completions come, yields a while, then naps: an idle
  // endpoint costs a wake-up every 200 us, not a core.
  int idle = 0;
  while (!progressStop_.load(std::memory_order_relaxed)) {
    bool moved = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      uint64_t before = completions_;
      progress();
      moved = completions_ != before;
    }
    // Always a yield between rounds: std::mutex is not fair, and NCCL's
    // proxy thread waits on it in test().
    idle = moved ? 0 : idle + 1;
    if (idle < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

void Endpoint::serviceIfDue(Clock::time_point now) {
  if (inbox_ == nullptr) return;  // the watchdog has not started
  if (now.time_since_epoch().count() - lastService_.load(std::memory_order_relaxed) <
      tick_.count()) {
    return;
  }
  lastService_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  inbox_->post();
  for (auto& entry : peers_) entry.second->watch(now);
}

void Endpoint::watchdog() {
  auto nextSweep = Clock::now();
  std::unique_lock<std::mutex> stop(stopMutex_);
  while (!wake_.wait_for(stop, tick_, [this] { return stopping_; })) {
    stop.unlock();
    Clock::time_point now = Clock::now();
    // An application that calls in did the duties during the last tick
    // (progress() runs them): mutex_ is left to it. Otherwise progress
    // here, so pings of our peers are answered and the provider's
    // connections serviced even when the application calls nothing.
    if (now.time_since_epoch().count() - lastService_.load(std::memory_order_relaxed) >=
        tick_.count()) {
      std::lock_guard<std::mutex> lock(mutex_);
      progress();
    }
    if (strays_ && now >= nextSweep) {
      nextSweep = now + std::chrono::seconds(1);
      strays_->sweep();  // reads /proc only: no provider call, no lock
    }
    stop.lock();
  }
}

void Endpoint::onProbe(const ProbeMessage& message, size_t length) {
  constexpr size_t header = offsetof(ProbeMessage, address);
  if (length < header || message.magic != kProbeMagic) {
    NCCLNET_INFO(log_, NCCL_NET, "ignoring a malformed %zu-byte ping", length);
    return;
  }
  Clock::time_point now = Clock::now();
  if (message.kind == kPong) {
    for (auto& entry : peers_) {
      if (entry.second->id() == message.token) entry.second->heard(now);
    }
    return;
  }
  if (message.kind != kPing || message.addressLength == 0 || message.addressLength > kMaxAddress ||
      length < header + message.addressLength) {
    NCCLNET_INFO(log_, NCCL_NET, "ignoring a malformed ping (kind %u, %u-byte address)",
                 message.kind, message.addressLength);
    return;
  }
  Remote* pinger = nullptr;
  if (resolve(message.address, message.addressLength, &pinger) != ncclSuccess) return;
  pinger->heard(now);
  pinger->answer(message.token);
}

}  // namespace ncclnet::ofi
