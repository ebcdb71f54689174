// SPDX-License-Identifier: Apache-2.0
// sdk-socket: one data socket with its queue of byte ranges to move, and
// the helper thread that drives a set of them.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "fd.hpp"
#include "health.hpp"

namespace ncclnet::socketnet {

// A byte range of one request; `remaining` counts the request's unfinished
// ranges and is decremented when this one completes.
struct Task {
  char* data = nullptr;
  size_t size = 0;
  size_t done = 0;
  std::atomic<int>* remaining = nullptr;
};

class Stream {
 public:
  enum class State { Idle, Pending };

  Stream(Fd fd, bool sending, int index, Health* health)
      : fd_(std::move(fd)), sending_(sending), index_(index), health_(health) {}

  // Queues a range (size > 0). Returns true when the queue was empty, i.e.
  // the driver may be asleep and needs a wake-up.
  bool push(char* data, size_t size, std::atomic<int>* remaining);

  // Moves what the socket accepts (or holds) without blocking. Pending: tasks
  // remain and the socket is full (or empty); Idle: nothing queued. Any
  // thread may call it; calls are serialized.
  State progress();
  // The same, unless another thread is driving the stream right now (then
  // that thread makes the progress and this call returns at once).
  State tryProgress();

  int fd() const { return fd_.get(); }
  bool sending() const { return sending_; }

 private:
  State progressLocked();

  std::mutex mutex_;
  std::deque<Task> tasks_;
  Fd fd_;
  bool sending_;
  int index_;
  Health* health_;
  bool failed_ = false;
};

// A helper thread: drives its streams, sleeps in poll() on the sockets that
// have work (and on an eventfd for new work), and never spins.
class Worker {
 public:
  Worker(std::vector<Stream*> streams, Health* health);
  ~Worker();  // stops and joins; streams must outlive the worker
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  bool started() const { return thread_.joinable(); }
  void wake();

 private:
  void run();

  std::vector<Stream*> streams_;
  Health* health_;
  Fd wakeFd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ncclnet::socketnet
