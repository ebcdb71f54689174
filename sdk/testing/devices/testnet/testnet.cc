// SPDX-License-Identifier: Apache-2.0
// testnet: an in-process plugin on the SDK's object model. Sends and
// receives between comms of the same process are matched in memory, so
// hosts (the SDK's round trips, the reference transport, the checker, the
// tools) drive every ABI version through the whole contract without a
// network. One source, built into several libraries by compile definitions:
//
//   (none)                    sdk-testnet: NCCLNET_TESTNET_DEVICES devices
//                             (2), host memory, every optional member
//   TESTNET_MINIMAL           sdk-testnet-min: no optional member
//   TESTNET_DEFECTS           sdk-testnet-defects: breaks the rule of the
//                             contract NCCLNET_TESTNET_DEFECT names (the
//                             checker's tests)
//   TESTNET_LOOPNET           loopnet, the reference transport's plugin: one
//                             device that also takes NCCL_PTR_CUDA (host
//                             memory standing in for device memory), checks
//                             the device handles NCCL passes, and offers
//                             getDeviceMr and irecvConsumed only
//   TESTNET_LOOPNET and one of (each a deliberate bug, or a mode):
//     LOOPNET_EARLY_COMPLETION  with two or more receives outstanding, the
//                               oldest completes when matched but its bytes
//                               land a few milliseconds later
//     LOOPNET_REORDER_SENDS     each send is held back until the next one is
//                               posted, which overtakes it (a lone send goes
//                               out after a few milliseconds)
//     LOOPNET_UNPACK            reports an UNPACK v7 device and fills the
//                               receive device handle (needsProxyProgress 1)
//     LOOPNET_DMABUF            also advertises NCCL_PTR_DMABUF and provides
//                               regMrDmaBuf (an open fd, a CUDA type, an
//                               offset inside it)
//     LOOPNET_CUDA              LOOPNET_DMABUF, and copies GPU memory on
//                               either side with the CUDA driver (reached at
//                               run time, never linked), as a NIC's DMA
//                               would: GPU-direct buffers work in one process
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ncclnet/detail/tsan.hpp"
#include "ncclnet/plugin.hpp"
#include "ncclnet/request_pool.hpp"

#ifdef LOOPNET_CUDA
#include "ncclnet/cuda_driver.hpp"
#include "ncclnet/cuda_driver_slot.hpp"
#define LOOPNET_DMABUF 1
#endif

// Which optional members this build declares (the object model offers
// NCCL exactly those).
#if defined(TESTNET_LOOPNET)
#define TESTNET_DEVICE_MR 1  // getDeviceMr, irecvConsumed
#ifdef LOOPNET_DMABUF
#define TESTNET_DMABUF 1  // regMrDmaBuf
#endif
#elif !defined(TESTNET_MINIMAL)
#define TESTNET_DEVICE_MR 1
#define TESTNET_DMABUF 1
#define TESTNET_VDEVICES 1  // makeVDevice, setNetAttr
#endif

