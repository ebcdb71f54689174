// SPDX-License-Identifier: Apache-2.0
// loopnet: an in-process test plugin for the reference transport, after the
// SDK's testnet design. Comms of one process meet in memory. Unlike testnet
// it routes each send to the oldest posted receive that still has a free
// buffer with its tag (what grouped receives through a shared comm need
// when several senders share the sendComm), accepts NCCL_PTR_CUDA (host
// memory standing in for device memory).
//
// Build variants (compile definitions), each one deliberate bug or mode:
//   LOOPNET_EARLY_COMPLETION  with two or more receives outstanding, the
//                             oldest completes when matched but its bytes
//                             land a few milliseconds later
//   LOOPNET_REORDER_SENDS     each send is held back until the next one is
//                             posted, which overtakes it (a lone send goes
//                             out after a few milliseconds)
//   LOOPNET_UNPACK            reports an UNPACK v7 device and fills the
//                             receive device handle (needsProxyProgress 1)
//   LOOPNET_DMABUF            also advertises NCCL_PTR_DMABUF and provides
//                             regMrDmaBuf (checks the fd is open and the
//                             offset lies inside it)
//   LOOPNET_CUDA              LOOPNET_DMABUF, and copies GPU memory on either
//                             side with the CUDA driver (reached at run time,
//                             never linked), as a NIC's DMA would: GPU-direct
//                             buffers work in one process
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ncclnet/detail/tsan.hpp"
#include "ncclnet/plugin.hpp"
#include "ncclnet/request_pool.hpp"
#ifdef LOOPNET_CUDA
#include "ncclnet/cuda_driver.hpp"
#define LOOPNET_DMABUF 1
#endif

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kHandleMagic = 0x6c6f'6f70'6e65'7431ull;  // "loopnet1"
constexpr int kMaxRecvs = 4;

struct Handle {
  uint64_t magic;
  uint64_t listenId;
  int connectCalls;
};

struct Region {
  char* base;
  size_t size;
};

struct Request {
  bool isSend = false;
  int n = 0;
  int matched = 0;
  int sizes[kMaxRecvs] = {};
  ncclResult_t error = ncclSuccess;
  Clock::time_point visibleAt{};  // EARLY_COMPLETION: when the bytes arrive
};

struct PostedRecv {
  Request* request;
  void* data[kMaxRecvs];
  size_t capacity[kMaxRecvs];
  int tags[kMaxRecvs];
  bool filled[kMaxRecvs];
};
struct PostedSend {
  Request* request;
  const void* data;
  size_t size;
  int tag;
};
struct LateCopy {
  void* dst;
  std::vector<char> bytes;
  Clock::time_point due;
};

// Copies `size` bytes; false when a GPU copy failed.
bool copyBytes(void* dst, const void* src, size_t size) {
#ifdef LOOPNET_CUDA
  namespace cu = ncclnet::cuda;
  const cu::Driver& driver = cu::Driver::get();
  cu::Context dstContext = nullptr, srcContext = nullptr;
  bool dstGpu = driver.available() && driver.isDeviceMemory(dst, &dstContext);
  bool srcGpu = driver.available() && driver.isDeviceMemory(src, &srcContext);
  if (dstGpu || srcGpu) {
    cu::ScopedContext scope(driver, dstGpu ? dstContext : srcContext);
    auto d = static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(dst));
    auto s = static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(src));
    cu::Result r = dstGpu && srcGpu ? driver.memcpyDtoD(d, s, size)
                   : dstGpu         ? driver.memcpyHtoD(d, src, size)
                                    : driver.memcpyDtoH(dst, s, size);
    return scope.ok() && r == cu::kSuccess;
  }
#endif
  std::memcpy(dst, src, size);
  return true;
}

struct Channel {
  std::mutex mutex;
  std::deque<PostedRecv> recvs;
  std::deque<PostedSend> sends;
  std::deque<LateCopy> late;
  bool holding = false;  // REORDER_SENDS: a send waiting to be overtaken
  PostedSend held{};
  Clock::time_point heldAt{};
  ncclnet::RequestPool<Request> sendRequests{NCCL_NET_MAX_REQUESTS * kMaxRecvs};
  ncclnet::RequestPool<Request> recvRequests{NCCL_NET_MAX_REQUESTS};

  bool deliver(void* dst, const void* src, size_t size, bool late) {
    if (size == 0) return true;
    if (!late) return copyBytes(dst, src, size);
    const char* s = static_cast<const char*>(src);
    this->late.push_back(
        {dst, std::vector<char>(s, s + size), Clock::now() + std::chrono::milliseconds(5)});
    return true;
  }

