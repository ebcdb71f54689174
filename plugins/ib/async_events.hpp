// SPDX-License-Identifier: Apache-2.0
// sdk-ib: asynchronous events of an HCA (ibv_get_async_event). Fatal ones
// turn the affected comms' next isend/irecv/iflush/test into an error;
// the others are logged at INFO.
//
// One watcher thread per opened HCA, as NCCL's IB transport has, rather
// than reading events from the data path: events come for HCAs whose comms
// sit idle (a link going down between two collectives) and must be
// acknowledged promptly, since libibverbs' ibv_destroy_qp waits until every
// event read for the QP is acknowledged; and the data path stays free of
// system calls, checking a comm costs one atomic load. Unlike NCCL's, the
// thread never blocks in ibv_get_async_event: the async fd is made
// non-blocking, the thread sleeps in poll() on it and on a wake-up fd, and
// the HCA's close stops it at once (at worst within one poll timeout).
//
// Each fatal event gets exactly one log line, the watcher's WARN naming the
// event, the HCA, the port, the QP and connection, and a hint. The comms
// then fail without a line of their own, like the flushes that follow a
// failed completion.
//
//   hca.events = AsyncWatcher::start(api, context, "mlx5_0", log, &why);
//   hca.events->watch(qp, port, health, "send comm to 10.0.0.2:41000");
//   if (health->code() != ncclSuccess) ...   // on every data-path call
#pragma once

#include <infiniband/verbs.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "ibv_api.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"
#include "ncclnet/sticky_error.hpp"

namespace ncclnet::ib {

// One comm's first failure, shared with the watcher: a fatal event records
// its result there (the watcher logs one line for all the comms it fails),
// and so does the comm's own first failure.
using Health = ncclnet::StickyError;

// How sdk-ib treats one event type.
struct EventClass {
  enum Scope { kDevice, kPort, kQp, kCq, kUnused };
  const char* name;     // "IBV_EVENT_QP_FATAL"
  Scope scope;          // what the event names
  bool fatal;           // the affected comms fail
  ncclResult_t result;  // what they then return
  const char* hint;     // for the log line
};
EventClass classifyEvent(int type);

class AsyncWatcher {
 public:
  // Watches `context` (named `hca` in messages) until destroyed. nullptr
  // with *why when the verbs library has no async event calls or the
  // context no async fd.
  static std::unique_ptr<AsyncWatcher> start(const IbvApi& api, ibv_context* context,
                                             const std::string& hca, const ncclnet::Logger& log,
                                             std::string* why);
  ~AsyncWatcher();
  AsyncWatcher(const AsyncWatcher&) = delete;
  AsyncWatcher& operator=(const AsyncWatcher&) = delete;

  // Events on `qp` (or `cq`) and on `port` fail `health`; `what` names the
  // connection in the log ("send comm to 10.0.0.2:41000").
  void watch(const ibv_qp* qp, int port, std::shared_ptr<Health> health, const std::string& what);
  void watch(const ibv_cq* cq, int port, std::shared_ptr<Health> health, const std::string& what);
  // Before the QP or CQ is destroyed.
  void unwatch(const void* object);

  // Handles the events already delivered, now, in the calling thread. A
  // comm whose QP was flushed calls it first: the event that explains the
  // flush is then counted before the flush is.
  void pollNow();

 private:
  struct Watched {
    int port;
    std::shared_ptr<Health> health;
    std::string what;
  };

  AsyncWatcher(const IbvApi& api, ibv_context* context, const std::string& hca,
               const ncclnet::Logger& log, int wakeFd);
  void run();
  void drainLocked();
  void handleLocked(const ibv_async_event& event);
  // The comms with an object on `port` (0: anywhere on the HCA) that have
  // not failed yet; then failing them all.
  int liveLocked(int port) const;
  void failLocked(int port, ncclResult_t result, const char* name);

  const IbvApi& api_;
  ibv_context* context_;
  std::string hca_;
  ncclnet::Logger log_;
  int wakeFd_;
  pid_t owner_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // the registry, and reading the async fd
  std::unordered_map<const void*, Watched> watched_;
  std::thread thread_;
};

}  // namespace ncclnet::ib