namespace {

using Clock = std::chrono::steady_clock;

#ifdef TESTNET_LOOPNET
constexpr bool kLoopnet = true;
#else
constexpr bool kLoopnet = false;
#endif
#ifdef LOOPNET_EARLY_COMPLETION
constexpr bool kEarlyCompletion = true;
#else
constexpr bool kEarlyCompletion = false;
#endif
#ifdef LOOPNET_REORDER_SENDS
constexpr bool kReorderSends = true;
#else
constexpr bool kReorderSends = false;
#endif
#ifdef LOOPNET_UNPACK
constexpr bool kUnpack = true;
#else
constexpr bool kUnpack = false;
#endif

constexpr uint64_t kHandleMagic = 0x7465'7374'6e65'7431ull;  // "testnet1"
constexpr int kMaxRecvs = 4;

// What getProperties reports beyond the SDK's defaults (NCCL's).
struct Look {
  const char* devicePrefix;  // device d is named <prefix><d>
  uint64_t guidBase;         // device d has guid guidBase + d
  int physicalDevices;       // NCCLNET_TESTNET_DEVICES' default
  int ptrSupport;
  int maxComms;
  int regIsGlobal;
  float latency;
  int port;
  bool railPerDevice;  // railId = device, planeId = 0 (else both undefined)
};
#ifdef LOOPNET_DMABUF
constexpr int kLoopnetPtrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
#else
constexpr int kLoopnetPtrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA;
#endif
constexpr Look kLook =
    kLoopnet ? Look{"loopnet", 0x4c4f4f50, 1, kLoopnetPtrSupport, 1 << 16, 0, 0.0f, 0, false}
             : Look{"testnet", 0x1000, 2, NCCL_PTR_HOST, 1024, 1, 1.5f, 1, true};

struct Handle {
  uint64_t magic;
  uint64_t listenId;
};
static_assert(sizeof(Handle) <= ncclnet::kPluginHandleBytes, "handle must fit the plugin's part");

struct MemoryRegion {
  char* base;
  size_t size;
};

struct Request {
  bool isSend = false;
  int n = 0;
  int matched = 0;  // buffers (recv) or 1 (send) matched so far
  int sizes[kMaxRecvs] = {};
  ncclResult_t error = ncclSuccess;
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
struct LateCopy {  // EARLY_COMPLETION: bytes that land after their receive completed
  void* dst;
  std::vector<char> bytes;
  Clock::time_point due;
};

#ifdef LOOPNET_CUDA
// The driver GPU copies go through, released when the library unloads.
ncclnet::cuda::DriverSlot gDriver;
#endif

// Copies `size` bytes; false when a GPU copy failed.
bool copyBytes(void* dst, const void* src, size_t size) {
#ifdef LOOPNET_CUDA
  namespace cu = ncclnet::cuda;
  std::shared_ptr<const cu::Driver> owned = gDriver.get();
  if (owned != nullptr && owned->available()) {
    const cu::Driver& driver = *owned;
    cu::Context dstContext = nullptr, srcContext = nullptr;
    bool dstGpu = driver.isDeviceMemory(dst, &dstContext);
    bool srcGpu = driver.isDeviceMemory(src, &srcContext);
    if (dstGpu || srcGpu) {
      cu::ScopedContext scope(driver, dstGpu ? dstContext : srcContext);
      auto d = static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(dst));
      auto s = static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(src));
      cu::Result r = dstGpu && srcGpu ? driver.memcpyDtoD(d, s, size)
                     : dstGpu         ? driver.memcpyHtoD(d, src, size)
                                      : driver.memcpyDtoH(dst, s, size);
      return scope.ok() && r == cu::kSuccess;
    }
  }
#endif
  std::memcpy(dst, src, size);
  return true;
}

// One connection: the sender's queue meets the receiver's queue.
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

  void post(const PostedSend& send) {
    if (!kReorderSends) {
      sends.push_back(send);
    } else if (holding) {  // this send overtakes the held one
      sends.push_back(send);
      sends.push_back(held);
      holding = false;
    } else {
      held = send;
      holding = true;
      heldAt = Clock::now();
    }
  }

  // Each send, in posting order, lands in the oldest posted receive that
  // still has an unfilled buffer with its tag. A send whose tag has no such
  // buffer yet waits, and later sends with the same tag wait behind it: when
  // several ranks share one comm, one rank may run a step ahead of another
  // (NCCL's IB plugin answers such a send with a NULL request instead).
  void match() {
    flushLate(false);
    if (holding && Clock::now() - heldAt > std::chrono::milliseconds(2)) {
      sends.push_back(held);
      holding = false;
    }
    std::vector<int> waitingTags;
    for (auto send = sends.begin(); send != sends.end();) {
      bool waiting = false;
      for (int tag : waitingTags) waiting = waiting || tag == send->tag;
      PostedRecv* recv = nullptr;
      int slot = -1;
      for (auto r = recvs.begin(); !waiting && r != recvs.end() && recv == nullptr; ++r) {
        for (int i = 0; i < r->request->n; i++) {
          if (!r->filled[i] && r->tags[i] == send->tag) {
            recv = &*r;
            slot = i;
            break;
          }
        }
      }
      if (recv == nullptr) {
        waitingTags.push_back(send->tag);
        ++send;
        continue;
      }
      deliver(*send, recv, slot, kEarlyCompletion && recvs.size() >= 2 && recv == &recvs.front());
      send = sends.erase(send);
    }
    // A receive completed out of the front (a later tag filled first) stays
    // until those before it complete: completion order is posting order.
    while (!recvs.empty() && recvs.front().request->matched == recvs.front().request->n) {
      recvs.pop_front();
    }
  }

  // A send larger than its buffer fails both sides and writes nothing.
  void deliver(const PostedSend& send, PostedRecv* recv, int slot, bool landsLate) {
    if (send.size > recv->capacity[slot]) {
      send.request->error = recv->request->error = ncclInvalidUsage;
    } else if (send.size > 0 && landsLate) {
      const char* s = static_cast<const char*>(send.data);
      late.push_back({recv->data[slot], std::vector<char>(s, s + send.size),
                      Clock::now() + std::chrono::milliseconds(5)});
    } else if (send.size > 0 && !copyBytes(recv->data[slot], send.data, send.size)) {
      send.request->error = recv->request->error = ncclSystemError;
    }
    recv->filled[slot] = true;
    recv->request->sizes[slot] = static_cast<int>(send.size);
    recv->request->matched++;
    send.request->sizes[0] = static_cast<int>(send.size);
    send.request->matched = 1;
  }

  void flushLate(bool all) {
    // These bytes land after their receive was reported done, so they race
    // with the reader: that race is the defect EARLY_COMPLETION plants, and
    // ThreadSanitizer is not to report it as a bug of its own.
    ncclnet::detail::TsanIgnoreWrites plantedDefect;
    while (!late.empty() && (all || Clock::now() >= late.front().due)) {
      std::memcpy(late.front().dst, late.front().bytes.data(), late.front().bytes.size());
      late.pop_front();
    }
  }

  // The closed end's unmatched messages go with it, as a torn-down
  // connection's would: its buffers are freed once close returns, and the
  // other end must never copy from or into them.
  void closeEnd(bool sendEnd) {
    std::lock_guard<std::mutex> lock(mutex);
    flushLate(true);
    if (sendEnd) {
      sends.clear();
      holding = false;
    } else {
      recvs.clear();
    }
  }
};