  void flushLate(bool all) {
    // These bytes land after their receive was reported done, so they race
    // with the reader: that race is the defect this plugin plants, and
    // ThreadSanitizer is not to report it as a bug of its own.
    ncclnet::detail::TsanIgnoreWrites plantedDefect;
    while (!late.empty() && (all || Clock::now() >= late.front().due)) {
      std::memcpy(late.front().dst, late.front().bytes.data(), late.front().bytes.size());
      late.pop_front();
    }
  }

  // Each send goes, in posting order per tag, to the oldest receive with a
  // free buffer for its tag; a send with no such receive waits.
  void match() {
    flushLate(false);
    if (holding && Clock::now() - heldAt > std::chrono::milliseconds(2)) {
      sends.push_back(held);
      holding = false;
    }
    for (auto s = sends.begin(); s != sends.end();) {
      bool earlierSameTag = false;
      for (auto t = sends.begin(); t != s; ++t) earlierSameTag = earlierSameTag || t->tag == s->tag;
      if (earlierSameTag) {
        ++s;
        continue;
      }
      PostedRecv* recv = nullptr;
      int slot = -1;
      for (PostedRecv& r : recvs) {
        for (int i = 0; i < r.request->n && slot < 0; i++) {
          if (!r.filled[i] && r.tags[i] == s->tag) slot = i;
        }
        if (slot >= 0) {
          recv = &r;
          break;
        }
      }
      if (recv == nullptr) {
        ++s;
        continue;
      }
#ifdef LOOPNET_EARLY_COMPLETION
      bool late = recvs.size() >= 2 && recv == &recvs.front();
#else
      bool late = false;
#endif
      if (s->size > recv->capacity[slot]) {
        s->request->error = recv->request->error = ncclInvalidUsage;
      } else {
        if (!deliver(recv->data[slot], s->data, s->size, late)) {
          s->request->error = recv->request->error = ncclSystemError;
        }
      }
      recv->filled[slot] = true;
      recv->request->sizes[slot] = static_cast<int>(s->size);
      s->request->sizes[0] = static_cast<int>(s->size);
      s->request->matched = 1;
      recv->request->matched++;
      s = sends.erase(s);
    }
    while (!recvs.empty() && recvs.front().request->matched == recvs.front().request->n) {
      recvs.pop_front();
    }
    // A receive completed out of the front (a later tag filled first) stays
    // until those before it complete: completion order is posting order.
  }
};

struct Listen {
  uint64_t id;
  std::deque<std::shared_ptr<Channel>> pending;
};
struct Comm {
  std::shared_ptr<Channel> channel;
  bool send;
};

class LoopNet {
 public:
#if defined(LOOPNET_EARLY_COMPLETION)
  static constexpr const char* kName = "loopnet-early-completion";
#elif defined(LOOPNET_REORDER_SENDS)
  static constexpr const char* kName = "loopnet-reorder-sends";
#elif defined(LOOPNET_UNPACK)
  static constexpr const char* kName = "loopnet-unpack";
#elif defined(LOOPNET_CUDA)
  static constexpr const char* kName = "loopnet-cuda";
#elif defined(LOOPNET_DMABUF)
  static constexpr const char* kName = "loopnet-dmabuf";
#else
  static constexpr const char* kName = "loopnet";
#endif

  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<LoopNet>* out) {
    *out = std::make_unique<LoopNet>(args.logger);
    return ncclSuccess;
  }
  explicit LoopNet(ncclnet::Logger logger) : log_(logger) {}

  ncclResult_t devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    if (dev != 0) return ncclInvalidArgument;
    std::memset(props, 0, sizeof(*props));
    props->name = const_cast<char*>("loopnet0");
    props->guid = 0x4c4f4f50;
    props->ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA;
#ifdef LOOPNET_DMABUF
    props->ptrSupport |= NCCL_PTR_DMABUF;
#endif
    props->speed = 100000;
    props->maxComms = 1 << 16;
    props->maxRecvs = kMaxRecvs;
#ifdef LOOPNET_UNPACK
    props->netDeviceType = NCCL_NET_DEVICE_UNPACK;
    props->netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
