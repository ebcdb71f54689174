// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the CPU device peer — NCCL's kernel
// side of net connections, on one thread (see host_device_peer.hpp).
#include "ncclnet/transport/host_device_peer.hpp"

#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "idle_backoff.hpp"
#include "ncclnet/transport/lines.hpp"
#include "ncclnet/transport/pattern.hpp"
#include "ncclnet/transport/steps.hpp"

namespace ncclnet::transport {

namespace {

using Clock = std::chrono::steady_clock;

class HostCompletion final : public DeviceCompletion {
 public:
  ncclResult_t wait(std::chrono::milliseconds timeout, std::string* detail) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [this] { return done_; })) {
      if (detail) *detail = "device work still running (the peer's own deadline has not passed)";
      return ncclTimeout;
    }
    if (detail) *detail = detail_;
    return result_;
  }
  void finish(ncclResult_t result, std::string detail) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (done_) return;
      done_ = true;
      result_ = result;
      detail_ = std::move(detail);
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  ncclResult_t result_ = ncclSuccess;
  std::string detail_;
};

struct Launch;

// One work's progress through its slices.
struct WorkState {
  DeviceWork work;
  Launch* launch = nullptr;
  StepPlan plan;
  bool begun = false;
  bool finished = false;
  size_t slice = 0;   // next slice
  size_t offset = 0;  // payload bytes moved so far
  uint64_t step = 0;  // absolute step of the next slice
  std::vector<uint8_t> scratch;
  uint64_t unpackHead = 0;  // UNPACK receive: the kernel's copy of handle->head
  Clock::time_point lastMove;
  const char* waitingFor = "start";
};

struct Launch {
  std::list<WorkState> works;
  std::shared_ptr<HostCompletion> completion;
  std::chrono::milliseconds timeout{0};
  size_t remaining = 0;
  bool failed = false;
};

enum class Move { Blocked, Advanced, Failed };

}  // namespace

class HostDevicePeer::Impl {
 public:
  explicit Impl(Logger logger) : log_(logger), thread_([this] { run(); }) {}
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void launch(std::unique_ptr<Launch> l) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      incoming_.push_back(std::move(l));
    }
    cv_.notify_all();
  }

 private:
  void run();
  Move advance(WorkState& w, std::string* error);
  Move advanceSend(WorkState& w, std::string* error);
  Move advanceRecv(WorkState& w, std::string* error);
  void fail(Launch& l, std::string why);

  Logger log_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<std::unique_ptr<Launch>> incoming_;
  std::list<std::unique_ptr<Launch>> launches_;
  // Works per connection in launch order: only the front one runs, as a
  // stream runs kernels on one connection one after another.
  std::map<DeviceConnection*, std::deque<WorkState*>> queues_;
  std::thread thread_;
};