struct Listen {
  uint64_t id;
  int dev;
  std::deque<std::shared_ptr<Channel>> pending;
};
struct SendComm {
  std::shared_ptr<Channel> channel;
};
struct RecvComm {
  std::shared_ptr<Channel> channel;
  // Released at test() even with irecvConsumed: NCCLs that load ABI v6
  // never call irecvConsumed, so a request must not depend on it.
  bool holdsUntilConsumed() const { return false; }
};
struct Connector {
  uint64_t listenId;
  int calls = 0;  // connect completes on its second call, as a real one may
};

class TestNet {
 public:
#if defined(TESTNET_MINIMAL)
  static constexpr const char* kName = "sdk-testnet-min";
#elif defined(TESTNET_DEFECTS)
  static constexpr const char* kName = "sdk-testnet-defects";
#elif defined(LOOPNET_EARLY_COMPLETION)
  static constexpr const char* kName = "loopnet-early-completion";
#elif defined(LOOPNET_REORDER_SENDS)
  static constexpr const char* kName = "loopnet-reorder-sends";
#elif defined(LOOPNET_UNPACK)
  static constexpr const char* kName = "loopnet-unpack";
#elif defined(LOOPNET_CUDA)
  static constexpr const char* kName = "loopnet-cuda";
#elif defined(LOOPNET_DMABUF)
  static constexpr const char* kName = "loopnet-dmabuf";
#elif defined(TESTNET_LOOPNET)
  static constexpr const char* kName = "loopnet";
#else
  static constexpr const char* kName = "sdk-testnet";
#endif
  // The object model: the SDK keeps the handles NCCL holds.
  using ListenComm = Listen;
  using SendComm = ::SendComm;
  using RecvComm = ::RecvComm;
  using MemHandle = MemoryRegion;
  using Request = ::Request;
  using Connector = ::Connector;

  // The rule sdk-testnet-defects breaks.
  enum Defect {
    kNoDefect,
    kOversize,     // test reports more bytes than a receive posted (rule 32)
    kShortGroup,   // test reports only the first size of a grouped receive (rule 31)
    kSlowConnect,  // connect sleeps 20 ms (rule 22)
  };
  static constexpr ncclnet::KnobChoice kDefects[] = {{"none", kNoDefect},
                                                     {"oversize", kOversize},
                                                     {"short-group", kShortGroup},
                                                     {"slow-connect", kSlowConnect}};

