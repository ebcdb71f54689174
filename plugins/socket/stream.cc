// SPDX-License-Identifier: Apache-2.0
// sdk-socket: data sockets and their helper threads.
#include "stream.hpp"
#include "ncclnet/thread_name.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ncclnet::socket {

namespace {
// A worker re-checks its stop flag at least this often even if no wake-up
// arrives; a bound on shutdown, not a polling interval.
constexpr int kMaxSleepMs = 500;
}  // namespace

void Stream::push(char* data, size_t size, Pending* pending) {
  std::lock_guard<std::mutex> lock(queue_);
  tasks_.push_back(Task{data, size, 0, pending});
}

Task* Stream::front() {
  std::lock_guard<std::mutex> lock(queue_);
  return tasks_.empty() ? nullptr : &tasks_.front();
}

void Stream::popFront() {
  std::lock_guard<std::mutex> lock(queue_);
  tasks_.pop_front();
}

void Stream::dropAll() {
  std::lock_guard<std::mutex> lock(queue_);
  tasks_.clear();
}

Stream::State Stream::progress(bool* moved) {
  std::lock_guard<std::mutex> lock(driving_);
  return progressLocked(moved);
}

Stream::State Stream::progressLocked(bool* moved) {
  for (;;) {
    // Once the comm failed (this socket or another), test() reports the
    // error for every request, and NCCL may free their buffers: checked
    // before every system call, which leaves a failure only the one call in
    // flight to overlap.
    if (!health_->ok()) {
      dropAll();
      return State::Idle;
    }
    Task* front = this->front();
    if (front == nullptr) return State::Idle;
    Task& task = *front;
    size_t count = 0;
    char* at = task.data + task.done;
    size_t left = task.size - task.done;
    Io io =
        sending_ ? sendSome(fd_.get(), at, left, &count) : recvSome(fd_.get(), at, left, &count);
    if (io == Io::Moved) {
      *moved = true;
      task.done += count;
      if (task.done == task.size) {
        Pending* pending = task.pending;
        popFront();
        pending->finishOne();  // last: the request may be freed right after
      }
      continue;
    }
    if (io == Io::WouldBlock) return State::Pending;
    int err = errno;
    dropAll();
    if (io == Io::Closed) {
      health_->fail(Failure::kPeerGone,
                    "data socket %d: connection closed by the peer with %zu bytes "
                    "of a transfer outstanding",
                    index_, left);
    } else {
      health_->fail(Failure::kPeerGone, "data socket %d: %s failed: %s", index_,
                    sending_ ? "send" : "recv", std::strerror(err));
    }
    return State::Idle;
  }
}

Worker::Worker(std::vector<Stream*> streams, Patience patience, HelperCensus* census,
               Health* health)
    : streams_(std::move(streams)),
      patience_(patience),
      census_(census),
      health_(health),
      wakeFd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!wakeFd_.valid()) {
    health_->fail(Failure::kSystemCall, "eventfd for a helper thread failed: %s",
                  std::strerror(errno));
    return;
  }
  thread_ = std::thread([this] {
    nameThisThread("sdk-socket io");
    run();
  });
  census_->join();
}

Worker::~Worker() {
  stop_.store(true, std::memory_order_release);
  interrupt();
  if (thread_.joinable()) {
    thread_.join();
    census_->leave();
  }
}

void Worker::wake() {
  // Release: a pass that clears the flag afterwards sees the task queued
  // before this call.
  if (state_.fetch_or(kNotified, std::memory_order_acq_rel) & kSleeping) interrupt();
}

void Worker::interrupt() {
  uint64_t one = 1;
  // A full counter (never in practice) still leaves the fd readable.
  ssize_t ignored = ::write(wakeFd_.get(), &one, sizeof(one));
  (void)ignored;
}

bool Worker::driveAll(std::vector<Stream*>* pending) {
  pending->clear();
  bool moved = false;
  for (Stream* stream : streams_) {
    if (stream->progress(&moved) == Stream::State::Pending) pending->push_back(stream);
  }
  return moved;
}

void Worker::run() {
  // Retrying finds new bytes (and new work) without a wake-up system call;
  // the yield keeps a retrying helper from holding a core others wait for.
  // A stalled stripe's bytes are on the way, so it is retried for the
  // stalled patience; a helper with nothing queued looks for the next
  // stripe for the idle patience (from 8 cores, 1 ms: NCCL hands a comm a
  // message every 200 us or so during a collective, and a helper woken for
  // each one made few threads per comm pay nothing: docs/performance.md).
  using Clock = std::chrono::steady_clock;
  std::vector<Stream*> pending;
  pending.reserve(streams_.size());
  Clock::time_point waitingSince = Clock::now();
  bool stalled = false;
  // False once a sleep ran out its bound with nothing to do: the helper then
  // sleeps again at once rather than retrying its patience every 500 ms.
  bool patient = true;
  while (!stop_.load(std::memory_order_acquire)) {
    // Acquire: this pass sees every task whose wake() came before.
    state_.fetch_and(~kNotified, std::memory_order_acq_rel);
    bool moved = driveAll(&pending);
    // A wait starts afresh when bytes move and when the helper goes from
    // idle to stalled or back, so each kind gets its own patience.
    if (moved || stalled != !pending.empty()) {
      waitingSince = Clock::now();
      patient = true;
    }
    stalled = !pending.empty();
    if (moved) continue;
    auto patience = stalled ? patience_.stalled : patience_.idle;
    if (patient && Clock::now() - waitingSince < patience && !census_->crowded()) {
      sched_yield();
    } else {
      patient = sleep(pending);
      waitingSince = Clock::now();
    }
  }
}

bool Worker::sleep(const std::vector<Stream*>& pending) {
  if (state_.fetch_or(kSleeping, std::memory_order_acq_rel) & kNotified) {
    // Work was queued after the last pass began: drive it instead.
    state_.fetch_and(~kSleeping, std::memory_order_acq_rel);
    return true;
  }
  sleeps_.fetch_add(1, std::memory_order_relaxed);
  std::vector<pollfd> fds(1, pollfd{wakeFd_.get(), POLLIN, 0});
  for (Stream* stream : pending) {
    fds.push_back(
        pollfd{stream->fd(), static_cast<short>(stream->sending() ? POLLOUT : POLLIN), 0});
  }
  int n = ::poll(fds.data(), fds.size(), kMaxSleepMs);
  state_.fetch_and(~kSleeping, std::memory_order_acq_rel);
  if (n < 0 && errno != EINTR) {
    health_->fail(Failure::kSystemCall, "helper thread poll failed: %s", std::strerror(errno));
    stop_.store(true, std::memory_order_release);
    return false;
  }
  if (fds[0].revents & POLLIN) {
    uint64_t count;
    ssize_t ignored = ::read(wakeFd_.get(), &count, sizeof(count));
    (void)ignored;
  }
  return n > 0;
}

}  // namespace ncclnet::socket