namespace {

char* sliceBuffer(const DeviceWork& w, int slot) {
  DeviceConnection& c = *w.connection;
  int p = index(w.protocol);
  if (w.protocol == Protocol::Simple && c.offsetMode) {
    return c.buffs[p] + c.recvMem->connFifo[slot].offset.load(std::memory_order_acquire);
  }
  return c.buffs[p] + static_cast<size_t>(slot) * c.stepSize[p];
}

// A receive connection whose SIMPLE steps arrive as bounce pages.
bool isUnpack(const DeviceConnection& c) {
  return c.hasNetDeviceHandle && c.netDeviceHandle.netDeviceType == NCCL_NET_DEVICE_UNPACK;
}

// The plugin's unpack queue of such a connection, or nullptr.
ncclNetUnpackDeviceHandle* unpackHandle(const DeviceConnection& c) {
  return isUnpack(c) ? static_cast<ncclNetUnpackDeviceHandle*>(c.netDeviceHandle.handle) : nullptr;
}

// What NCCL's receive kernel does before it reads a SIMPLE step of an
// UNPACK connection (after head moved on to this step): copy each entry of
// queue slot head % 16 from the
// bounce area into the step. Checks what the kernel trusts: the count and
// that no entry reaches past the slice. Empty on success.
std::string unpackSlice(const ncclNetUnpackDeviceHandle& h, uint64_t head, uint8_t* slice,
                        size_t sliceBytes) {
  size_t slot = head % NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH;
  uint64_t count = __atomic_load_n(&h.meta->cnt[slot], __ATOMIC_ACQUIRE);
  char what[200];
  if (count > NCCL_NET_UNPACK_MAX_SLICE_PAGES) {
    std::snprintf(what, sizeof(what),
                  "UNPACK queue slot %zu holds %" PRIu64 " entries (at most %d)", slot, count,
                  NCCL_NET_UNPACK_MAX_SLICE_PAGES);
    return what;
  }
  const auto* bounce = static_cast<const uint8_t*>(h.bounce_buf);
  for (uint64_t i = 0; i < count; i++) {
    const ncclNetUnpackLoadMeta& e = h.meta->mem[slot][i];
    if (e.dst_off > sliceBytes || e.len > sliceBytes - e.dst_off) {
      std::snprintf(what, sizeof(what),
                    "UNPACK entry %" PRIu64 " of slot %zu copies %u bytes to offset %" PRIu64
                    " of a %zu-byte slice",
                    i, slot, e.len, e.dst_off, sliceBytes);
      return what;
    }
    std::memcpy(slice + e.dst_off, bounce + e.src_off, e.len);
  }
  return "";
}

std::string describeWork(const WorkState& w, const char* what) {
  char text[320];
  std::snprintf(text, sizeof(text),
                "%s %s work, slice %zu/%zu (step %" PRIu64 ", payload offset %zu): %s",
                directionName(w.work.connection->direction), protocolName(w.work.protocol), w.slice,
                w.plan.sliceBytes.size(), w.step, w.offset, what);
  return text;
}

}  // namespace

Move HostDevicePeer::Impl::advanceSend(WorkState& w, std::string* error) {
  (void)error;
  const DeviceWork& work = w.work;
  DeviceConnection& c = *work.connection;
  uint64_t head = c.sendMem->head.load(std::memory_order_acquire);
  if (head + kSteps < w.step + work.sliceSteps) {
    w.waitingFor = "head credit from the proxy";
    return Move::Blocked;
  }
  int slot = static_cast<int>(w.step % kSteps);
  size_t n = w.plan.sliceBytes[w.slice];
  // Like the kernel: the size first, then the payload, then the signal.
  c.recvMem->connFifo[slot].size.store(static_cast<int64_t>(encodedBytes(work.protocol, n)),
                                       std::memory_order_relaxed);
  bool verify = work.mode == DataMode::Verify;
  if (work.userBuffer != nullptr) {
    // The application's data is already in its registered buffer; here the
    // pattern stands in for it. The proxy sends straight from there.
    if (verify)
      fillPattern(reinterpret_cast<uint8_t*>(work.userBuffer) + w.offset, n, work.seed, w.offset);
    c.recvMem->tail.store(w.step + work.sliceSteps, std::memory_order_release);
    return Move::Advanced;
  }
  char* buff = sliceBuffer(work, slot);
  switch (work.protocol) {
    case Protocol::Simple:
      if (verify) fillPattern(reinterpret_cast<uint8_t*>(buff), n, work.seed, w.offset);
      c.recvMem->tail.store(w.step + work.sliceSteps, std::memory_order_release);
      break;
    case Protocol::LL:
      w.scratch.assign(n, 0);
      if (verify) fillPattern(w.scratch.data(), n, work.seed, w.offset);
      llWrite(buff, w.scratch.data(), n, llFlag(w.step));
      break;
    case Protocol::LL128:
      w.scratch.assign(n, 0);
      if (verify) fillPattern(w.scratch.data(), n, work.seed, w.offset);
      ll128Write(buff, w.scratch.data(), n, ll128Flag(w.step));
      c.recvMem->tail.store(w.step + work.sliceSteps, std::memory_order_release);
      break;
  }
  return Move::Advanced;
}