  struct Knobs {
    int devices = 0;
    bool failInit = false;
    int defect = kNoDefect;
  };
  static constexpr ncclnet::Knob<Knobs> kKnobs[] = {
      ncclnet::intKnob("NCCLNET_TESTNET_DEVICES", &Knobs::devices, kLook.physicalDevices, 0, 64,
                       "physical devices testnet reports"),
      ncclnet::flagKnob("NCCLNET_TESTNET_FAIL_INIT", &Knobs::failInit, false,
                        "1: init fails after reading the knobs, as without a device"),
#ifdef TESTNET_DEFECTS
      ncclnet::enumKnob("NCCLNET_TESTNET_DEFECT", &Knobs::defect, "none", kDefects,
                        "the rule of the contract this build breaks"),
#endif
  };

  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<TestNet>* out) {
    auto net = std::make_unique<TestNet>(args.logger);
    Knobs knobs;
    ncclResult_t res = ncclnet::readKnobs(net->params_, kKnobs, &knobs);
    if (res != ncclSuccess) return res;
    if (knobs.failInit) {
      NCCLNET_WARN(args.logger, "no device to drive (NCCLNET_TESTNET_FAIL_INIT=1)");
      return ncclSystemError;
    }
    net->physical_ = knobs.devices;
    net->defect_ = static_cast<Defect>(knobs.defect);
    *out = std::move(net);
    return ncclSuccess;
  }

  explicit TestNet(ncclnet::Logger logger) : log_(logger), params_(logger) {}

  const ncclnet::ParamTable& params() const {
    return params_;
  }

  ncclResult_t devices(int* ndev) {
    std::lock_guard<std::mutex> lock(mutex_);
    *ndev = physical_ + static_cast<int>(virtual_.size());
    return ncclSuccess;
  }

  // Every field the SDK's defaults (NCCL's) do not already hold.
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (dev < 0 || dev >= physical_ + static_cast<int>(virtual_.size())) {
      NCCLNET_WARN(log_, "getProperties: device %d does not exist", dev);
      return ncclInvalidArgument;
    }
    while (static_cast<int>(names_.size()) <= dev)
      names_.push_back(kLook.devicePrefix + std::to_string(names_.size()));
    props->name = names_[dev].data();
    props->guid = kLook.guidBase + dev;
    props->ptrSupport = kLook.ptrSupport;
    props->regIsGlobal = kLook.regIsGlobal;
    props->speed = 100000;
    props->port = kLook.port;
    props->latency = kLook.latency;
    props->maxComms = kLook.maxComms;
    props->maxRecvs = kMaxRecvs;
    if (kUnpack) {
      props->netDeviceType = NCCL_NET_DEVICE_UNPACK;
      props->netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
    }
    if (dev >= physical_) props->vProps = virtual_[dev - physical_];
    props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
    if (kLook.railPerDevice) {
      props->railId = static_cast<int16_t>(dev);
      props->planeId = 0;
    }
    return ncclSuccess;
  }

  ncclResult_t listen(const ncclnet::CommContext&, int dev, void* handle,
                      std::unique_ptr<Listen>* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (dev < 0 || dev >= physical_) return bad("listen", "no such physical device");
    auto listen = std::make_unique<Listen>();
    listen->id = ++nextListenId_;
    listen->dev = dev;
    Handle h{kHandleMagic, listen->id};
    std::memcpy(handle, &h, sizeof(h));
    listens_[listen->id] = listen.get();
    *out = std::move(listen);
    return ncclSuccess;
  }

  ncclResult_t connect(const ncclnet::CommContext&, int, const void* handle,
                       std::unique_ptr<Connector>* out) {
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    if (h.magic != kHandleMagic) {
      NCCLNET_WARN(log_, "connect: handle is not a testnet handle (magic %016llx)",
                   static_cast<unsigned long long>(h.magic));
      return ncclInvalidUsage;
    }
    *out = std::make_unique<Connector>(Connector{h.listenId});
    return ncclSuccess;
  }

  ncclResult_t connectStep(Connector& connector, std::unique_ptr<SendComm>* out,
                           ncclNetDeviceHandle_v12_t** devHandle) {
    // NCCL gives a send side a device handle only for a device type that
    // has one on send; none has.
    if (kLoopnet && devHandle != nullptr && *devHandle != nullptr)
      return bad("connect", "send side got a device handle");
    std::lock_guard<std::mutex> lock(mutex_);
    auto listen = listens_.find(connector.listenId);
    if (listen == listens_.end()) {
      NCCLNET_WARN(log_, "connect: listen %llu is closed",
                   static_cast<unsigned long long>(connector.listenId));
      return ncclRemoteError;
    }
    if (defect_ == kSlowConnect) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (connector.calls++ == 0) return ncclSuccess;  // not yet: NCCL calls again
    auto comm = std::make_unique<SendComm>();
    comm->channel = std::make_shared<Channel>();
    listen->second->pending.push_back(comm->channel);
    *out = std::move(comm);
    return ncclSuccess;
  }

  ncclResult_t accept(Listen& listen, std::unique_ptr<RecvComm>* out,
                      ncclNetDeviceHandle_v12_t** devHandle) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (listen.pending.empty()) return ncclSuccess;
    if (kLoopnet) {
      ncclResult_t res = takeDeviceHandle(devHandle);
      if (res != ncclSuccess) return res;
    }
    auto comm = std::make_unique<RecvComm>();
    comm->channel = listen.pending.front();
    listen.pending.pop_front();
    *out = std::move(comm);
    return ncclSuccess;
  }

  ncclResult_t regMr(ncclnet::DataComm<TestNet>, void* data, size_t size, int type,
                     std::unique_ptr<MemoryRegion>* out) {
    // NCCL_PTR_CUDA where advertised: host memory stands in for the device's.
    const bool cuda = type == NCCL_PTR_CUDA && (kLook.ptrSupport & NCCL_PTR_CUDA) != 0;
    if (type != NCCL_PTR_HOST && !cuda) return bad("regMr", "memory type not in ptrSupport");
    *out = std::make_unique<MemoryRegion>(MemoryRegion{static_cast<char*>(data), size});
    return ncclSuccess;
  }

  ncclResult_t deregMr(ncclnet::DataComm<TestNet>, MemoryRegion&) {
    return ncclSuccess;
  }

  ncclResult_t isend(SendComm& comm, void* data, size_t size, int tag, MemoryRegion* mh, void*,
                     Request** request) {
    if (!covers(mh, data, size)) return bad("isend", "buffer outside its memory region");
    Channel& channel = *comm.channel;
    std::lock_guard<std::mutex> lock(channel.mutex);
    Request* r = channel.sendRequests.acquire();
    if (r != nullptr) {
      r->isSend = true;
      r->n = 1;
      channel.post(PostedSend{r, data, size, tag});
      channel.match();
    }
    *request = r;  // NULL: all requests in flight, try again
    return ncclSuccess;
  }

  ncclResult_t irecv(RecvComm& comm, int n, void** data, size_t* sizes, int* tags,
                     MemoryRegion** mhs, void**, Request** request) {
    if (n > kMaxRecvs) return bad("irecv", "n outside 1..maxRecvs");
    for (int i = 0; i < n; i++) {
      if (!covers(mhs[i], data[i], sizes[i]))
        return bad("irecv", "buffer outside its memory region");
    }
    Channel& channel = *comm.channel;
    std::lock_guard<std::mutex> lock(channel.mutex);
    Request* r = channel.recvRequests.acquire();
    if (r != nullptr) {
      r->n = n;
      PostedRecv posted{};
      posted.request = r;
      for (int i = 0; i < n; i++) {
        posted.data[i] = data[i];
        posted.capacity[i] = sizes[i];
        posted.tags[i] = tags[i];
      }
      channel.recvs.push_back(posted);
      channel.match();
    }
    *request = r;
    return ncclSuccess;
  }

  ncclResult_t iflush(RecvComm&, int, void**, int*, MemoryRegion**, Request** request) {
    *request = nullptr;  // host memory: the bytes are already visible
    return ncclSuccess;
  }

  ncclResult_t test(SendComm& comm, Request& request, int* done, int* sizes) {
    return finish(*comm.channel, request, done, sizes);
  }
  ncclResult_t test(RecvComm& comm, Request& request, int* done, int* sizes) {
    return finish(*comm.channel, request, done, sizes);
  }

  ncclResult_t close(std::unique_ptr<SendComm> comm) {
    comm->channel->closeEnd(true);
    return ncclSuccess;
  }
  ncclResult_t close(std::unique_ptr<RecvComm> comm) {
    comm->channel->closeEnd(false);
    return ncclSuccess;
  }
  ncclResult_t close(std::unique_ptr<Listen> listen) {
    std::lock_guard<std::mutex> lock(mutex_);
    listens_.erase(listen->id);
    return ncclSuccess;
  }

