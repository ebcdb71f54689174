// SPDX-License-Identifier: Apache-2.0
// sdk-socket: data sockets and their helper threads.
#include "stream.hpp"

#include <poll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>

namespace ncclnet::socketnet {

namespace {
// A worker re-checks its stop flag at least this often even if no wake-up
// arrives; a bound on shutdown, not a polling interval.
constexpr int kMaxSleepMs = 500;
}  // namespace

bool Stream::push(char* data, size_t size, std::atomic<int>* remaining) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool wasEmpty = tasks_.empty();
  tasks_.push_back(Task{data, size, 0, remaining});
  return wasEmpty;
}

Stream::State Stream::progress() {
  std::lock_guard<std::mutex> lock(mutex_);
  return progressLocked();
}

Stream::State Stream::tryProgress() {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return State::Pending;
  return progressLocked();
}

Stream::State Stream::progressLocked() {
  if (failed_) {
    tasks_.clear();  // the comm is dead; its requests report the error
    return State::Idle;
  }
  while (!tasks_.empty()) {
    Task& task = tasks_.front();
    size_t moved = 0;
    char* at = task.data + task.done;
    size_t left = task.size - task.done;
    Io io =
        sending_ ? sendSome(fd_.get(), at, left, &moved) : recvSome(fd_.get(), at, left, &moved);
    if (io == Io::Moved) {
      task.done += moved;
      if (task.done == task.size) {
        task.remaining->fetch_sub(1, std::memory_order_acq_rel);
        tasks_.pop_front();
      }
      continue;
    }
    if (io == Io::WouldBlock) return State::Pending;
    int err = errno;
    failed_ = true;
    tasks_.clear();
    if (io == Io::Closed) {
      health_->fail(ncclRemoteError,
                    "data socket %d: connection closed by the peer with %zu bytes "
                    "of a transfer outstanding",
                    index_, left);
    } else {
      health_->fail(ncclSystemError, "data socket %d: %s failed: %s", index_,
                    sending_ ? "send" : "recv", std::strerror(err));
    }
    return State::Idle;
  }
  return State::Idle;
}

Worker::Worker(std::vector<Stream*> streams, Health* health)
    : streams_(std::move(streams)),
      health_(health),
      wakeFd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!wakeFd_.valid()) {
    health_->fail(ncclSystemError, "eventfd for a helper thread failed: %s", std::strerror(errno));
    return;
  }
  thread_ = std::thread([this] { run(); });
}

Worker::~Worker() {
  stop_.store(true, std::memory_order_release);
  wake();
  if (thread_.joinable()) thread_.join();
}

void Worker::wake() {
  uint64_t one = 1;
  // A full counter (never in practice) still leaves the fd readable.
  ssize_t ignored = ::write(wakeFd_.get(), &one, sizeof(one));
  (void)ignored;
}

void Worker::run() {
  std::vector<pollfd> fds;
  fds.reserve(streams_.size() + 1);
  while (!stop_.load(std::memory_order_acquire)) {
    fds.assign(1, pollfd{wakeFd_.get(), POLLIN, 0});
    for (Stream* stream : streams_) {
      if (stream->progress() == Stream::State::Pending) {
        fds.push_back(
            pollfd{stream->fd(), static_cast<short>(stream->sending() ? POLLOUT : POLLIN), 0});
      }
    }
    int n = ::poll(fds.data(), fds.size(), kMaxSleepMs);
    if (n < 0 && errno != EINTR) {
      health_->fail(ncclSystemError, "helper thread poll failed: %s", std::strerror(errno));
      return;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      ssize_t ignored = ::read(wakeFd_.get(), &count, sizeof(count));
      (void)ignored;
    }
  }
}

}  // namespace ncclnet::socketnet