Move HostDevicePeer::Impl::advanceRecv(WorkState& w, std::string* error) {
  const DeviceWork& work = w.work;
  DeviceConnection& c = *work.connection;
  uint64_t tail = c.recvMem->tail.load(std::memory_order_acquire);
  bool arrived = tail >= w.step + work.sliceSteps;  // the proxy says the bytes are in place
  int slot = static_cast<int>(w.step % kSteps);
  size_t n = w.plan.sliceBytes[w.slice];
  bool verify = work.mode == DataMode::Verify;
  const uint8_t* payload = nullptr;
  if (work.protocol == Protocol::Simple) {
    if (!arrived) {
      w.waitingFor = "tail from the proxy";
      return Move::Blocked;
    }
    uint8_t* target = work.userBuffer != nullptr
                          ? reinterpret_cast<uint8_t*>(work.userBuffer) + w.offset
                          : reinterpret_cast<uint8_t*>(sliceBuffer(work, slot));
    if (isUnpack(c)) {
      const ncclNetUnpackDeviceHandle* h = unpackHandle(c);
      w.unpackHead++;  // as NCCL's kernel: head moves on, then the slot is read
      std::string bad = h == nullptr ? "the plugin's UNPACK device handle has no unpack queue"
                                     : unpackSlice(*h, w.unpackHead, target, n);
      if (!bad.empty()) {
        *error = describeWork(w, bad.c_str());
        return Move::Failed;
      }
    }
    payload = target;
  } else {
    w.scratch.resize(n);
    const char* buff = sliceBuffer(work, slot);
    bool flagsSet = work.protocol == Protocol::LL
                        ? llRead(buff, n, llFlag(w.step), w.scratch.data())
                        : ll128Read(buff, n, ll128Flag(w.step), w.scratch.data());
    if (!flagsSet) {
      w.waitingFor = work.protocol == Protocol::LL ? "LL line flags" : "LL128 line flags";
      return Move::Blocked;
    }
    payload = w.scratch.data();
  }
  if (verify) {
    size_t bad = findMismatch(payload, n, work.seed, w.offset);
    if (bad != n) {
      if (work.protocol != Protocol::Simple && !arrived) {
        // Flags are in but a payload word is not yet: a copy that stores in
        // another order than a NIC. Look again until the proxy's tail passed.
        w.waitingFor = "LL/LL128 payload behind its flags";
        return Move::Blocked;
      }
      char what[200];
      std::snprintf(what, sizeof(what),
                    "payload byte %zu of the slice (message byte %zu) is 0x%02x, expected 0x%02x",
                    bad, w.offset + bad, payload[bad], [&] {
                      uint8_t e = 0;
                      fillPattern(&e, 1, work.seed, w.offset + bad);
                      return e;
                    }());
      *error = describeWork(w, what);
      return Move::Failed;
    }
  }
  c.sendMem->head.store(w.step + work.sliceSteps, std::memory_order_release);
  return Move::Advanced;
}

Move HostDevicePeer::Impl::advance(WorkState& w, std::string* error) {
  DeviceConnection& c = *w.work.connection;
  if (!w.begun) {
    w.begun = true;
    w.step = roundUp(c.step, w.work.chunkSteps);
    // The receiving kernel returns the credits a round-up skipped.
    if (c.direction == Direction::Recv) c.sendMem->head.store(w.step, std::memory_order_release);
    // A registered receive buffer is free for the network from now on.
    if (c.direction == Direction::Recv && w.work.userBuffer != nullptr) {
      c.recvMem->connFifo[w.step % kSteps].size.store(0, std::memory_order_release);
    }
    if (const ncclNetUnpackDeviceHandle* h = unpackHandle(c)) w.unpackHead = h->head;
  }
  Move m = c.direction == Direction::Send ? advanceSend(w, error) : advanceRecv(w, error);
  if (m != Move::Advanced) return m;
  w.offset += w.plan.sliceBytes[w.slice];
  w.slice++;
  w.step += w.work.sliceSteps;
  if (w.slice == w.plan.sliceBytes.size()) {
    w.finished = true;
    c.step = w.step;
    // Like the kernel at the end of its primitives: the next one resumes here.
    if (ncclNetUnpackDeviceHandle* h = unpackHandle(c)) h->head = w.unpackHead;
  }
  return m;
}