#ifdef TESTNET_DMABUF
  ncclResult_t regMrDmaBuf(ncclnet::DataComm<TestNet> comm, void* data, size_t size, int type,
                           uint64_t offset, int fd, std::unique_ptr<MemoryRegion>* out) {
    struct stat st = {};
    if (fcntl(fd, F_GETFD) < 0 || fstat(fd, &st) != 0) return bad("regMrDmaBuf", "fd is not open");
    if (kLoopnet) {
      // Host memory stands in for the device memory behind the fd; what is
      // checked is NCCL's call: a CUDA type, an offset inside the fd.
      if (type != NCCL_PTR_CUDA) return bad("regMrDmaBuf", "type is not NCCL_PTR_CUDA");
      if (st.st_size > 0 && offset + size > static_cast<uint64_t>(st.st_size))
        return bad("regMrDmaBuf", "offset + size past the end of the dmabuf");
      return regMr(comm, data, size, type, out);
    }
    return regMr(comm, data, size, type == NCCL_PTR_CUDA ? NCCL_PTR_HOST : type, out);
  }
#endif
#ifdef TESTNET_DEVICE_MR
  ncclResult_t getDeviceMr(ncclnet::DataComm<TestNet>, MemoryRegion& region, void** dptr) {
    // loopnet's "device" is the CPU: the device address is the host one.
    *dptr = kLoopnet ? region.base : nullptr;
    return ncclSuccess;
  }
  ncclResult_t irecvConsumed(RecvComm&, int n, Request*) {
    if (n < 1 || n > kMaxRecvs) return bad("irecvConsumed", "n out of range");
    return ncclSuccess;
  }
