// SPDX-License-Identifier: Apache-2.0
// softverbs: asynchronous events, delivered as libibverbs delivers them.
// Each context has a queue and an fd (ibv_context::async_fd) that polls
// readable while the queue holds an event. ibv_get_async_event blocks on it
// unless the application made the fd non-blocking with fcntl, then it fails
// with EAGAIN, as on the kernel's uverbs async file.
//
// An event naming a QP or CQ is outstanding from the moment it is read
// until ibv_ack_async_event; destroying the object waits for those, and
// drops events for it that were never read, as the kernel does.
#pragma once

#include <infiniband/verbs.h>

#include <condition_variable>
#include <deque>
#include <mutex>

namespace softverbs {

class AsyncQueue {
 public:
  AsyncQueue();
  ~AsyncQueue();
  AsyncQueue(const AsyncQueue&) = delete;
  AsyncQueue& operator=(const AsyncQueue&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  void push(const ibv_async_event& event);
  // ibv_get_async_event: 0, or -1 with errno (EAGAIN on a non-blocking fd).
  int get(ibv_async_event* event);
  // Drops unread events that name `object`, a QP or CQ being destroyed.
  void drop(const void* object);

 private:
  void settle();  // the fd polls readable exactly while events_ is not empty

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<ibv_async_event> events_;
  int fd_ = -1;
  bool signalled_ = false;
};

// The QP or CQ an event names; nullptr for port and device events.
const void* objectOf(const ibv_async_event& event);
// Whether an event of this type names a QP (event.element.qp).
bool isQpEvent(int type);

// Read-but-unacknowledged events per QP or CQ, process-wide (an ack names
// only the object). awaitAcks waits for them before the object goes, for
// at most a few seconds, then says so on stderr and lets it go.
void noteRead(const void* object);
void noteAcked(const void* object);
void awaitAcks(const void* object, const char* what);

}  // namespace softverbs
