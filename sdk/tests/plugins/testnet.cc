// SPDX-License-Identifier: Apache-2.0
// testnet: an in-process plugin on the SDK's object model. Sends and
// receives between comms of the same process are matched in memory, so the
// round-trip tests can drive every ABI version through the whole contract
// without a network. Built three times: "sdk-testnet" provides every
// optional member, "sdk-testnet-min" (TESTNET_MINIMAL) none of them, and
// "sdk-testnet-defects" (TESTNET_DEFECTS) breaks one rule of the contract,
// the one NCCLNET_TESTNET_DEFECT names, for the checker's tests.
#include <fcntl.h>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ncclnet/plugin.hpp"
#include "ncclnet/request_pool.hpp"

namespace {

constexpr uint64_t kHandleMagic = 0x7465'7374'6e65'7431ull;  // "testnet1"
constexpr int kMaxRecvs = 4;
constexpr int kPhysicalDevices = 2;

struct Handle {
  uint64_t magic;
  uint64_t listenId;
};
static_assert(sizeof(Handle) <= ncclnet::kPluginHandleBytes, "handle must fit the plugin's part");

struct MemoryRegion {
  char* base;
  size_t size;
};

struct Channel;

struct Request {
  Channel* channel = nullptr;
  bool isSend = false;
  int n = 0;
  int matched = 0;  // buffers (recv) or 1 (send) matched so far
  int sizes[kMaxRecvs] = {};
  ncclResult_t error = ncclSuccess;
};

// One connection: the sender's queue meets the receiver's queue.
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

struct Channel {
  std::mutex mutex;
  std::deque<PostedRecv> recvs;
  std::deque<PostedSend> sends;
  ncclnet::RequestPool<Request> sendRequests{NCCL_NET_MAX_REQUESTS * kMaxRecvs};
  ncclnet::RequestPool<Request> recvRequests{NCCL_NET_MAX_REQUESTS};

  // Each send, in posting order, lands in the oldest posted receive that
  // still has an unfilled buffer with its tag. A send whose tag has no such
  // buffer yet waits, and later sends with the same tag wait behind it: when
  // several ranks share one comm, one rank may run a step ahead of another
  // (NCCL's IB plugin answers such a send with a NULL request instead).
  void match() {
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
      deliver(*send, recv, slot);
      send = sends.erase(send);
    }
    while (!recvs.empty() && recvs.front().request->matched == recvs.front().request->n) {
      recvs.pop_front();
    }
  }

  // A send larger than its buffer fails both sides and writes nothing.
  static void deliver(const PostedSend& send, PostedRecv* recv, int slot) {
    if (send.size > recv->capacity[slot]) {
      send.request->error = recv->request->error = ncclInvalidUsage;
    } else if (send.size > 0) {
      std::memcpy(recv->data[slot], send.data, send.size);
    }
    recv->filled[slot] = true;
    recv->request->sizes[slot] = static_cast<int>(send.size);
    recv->request->matched++;
    send.request->sizes[0] = static_cast<int>(send.size);
    send.request->matched = 1;
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
      ncclnet::intKnob("NCCLNET_TESTNET_DEVICES", &Knobs::devices, kPhysicalDevices, 0, 64,
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
      names_.push_back("testnet" + std::to_string(names_.size()));
    props->name = names_[dev].data();
    props->guid = 0x1000 + dev;
    props->regIsGlobal = 1;
    props->speed = 100000;
    props->port = 1;
    props->latency = 1.5f;
    props->maxComms = 1024;
    props->maxRecvs = kMaxRecvs;
    if (dev >= physical_) props->vProps = virtual_[dev - physical_];
    props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->railId = static_cast<int16_t>(dev);
    props->planeId = 0;
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
                           ncclNetDeviceHandle_v12_t**) {
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

  ncclResult_t accept(Listen& listen, std::unique_ptr<RecvComm>* out, ncclNetDeviceHandle_v12_t**) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (listen.pending.empty()) return ncclSuccess;
    auto comm = std::make_unique<RecvComm>();
    comm->channel = listen.pending.front();
    listen.pending.pop_front();
    *out = std::move(comm);
    return ncclSuccess;
  }

  ncclResult_t regMr(ncclnet::DataComm<TestNet>, void* data, size_t size, int type,
                     std::unique_ptr<MemoryRegion>* out) {
    if (type != NCCL_PTR_HOST) return bad("regMr", "testnet registers host memory only");
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
      r->channel = &channel;
      r->isSend = true;
      r->n = 1;
      channel.sends.push_back(PostedSend{r, data, size, tag});
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
      r->channel = &channel;
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
    *request = nullptr;  // host memory: nothing to flush
    return ncclSuccess;
  }

  ncclResult_t test(SendComm& comm, Request& request, int* done, int* sizes) {
    return finish(*comm.channel, request, done, sizes);
  }
  ncclResult_t test(RecvComm& comm, Request& request, int* done, int* sizes) {
    return finish(*comm.channel, request, done, sizes);
  }

  ncclResult_t close(std::unique_ptr<SendComm>) {
    return ncclSuccess;
  }
  ncclResult_t close(std::unique_ptr<RecvComm>) {
    return ncclSuccess;
  }
  ncclResult_t close(std::unique_ptr<Listen> listen) {
    std::lock_guard<std::mutex> lock(mutex_);
    listens_.erase(listen->id);
    return ncclSuccess;
  }

#ifndef TESTNET_MINIMAL
  ncclResult_t regMrDmaBuf(ncclnet::DataComm<TestNet> comm, void* data, size_t size, int type,
                           uint64_t, int fd, std::unique_ptr<MemoryRegion>* out) {
    if (fcntl(fd, F_GETFD) < 0) return bad("regMrDmaBuf", "fd is not open");
    return regMr(comm, data, size, type == NCCL_PTR_CUDA ? NCCL_PTR_HOST : type, out);
  }
  ncclResult_t getDeviceMr(ncclnet::DataComm<TestNet>, MemoryRegion&, void** dptr) {
    *dptr = nullptr;
    return ncclSuccess;
  }
  ncclResult_t irecvConsumed(RecvComm&, int n, Request*) {
    if (n < 1 || n > kMaxRecvs) return bad("irecvConsumed", "n out of range");
    return ncclSuccess;
  }
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
  ncclResult_t finish(Channel& channel, Request& r, int* done, int* sizes) {
    std::lock_guard<std::mutex> lock(channel.mutex);
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
    if (error != ncclSuccess) NCCLNET_WARN(log_, "test: message larger than its receive buffer");
    return error;
  }

  ncclnet::Logger log_;
  ncclnet::ParamTable params_;
  std::mutex mutex_;  // guards what follows
  int physical_ = kPhysicalDevices;
  Defect defect_ = kNoDefect;
  uint64_t nextListenId_ = 0;
  std::vector<ncclNetVDeviceProps_v12_t> virtual_;
  std::deque<std::string> names_;                  // deque: names handed out stay where they are
  std::unordered_map<uint64_t, Listen*> listens_;  // open listens, for connect to find
};

}  // namespace

NCCLNET_EXPORT_PLUGIN(TestNet)