#endif
#ifdef TESTNET_VDEVICES
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < props->ndevs; i++) {
      if (props->devs[i] < 0 || props->devs[i] >= physical_)
        return bad("makeVDevice", "unknown device");
    }
    virtual_.push_back(*props);
    *d = physical_ + static_cast<int>(virtual_.size()) - 1;
    return ncclSuccess;
  }
  ncclResult_t setNetAttr(const ncclnet::CommContext&, const ncclNetAttr_v12_t&) {
    return ncclSuccess;
  }
#endif

 private:
  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInvalidArgument;
  }
  static bool covers(const MemoryRegion* region, void* data, size_t size) {
    char* p = static_cast<char*>(data);
    return size == 0 ||
           (region != nullptr && p >= region->base && p + size <= region->base + region->size);
  }
  // The receive side's device handle: an UNPACK device fills the one NCCL
  // preallocated (a CPU stand-in: no unpack queue); a HOST device gets none.
  ncclResult_t takeDeviceHandle(ncclNetDeviceHandle_v12_t** devHandle) {
    const bool given = devHandle != nullptr && *devHandle != nullptr;
    if (!kUnpack) return given ? bad("accept", "HOST device got a handle") : ncclSuccess;
    if (!given) return bad("accept", "UNPACK receive without a handle");
    (*devHandle)->handle = nullptr;
    (*devHandle)->size = 0;
    (*devHandle)->needsProxyProgress = 1;
    return ncclSuccess;
  }
  ncclResult_t finish(Channel& channel, Request& r, int* done, int* sizes) {
    std::lock_guard<std::mutex> lock(channel.mutex);
    channel.match();  // late bytes and held sends move with time, not only with posts
    *done = r.matched == r.n;
    if (!*done) return ncclSuccess;
    ncclResult_t error = r.error;
    if (sizes != nullptr) {
      const int reported = defect_ == kShortGroup ? 1 : r.n;
      for (int i = 0; i < reported; i++) sizes[i] = r.sizes[i];
      if (defect_ == kOversize && !r.isSend) sizes[0] = 1 << 30;
    }
    if (r.isSend)
      channel.sendRequests.release(&r);
    else
      channel.recvRequests.release(&r);
    if (error != ncclSuccess) {
      NCCLNET_WARN(log_, "test: %s",
                   error == ncclInvalidUsage ? "message larger than its receive buffer"
                                             : "a copy through the CUDA driver failed");
    }
    return error;
  }

  ncclnet::Logger log_;
  ncclnet::ParamTable params_;
  std::mutex mutex_;  // guards what follows
  int physical_ = kLook.physicalDevices;
  Defect defect_ = kNoDefect;
  uint64_t nextListenId_ = 0;
  std::vector<ncclNetVDeviceProps_v12_t> virtual_;
  std::deque<std::string> names_;                  // deque: names handed out stay where they are
  std::unordered_map<uint64_t, Listen*> listens_;  // open listens, for connect to find
};

}  // namespace

NCCLNET_EXPORT_PLUGIN(TestNet)