#else
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
#endif
    props->vProps.ndevs = 1;
    props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxMultiRequestSize = 1;
    props->railId = props->planeId = -1;
    return ncclSuccess;
  }

  ncclResult_t listen(const ncclnet::CommContext&, int, void* handle, void** listenComm) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto l = std::make_unique<Listen>();
    l->id = ++nextId_;
    Handle h{kHandleMagic, l->id, 0};
    std::memcpy(handle, &h, sizeof(h));
    *listenComm = l.get();
    listens_.emplace(l.get(), std::move(l));
    return ncclSuccess;
  }

  ncclResult_t connect(const ncclnet::CommContext&, int, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** devComm) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (devComm != nullptr && *devComm != nullptr)
      return bad("connect", "send side got a device handle");
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    if (h.magic != kHandleMagic) return bad("connect", "not a loopnet handle");
    Listen* l = nullptr;
    for (auto& e : listens_) {
      if (e.second->id == h.listenId) l = e.second.get();
    }
    if (l == nullptr) return bad("connect", "listen closed");
    if (h.connectCalls++ == 0) {  // completes on the second call, as a real one may
      std::memcpy(handle, &h, sizeof(h));
      *sendComm = nullptr;
      return ncclSuccess;
    }
    auto c = std::make_unique<Comm>(Comm{std::make_shared<Channel>(), true});
    l->pending.push_back(c->channel);
    *sendComm = c.get();
    comms_.emplace(c.get(), std::move(c));
    return ncclSuccess;
  }

  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** devComm) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = listens_.find(listenComm);
    if (it == listens_.end()) return bad("accept", "unknown listenComm");
    if (it->second->pending.empty()) {
      *recvComm = nullptr;
      return ncclSuccess;
    }
#ifdef LOOPNET_UNPACK
    if (devComm == nullptr || *devComm == nullptr)
      return bad("accept", "UNPACK receive without a handle");
    (*devComm)->handle = nullptr;  // CPU stand-in: no unpack queue
    (*devComm)->size = 0;
    (*devComm)->needsProxyProgress = 1;
#else
    if (devComm != nullptr && *devComm != nullptr) return bad("accept", "HOST device got a handle");
#endif
    auto c = std::make_unique<Comm>(Comm{it->second->pending.front(), false});
    it->second->pending.pop_front();
    *recvComm = c.get();
    comms_.emplace(c.get(), std::move(c));
    return ncclSuccess;
  }

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) return bad("regMr", "bad type");
    std::lock_guard<std::mutex> lock(mutex_);
    if (!comms_.count(comm)) return bad("regMr", "unknown comm");
    auto r = std::make_unique<Region>(Region{static_cast<char*>(data), size});
    *mhandle = r.get();
    regions_.emplace(r.get(), std::move(r));
    return ncclSuccess;
  }
#ifdef LOOPNET_DMABUF
  // Host memory stands in for the device memory behind the fd; what is
  // checked is NCCL's call: an open fd, a CUDA type, an offset inside it.
  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle) {
    struct stat st = {};
    if (fcntl(fd, F_GETFD) < 0 || fstat(fd, &st) != 0) return bad("regMrDmaBuf", "fd not open");
    if (type != NCCL_PTR_CUDA) return bad("regMrDmaBuf", "type is not NCCL_PTR_CUDA");
    if (st.st_size > 0 && offset + size > static_cast<uint64_t>(st.st_size))
      return bad("regMrDmaBuf", "offset + size past the end of the dmabuf");
    return regMr(comm, data, size, type, mhandle);
  }