void HostDevicePeer::Impl::fail(Launch& l, std::string why) {
  if (l.failed) return;
  l.failed = true;
  NCCLNET_WARN(log_, "%s", why.c_str());
  l.completion->finish(ncclSystemError, std::move(why));
}

void HostDevicePeer::Impl::run() {
  detail::IdleBackoff backoff;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (launches_.empty() && incoming_.empty() && !stop_)
        cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (stop_) break;
      while (!incoming_.empty()) {
        Launch* l = incoming_.front().get();
        for (WorkState& w : l->works) {
          w.lastMove = Clock::now();
          queues_[w.work.connection].push_back(&w);
        }
        launches_.push_back(std::move(incoming_.front()));
        incoming_.pop_front();
      }
    }
    bool moved = false;
    auto now = Clock::now();
    for (auto& entry : queues_) {
      std::deque<WorkState*>& queue = entry.second;
      while (!queue.empty()) {
        WorkState& w = *queue.front();
        Launch& l = *w.launch;
        if (l.failed) {  // a failed kernel stops all its works
          queue.pop_front();
          continue;
        }
        std::string error;
        Move m = Move::Advanced;
        for (int burst = 0; burst < kSteps && !w.finished && m == Move::Advanced; burst++) {
          m = advance(w, &error);
          if (m == Move::Advanced) {
            moved = true;
            w.lastMove = now;
          }
        }
        if (m == Move::Failed) {
          fail(l, error);
          queue.pop_front();
          continue;
        }
        if (w.finished) {
          queue.pop_front();
          if (--l.remaining == 0) l.completion->finish(ncclSuccess, "");
          continue;
        }
        if (now - w.lastMove > l.timeout) {
          fail(l, describeWork(w, (std::string("timed out waiting for ") + w.waitingFor).c_str()));
          queue.pop_front();
        }
        break;
      }
    }
    for (auto it = launches_.begin(); it != launches_.end();) {
      Launch& l = **it;
      bool live = false;
      for (auto& entry : queues_) {
        for (WorkState* w : entry.second) live = live || w->launch == &l;
      }
      if (!live) {
        if (!l.failed && l.remaining != 0) fail(l, "device work dropped");
        it = launches_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = queues_.begin(); it != queues_.end();) {
      it = it->second.empty() ? queues_.erase(it) : std::next(it);
    }
    backoff.pass(moved);
  }
  for (auto& l : launches_) fail(*l, "device peer stopped");
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& l : incoming_) fail(*l, "device peer stopped");
}

HostDevicePeer::HostDevicePeer(Logger logger) : impl_(std::make_unique<Impl>(logger)) {}
HostDevicePeer::~HostDevicePeer() = default;

ncclResult_t HostDevicePeer::launch(std::vector<DeviceWork> works,
                                    std::chrono::milliseconds timeout,
                                    std::shared_ptr<DeviceCompletion>* out) {
  auto l = std::make_unique<Launch>();
  auto completion = std::make_shared<HostCompletion>();
  l->completion = completion;
  l->timeout = timeout;
  for (DeviceWork& work : works) {
    if (work.connection == nullptr || work.sliceCapacity == 0 || work.sliceSteps < 1 ||
        work.connection->buffs[index(work.protocol)] == nullptr ||
        (work.userBuffer != nullptr &&
         (work.protocol != Protocol::Simple || work.sliceSteps != 1))) {
      return ncclInvalidArgument;
    }
    WorkState w;
    w.work = work;
    w.launch = l.get();
    w.plan = planSteps(work.nbytes, work.sliceCapacity, work.sliceSteps);
    l->works.push_back(std::move(w));
  }
  l->remaining = l->works.size();
  *out = completion;
  if (l->works.empty()) {
    completion->finish(ncclSuccess, "");
    return ncclSuccess;
  }
  impl_->launch(std::move(l));
  return ncclSuccess;
}

}  // namespace ncclnet::transport
