// SPDX-License-Identifier: Apache-2.0
// sdk-socket: one data socket with its queue of byte ranges to move, and
// the helper thread that drives a set of them.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ncclnet/socket_io.hpp"
#include "health.hpp"
#include "machine_load.hpp"
#include "timeline.hpp"

namespace ncclnet::socket {

// A byte range of one request; `pending` counts the request's unfinished
// ranges and is told when this one completes.
struct Task {
  char* data = nullptr;
  size_t size = 0;
  size_t done = 0;
  Pending* pending = nullptr;
};

class Stream {
 public:
  enum class State { Idle, Pending };

  Stream(Fd fd, bool sending, int index, Health* health)
      : fd_(std::move(fd)), sending_(sending), index_(index), health_(health) {}

  // Queues a range (size > 0); the stream's driver must be woken after.
  // Never waits for the socket: the queue has its own lock, which the
  // driver holds only to look at or drop a task, not while it moves bytes.
  void push(char* data, size_t size, Pending* pending);

  // Moves what the socket accepts (or holds) without blocking. Pending: tasks
  // remain and the socket is full (or empty); Idle: nothing queued. Sets
  // `*moved` when at least one byte moved. Any thread may call it; calls are
  // serialized.
  State progress(bool* moved);

  int fd() const { return fd_.get(); }
  bool sending() const { return sending_; }

 private:
  State progressLocked(bool* moved);
  // The oldest task, or nullptr. A deque keeps it in place while push()
  // appends, so the driver may work on it without the queue lock.
  Task* front();
  void popFront();
  void dropAll();

  // NCCL's one progress thread queues every comm's stripes; were push() to
  // wait while a helper copies a 128 KiB stripe into the kernel, every other
  // comm of the process would wait with it. Hence two locks: `driving_`
  // serializes drivers (held during I/O), `queue_` guards the deque only.
  std::mutex driving_;
  std::mutex queue_;
  std::deque<Task> tasks_;
  Fd fd_;
  bool sending_;
  int index_;
  Health* health_;
};

// How many helper threads one plugin instance runs, against its cores.
// Spinning pays while every helper can have a core of its own; once they
// outnumber the cores, spinning helpers take the cores NCCL's progress
// threads need (docs/performance.md, fifth round). The process is not
// the whole story where every rank is a process of its own: with a
// `machine`, helpers are also crowded while the machine has half again as
// many runnable threads as CPUs.
class HelperCensus {
 public:
  explicit HelperCensus(int cores, std::unique_ptr<MachineLoad> machine = nullptr)
      : cores_(cores), machine_(std::move(machine)) {}
  void join() { threads_.fetch_add(1, std::memory_order_relaxed); }
  void leave() { threads_.fetch_sub(1, std::memory_order_relaxed); }
  int threads() const { return threads_.load(std::memory_order_relaxed); }
  bool crowded() { return threads() > cores_ || (machine_ && machine_->busy()); }
  // Claims the helper threads a new comm should start when it would like
  // `wanted`: all of them while they fit the cores, else half (threads then
  // take the sockets in turn): with many comms (8 channels: 16 per rank),
  // one thread per socket would start far more helpers than cores, which
  // trailed two sockets per thread (docs/performance.md, fifth round). A claim counts
  // until release(), which the comm calls once its threads have joined:
  // comms created at the same moment (one per rank's service thread) see
  // each other's threads before those start.
  int claim(int wanted) {
    int claimed = claimed_.load(std::memory_order_relaxed);
    for (;;) {
      int taken = threads() + claimed;
      int granted = wanted > 1 && taken + wanted > cores_ ? (wanted + 1) / 2 : wanted;
      if (claimed_.compare_exchange_weak(claimed, claimed + granted, std::memory_order_relaxed)) {
        return granted;
      }
    }
  }
  void release(int claimed) { claimed_.fetch_sub(claimed, std::memory_order_relaxed); }

 private:
  const int cores_;
  std::unique_ptr<MachineLoad> machine_;
  std::atomic<int> threads_{0};
  std::atomic<int> claimed_{0};  // threads of comms still being built
};

// How long a helper keeps retrying before it sleeps in poll(). A stalled
// stripe (its socket full or empty while bytes remain) is worth retrying:
// its data is on the way, and a wake-up from poll() costs 20 us and more on
// a many-core host. An idle helper has no such promise, but during a
// collective the next message comes within a few hundred microseconds, so
// from 8 cores it looks for one for 1 ms; with an idle patience of 0 it
// sleeps at once and costs no CPU between messages.
struct Patience {
  std::chrono::microseconds stalled{0};
  std::chrono::microseconds idle{0};
};

// A helper thread: drives its streams while they move bytes, retries them
// for `patience` once they stall or run dry (not at all while `census` is
// crowded), then sleeps in poll() on the sockets that have work (and on an
// eventfd for new work).
class Worker {
 public:
  // `census` must outlive the worker.
  Worker(std::vector<Stream*> streams, Patience patience, HelperCensus* census, Health* health);
  ~Worker();  // stops and joins; streams must outlive the worker
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  bool started() const { return thread_.joinable(); }
  // How often the thread went to sleep in poll() (tests watch the spin rule).
  unsigned long sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  // Call after queueing work: wakes the thread only if it sleeps (a thread
  // still retrying finds the work by itself, without a system call).
  void wake();

 private:
  void run();
  // Progresses every stream once; true when bytes moved. `pending` collects
  // the streams still waiting on their socket.
  bool driveAll(std::vector<Stream*>* pending);
  // Sleeps in poll() until one of `pending` is ready, new work arrives, or
  // the shutdown bound passes; returns at once if work arrived since the
  // last pass. False when the bound passed (or a signal came) with nothing
  // to do.
  bool sleep(const std::vector<Stream*>& pending);
  void interrupt();

  std::vector<Stream*> streams_;
  Patience patience_;
  HelperCensus* census_;
  Health* health_;
  Fd wakeFd_;
  std::atomic<bool> stop_{false};
  // kSleeping: the thread is (about to be) in poll(); kNotified: work was
  // queued since its last pass. Both sides change this word only by
  // read-modify-write, so whichever of "queue, then notify" and "set
  // sleeping, then check" comes second sees the other: no wake-up is lost,
  // and no fence is needed (which ThreadSanitizer could not follow).
  static constexpr unsigned kSleeping = 1;
  static constexpr unsigned kNotified = 2;
  std::atomic<unsigned> state_{0};
  std::atomic<unsigned long> sleeps_{0};
  std::thread thread_;
};

}  // namespace ncclnet::socket