#endif
  ncclResult_t deregMr(void* comm, void* mhandle) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!comms_.count(comm) || regions_.erase(mhandle) == 0) return bad("deregMr", "unknown");
    return ncclSuccess;
  }

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void*,
                     void** request) {
    Channel* ch = channel(sendComm, true);
    if (ch == nullptr) return bad("isend", "unknown sendComm");
    if (!covers(mhandle, data, size)) return bad("isend", "buffer outside its region");
    std::lock_guard<std::mutex> lock(ch->mutex);
    Request* r = ch->sendRequests.acquire();
    if (r != nullptr) {
      *r = Request{};
      r->isSend = true;
      r->n = 1;
      PostedSend s{r, data, size, tag};
#ifdef LOOPNET_REORDER_SENDS
      if (ch->holding) {  // this send overtakes the held one
        ch->sends.push_back(s);
        ch->sends.push_back(ch->held);
        ch->holding = false;
      } else {
        ch->held = s;
        ch->holding = true;
        ch->heldAt = Clock::now();
      }
#else
      ch->sends.push_back(s);
#endif
      ch->match();
    }
    *request = r;
    return ncclSuccess;
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void**, void** request) {
    Channel* ch = channel(recvComm, false);
    if (ch == nullptr) return bad("irecv", "unknown recvComm");
    if (n < 1 || n > kMaxRecvs) return bad("irecv", "n outside 1..maxRecvs");
    for (int i = 0; i < n; i++) {
      if (!covers(mhandles[i], data[i], sizes[i])) return bad("irecv", "buffer outside its region");
    }
    std::lock_guard<std::mutex> lock(ch->mutex);
    Request* r = ch->recvRequests.acquire();
    if (r != nullptr) {
      *r = Request{};
      r->n = n;
      PostedRecv p{};
      p.request = r;
      for (int i = 0; i < n; i++) {
        p.data[i] = data[i];
        p.capacity[i] = sizes[i];
        p.tags[i] = tags[i];
      }
      ch->recvs.push_back(p);
      ch->match();
    }
    *request = r;  // always written, even over the optional-completion hint
    return ncclSuccess;
  }

  ncclResult_t iflush(void* recvComm, int n, void**, int*, void**, void** request) {
    if (channel(recvComm, false) == nullptr || n < 1) return bad("iflush", "bad arguments");
    *request = nullptr;  // host memory: the bytes are already visible
    return ncclSuccess;
  }

  ncclResult_t test(void* request, int* done, int* sizes) {
    Request* r = static_cast<Request*>(request);
    Channel* ch = owner(request);
    if (ch == nullptr) return bad("test", "not a live request");
    std::lock_guard<std::mutex> lock(ch->mutex);
    ch->match();
    *done = r->matched == r->n;
    if (!*done) return ncclSuccess;
    if (sizes != nullptr) {
      for (int i = 0; i < r->n; i++) sizes[i] = r->sizes[i];
    }
    ncclResult_t error = r->error;
    if (r->isSend)
      ch->sendRequests.release(r);
    else
      ch->recvRequests.release(r);
    if (error != ncclSuccess) NCCLNET_WARN(log_, "test: message truncated");
    return error;
  }

  ncclResult_t closeSend(void* comm) {
    return close(comm);
  }
  ncclResult_t closeRecv(void* comm) {
    return close(comm);
  }
  ncclResult_t closeListen(void* comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    return listens_.erase(comm) ? ncclSuccess : bad("closeListen", "unknown listenComm");
  }
  ncclResult_t getDeviceMr(void*, void* mhandle, void** dptr) {
    *dptr = mhandle;  // CPU: the device address is the host one
    return ncclSuccess;
  }
  ncclResult_t irecvConsumed(void* recvComm, int n, void* request) {
    if (channel(recvComm, false) == nullptr || request == nullptr || n < 1 || n > kMaxRecvs) {
      return bad("irecvConsumed", "bad arguments");
    }
    return ncclSuccess;
  }

 private:
  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInvalidArgument;
  }
  ncclResult_t close(void* comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = comms_.find(comm);
    if (it == comms_.end()) return bad("close", "unknown comm");
    {
      Channel& ch = *it->second->channel;
      std::lock_guard<std::mutex> chLock(ch.mutex);
      ch.flushLate(true);
      // The closed end's unmatched messages go with it, as a torn-down
      // connection's would: its buffers are freed once close returns, and
      // the other end must never copy from or into them.
      if (it->second->send) {
        ch.sends.clear();
        ch.holding = false;
      } else {
        ch.recvs.clear();
      }
    }
    comms_.erase(it);
    return ncclSuccess;
  }
  Channel* channel(void* comm, bool send) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = comms_.find(comm);
    return it == comms_.end() || it->second->send != send ? nullptr : it->second->channel.get();
  }
  Channel* owner(void* request) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& e : comms_) {
      Channel* ch = e.second->channel.get();
      if (ch->sendRequests.owns(request) || ch->recvRequests.owns(request)) return ch;
    }
    return nullptr;
  }
  bool covers(void* mhandle, void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = regions_.find(mhandle);
    if (it == regions_.end()) return false;
    char* p = static_cast<char*>(data);
    return size == 0 || (p >= it->second->base && p + size <= it->second->base + it->second->size);
  }

  ncclnet::Logger log_;
  std::mutex mutex_;
  uint64_t nextId_ = 0;
  std::unordered_map<void*, std::unique_ptr<Listen>> listens_;
  std::unordered_map<void*, std::unique_ptr<Comm>> comms_;
  std::unordered_map<void*, std::unique_ptr<Region>> regions_;
};

}  // namespace

NCCLNET_EXPORT_PLUGIN(LoopNet)
