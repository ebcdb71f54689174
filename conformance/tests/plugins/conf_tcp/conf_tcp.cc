// SPDX-License-Identifier: Apache-2.0
// conf-tcp: a small, correct TCP-over-loopback net plugin the conformance
// suite is developed and tested with, built with the SDK's export macro.
// Two devices on 127.0.0.1, grouped receives up to 8, every rule honoured
// unless CONF_TCP_DEFECT names defects to plant (defects.hpp).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "defects.hpp"
#include "ncclnet/plugin.hpp"
#include "tcp_comm.hpp"
#include "tunables.hpp"

namespace conftcp {
namespace {

constexpr uint64_t kHandleMagic = 0x636f6e667463701ull;
constexpr int kDevices = 2;
constexpr uint64_t kMrMagic = 0x6d72636f6e66ull;

// Lives in NCCL's 128-byte handle; connect keeps its progress in it, since
// NCCL passes the same buffer on every retry.
struct Handle {
  uint64_t magic;
  uint32_t addr;  // network order
  uint16_t port;
  uint16_t pad;
  uint64_t connectId;  // nonzero: a connect in progress
  uint64_t nonce;      // the listen's own: a peer's hello must name it
};
static_assert(sizeof(Handle) <= NCCL_NET_HANDLE_MAXSIZE, "the handle must fit NCCL's buffer");

struct Mr {
  uint64_t magic;
  const char* base;
  size_t size;
};

// The first bytes of every connection: which listen the connector means.
// Anything else reaching the listen socket (a port scanner, a health check,
// a replay of another listen's hello) is dropped, never accepted as a peer.
struct Hello {
  uint64_t magic;
  uint64_t nonce;
};
constexpr uint64_t kHelloMagic = 0x68656c6c6f637470ull;

// A connection taken off the backlog whose hello is still arriving.
struct Pending {
  int fd;
  Hello hello;
  size_t got;
};

struct Listen {
  Listen(int socket, uint64_t n) : fd(socket), nonce(n) {}
  ~Listen() {
    close(fd);
    for (const Pending& p : pending) close(p.fd);
  }
  Listen(const Listen&) = delete;
  Listen& operator=(const Listen&) = delete;
  int fd;
  uint64_t nonce;
  std::vector<Pending> pending;
};

void tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// In the noisy mode (and with bad-profiler-events), calls what the host
// handed init the way several third-party plugins do: the logger and,
// through a v10+ table, the profiler callback, from init and from every call
// after, without a NULL check (NCCL never passes NULL). Otherwise it calls
// nothing, as the correct plugin never did.
class HostCalls {
 public:
  HostCalls(const ncclnet::InitArgs& args, const Defects& defects)
      : log_(args.logger.function()),
        profiler_(args.abiHasProfiler ? args.profiler : nullptr),
        hasProfiler_(args.abiHasProfiler),
        on_(defects.has(Defect::Noisy) || defects.has(Defect::BadProfilerEvents)),
        badEvents_(defects.has(Defect::BadProfilerEvents)) {}
  void operator()(const char* fn, void* phandle = nullptr) const {
    if (!on_) return;
    log_(NCCL_LOG_TRACE, NCCL_NET, __FILE__, __LINE__, "conf-tcp: %s", fn);
    // Events belong to transfers NCCL handed a phandle (its step).
    if (!hasProfiler_ || phandle == nullptr) return;
    void* event = nullptr;
    if (badEvents_) profiler_(&event, 9, phandle, 1, nullptr);  // defect: no such event type
    profiler_(&event, ncclProfilerNetEventStart, phandle, 1, nullptr);
    profiler_(&event, ncclProfilerNetEventUpdate, phandle, 1, nullptr);
    profiler_(&event, ncclProfilerNetEventStop, phandle, 1, nullptr);
  }

 private:
  ncclDebugLogger_t log_;
  ncclProfilerCallback_t profiler_;
  bool hasProfiler_;
  bool on_;
  bool badEvents_;
};

class ConfTcp {
 public:
  static constexpr const char* kName = "conf-tcp";

  // The environment is read here, once: the defects to plant and the
  // tunables. A value that does not parse fails init with one line saying
  // why, so a misspelt defect never runs as the correct plugin.
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<ConfTcp>* out) {
    Defects defects;
    std::string error;
    if (!Defects::parse(std::getenv("CONF_TCP_DEFECT"), &defects, &error)) {
      NCCLNET_WARN(args.logger, "init: %s", error.c_str());
      return ncclInvalidArgument;
    }
    std::string bad;
    Tunables tunables = Tunables::fromEnvironment(&bad);
    if (!bad.empty()) {
      NCCLNET_WARN(args.logger, "init: %s does not parse whole", bad.c_str());
      return ncclInvalidArgument;
    }
    if (defects.has(Defect::CrashesInInit)) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;  // defect: dies while NCCL (or the probe) initializes it
    }
    *out = std::make_unique<ConfTcp>(args, defects, tunables);
    return ncclSuccess;
  }
  ConfTcp(const ncclnet::InitArgs& args, const Defects& defects, const Tunables& tunables)
      : log_(args.logger), defects_(defects), tunables_(tunables), host_(args, defects) {
    host_("init");
    if (defects_.has(Defect::SegfaultsBehindAHandler)) {
      // As some fabric libraries do: a SIGSEGV handler of their own that
      // turns a crash into exit(1), hiding the signal from the parent.
      struct sigaction quiet {};
      quiet.sa_handler = [](int) { std::exit(1); };
      sigemptyset(&quiet.sa_mask);
      sigaction(SIGSEGV, &quiet, nullptr);
    }
  }

  ncclResult_t devices(int* ndev) {
    host_("devices");
    *ndev = kDevices;
    return ncclSuccess;
  }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    host_("getProperties");
    if (dev < 0 || dev >= kDevices) return bad("getProperties", "no such device");
    props->name = names_[defects_.has(Defect::DuplicateNames) ? 0 : dev];  // defect: one name
    props->pciPath = nullptr;
    props->guid = 0xc0f0 + static_cast<uint64_t>(dev);
    props->ptrSupport = NCCL_PTR_HOST;
    if (defects_.has(Defect::BadProperty))
      props->ptrSupport = NCCL_PTR_HOST | NCCL_PTR_DMABUF;  // defect: DMA-BUF without regMrDmaBuf
    props->regIsGlobal = 1;  // regMr is a table insert: re-registration is free
    props->forceFlush = 0;
    props->speed = 10000;
    props->port = 1;
    props->latency = tunables_.latency;
    props->maxComms = tunables_.maxComms;
    props->maxRecvs = kMaxRecvs;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    props->vProps.ndevs = 1;
    props->vProps.devs[0] = dev;
    props->maxP2pBytes = tunables_.maxP2pBytes < 0 ? NCCL_MAX_NET_SIZE_BYTES
                                                   : static_cast<size_t>(tunables_.maxP2pBytes);
    props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxMultiRequestSize = 1;
    props->railId = NCCL_NET_ID_UNDEF;
    props->planeId = NCCL_NET_ID_UNDEF;
    return ncclSuccess;
  }

  ncclResult_t listen(const ncclnet::CommContext&, int dev, void* handle, void** listenComm) {
    host_("listen");
    Tunables::stall(tunables_.slowSetupMs);
    if (dev < 0 || dev >= kDevices || handle == nullptr)
      return bad("listen", "bad device or handle");
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(fd, 128) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      if (fd >= 0) close(fd);
      return sys("listen");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t nonce = random_();
    Handle h{kHandleMagic, addr.sin_addr.s_addr, addr.sin_port, 0, 0, nonce};
    std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
    std::memcpy(handle, &h, sizeof(h));
    auto l = std::make_unique<Listen>(fd, nonce);
    *listenComm = l.get();
    listens_.emplace(l.get(), std::move(l));
    return ncclSuccess;
  }

  ncclResult_t connect(const ncclnet::CommContext&, int, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t**) {
    host_("connect");
    Tunables::stall(tunables_.slowSetupMs);
    if (defects_.has(Defect::SegfaultsInConnect) || defects_.has(Defect::SegfaultsBehindAHandler)) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;  // defect: a NULL dereference in connect
    }
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    if (h.magic != kHandleMagic) return bad("connect", "not a conf-tcp handle");
    *sendComm = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    if (poisoned_) return bad("connect", "an earlier connect failed");  // defect: one for all
    if (h.connectId == 0) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return sys("connect");
      tune(fd);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = h.addr;
      addr.sin_port = h.port;
      if (defects_.has(Defect::BlocksInConnect)) {
        // Defect: wait until the peer has accepted (it sends one byte then).
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        char ack;
        Hello hello{kHelloMagic, h.nonce};
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
            write(fd, &hello, sizeof(hello)) != static_cast<ssize_t>(sizeof(hello)) ||
            read(fd, &ack, 1) != 1) {
          close(fd);
          return sys("connect");
        }
        tune(fd);
        auto blocked = std::make_unique<SendComm>(fd, defects_);
        *sendComm = blocked.get();
        sends_.emplace(blocked.get(), std::move(blocked));
        return ncclSuccess;
      }
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
          errno != EINPROGRESS) {
        close(fd);
        return connectFailed();
      }
      h.connectId = ++nextConnectId_;
      connecting_[h.connectId] = fd;
      std::memcpy(handle, &h, sizeof(h));
      return ncclSuccess;  // NCCL calls again with the same handle
    }
    auto it = connecting_.find(h.connectId);
    if (it == connecting_.end()) return bad("connect", "unknown connection in progress");
    pollfd p{it->second, POLLOUT, 0};
    if (poll(&p, 1, 0) == 0) return ncclSuccess;
    int error = 0;
    socklen_t len = sizeof(error);
    getsockopt(it->second, SOL_SOCKET, SO_ERROR, &error, &len);
    Hello hello{kHelloMagic, h.nonce};
    if (error == 0 && ::send(it->second, &hello, sizeof(hello), MSG_NOSIGNAL | MSG_DONTWAIT) !=
                          static_cast<ssize_t>(sizeof(hello))) {
      error = errno;  // 16 bytes into a fresh connection's empty buffer: only a dead peer refuses
    }
    if (error != 0) {
      close(it->second);
      connecting_.erase(it);
      errno = error;
      return connectFailed();
    }
    auto comm = std::make_unique<SendComm>(it->second, defects_);
    connecting_.erase(it);
    *sendComm = comm.get();
    sends_.emplace(comm.get(), std::move(comm));
    return ncclSuccess;
  }

  // Takes every connection off the backlog, then reads hellos without
  // waiting: the first connection whose hello names this listen becomes the
  // comm; a connection that closes or says anything else is dropped, and a
  // silent one waits without holding up the others.
  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t**) {
    host_("accept");
    Tunables::stall(tunables_.slowSetupMs);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = listens_.find(listenComm);
    if (it == listens_.end()) return bad("accept", "unknown listenComm");
    *recvComm = nullptr;
    Listen& l = *it->second;
    for (;;) {
      if (defects_.has(Defect::OneHandshakeAtATime) && !l.pending.empty())
        break;  // defect: the next connection waits for this one's hello
      int fd = accept4(l.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        l.pending.push_back(Pending{fd, {}, 0});
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno != ECONNABORTED && errno != EINTR) return sys("accept");
    }
    for (auto p = l.pending.begin(); p != l.pending.end();) {
      ssize_t n = ::recv(p->fd, reinterpret_cast<char*>(&p->hello) + p->got,
                         sizeof(p->hello) - p->got, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        ++p;  // silent so far
        continue;
      }
      if (n > 0) p->got += static_cast<size_t>(n);
      bool peer = n > 0 && p->got == sizeof(p->hello) && p->hello.magic == kHelloMagic &&
                  p->hello.nonce == l.nonce;
      if (n > 0 && p->got < sizeof(p->hello)) {
        ++p;  // part of a hello: wait for the rest
        continue;
      }
      int fd = p->fd;
      p = l.pending.erase(p);
      if (!peer) {
        close(fd);
        if (defects_.has(Defect::AcceptFailsOnStray))
          return bad("accept", "a connection that is not a conf-tcp peer");  // defect: fatal
        NCCLNET_INFO(log_, NCCL_NET, "accept: dropped a connection that is not a conf-tcp peer");
        continue;
      }
      tune(fd);
      if (defects_.has(Defect::BlocksInConnect)) {
        char ack = 1;
        if (write(fd, &ack, 1) != 1) return sys("accept");
      }
      auto comm = std::make_unique<RecvComm>(fd, defects_);
      *recvComm = comm.get();
      recvs_.emplace(comm.get(), std::move(comm));
      return ncclSuccess;
    }
    return ncclSuccess;
  }

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    host_("regMr");
    std::lock_guard<std::mutex> lock(mutex_);
    if (type != NCCL_PTR_HOST) return bad("regMr", "only host memory");
    if (!sends_.count(comm) && !recvs_.count(comm)) return bad("regMr", "unknown comm");
    auto mr = std::make_unique<Mr>(Mr{kMrMagic, static_cast<const char*>(data), size});
    *mhandle = mr.get();
    mrs_.emplace(mr.get(), std::move(mr));
    return ncclSuccess;
  }

  ncclResult_t deregMr(void*, void* mhandle) {
    host_("deregMr");
    Tunables::stall(tunables_.slowCloseMs);
    std::lock_guard<std::mutex> lock(mutex_);
    return mrs_.erase(mhandle) ? ncclSuccess : bad("deregMr", "not an mhandle of regMr");
  }

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                     [[maybe_unused]] void* phandle, void** request) {
    host_("isend", phandle);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sends_.find(sendComm);
    if (it == sends_.end()) return bad("isend", "unknown sendComm");
    if (defects_.has(Defect::SegfaultsOnBadMhandle) && !mrs_.count(mhandle)) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;  // defect: dies on an mhandle regMr never returned (NCCL never passes one)
    }
    if (!covers(mhandle, data, size)) return bad("isend", "buffer outside its registration");
    Request* r = it->second->pool().acquire();
    if (r == nullptr && defects_.has(Defect::KeepsStaleRequest))
      return ncclSuccess;  // defect: *request keeps what the caller left there
    *request = r;          // NULL: every request is in flight, NCCL retries later
    if (r == nullptr) return ncclSuccess;
    r->owner = it->second.get();
    r->isSend = true;
    r->n = 1;
    r->data = static_cast<const char*>(data);
    r->size = size;
    r->tag = tag;
    it->second->post(r);
    return ncclSuccess;
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     [[maybe_unused]] void** phandles, void** request) {
    host_("irecv", phandles ? phandles[0] : nullptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = recvs_.find(recvComm);
    if (it == recvs_.end()) return bad("irecv", "unknown recvComm");
    if (n < 1 || n > kMaxRecvs) return bad("irecv", "n outside 1..maxRecvs");
    for (int i = 0; i < n; i++) {
      if (!covers(mhandles[i], data[i], sizes[i]))
        return bad("irecv", "buffer outside its registration");
    }
    bool hinted = *request == reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);
    Request* r = it->second->pool().acquire();
    if (r == nullptr && defects_.has(Defect::KeepsStaleRequest))
      return ncclSuccess;  // defect: *request keeps what the caller left there
    *request = r;
    if (hinted && defects_.has(Defect::LeavesSentinel))
      *request = reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);  // defect
    if (r == nullptr) return ncclSuccess;
    r->owner = it->second.get();
    r->n = n;
    for (int i = 0; i < n; i++) {
      r->bufs[i] = static_cast<char*>(data[i]);
      r->caps[i] = sizes[i];
      r->tags[i] = tags[i];
    }
    it->second->post(r);
    return ncclSuccess;
  }

  ncclResult_t iflush(void*, int, void**, int*, void**, void** request) {
    host_("iflush");
    *request = nullptr;  // host memory is coherent: nothing to flush
    return ncclSuccess;
  }

  ncclResult_t test(void* request, int* done, int* sizes) {
    host_("test");
    std::lock_guard<std::mutex> lock(mutex_);
    Request* r = findRequest(request);
    if (r == nullptr) return bad("test", "not a request in flight");
    if (r->isSend)
      static_cast<SendComm*>(r->owner)->progress();
    else
      static_cast<RecvComm*>(r->owner)->progress();
    *done = r->done;
    if (!r->isSend && defects_.has(Defect::NeverCompletes))
      *done = 0;  // defect: receives never report completion
    if (!*done) return ncclSuccess;
    ncclResult_t error = r->error;
    if (sizes != nullptr) {
      for (int i = 0; i < r->n; i++) sizes[i] = r->sizes[i];
    }
    if (r->isSend)
      static_cast<SendComm*>(r->owner)->pool().release(r);
    else
      static_cast<RecvComm*>(r->owner)->pool().release(r);
    if (error != ncclSuccess)
      NCCLNET_WARN(log_, "test: request failed (%d): peer gone, truncation or tag", error);
    return error;
  }

  ncclResult_t irecvConsumed(void* recvComm, int, void*) {
    host_("irecvConsumed");
    std::lock_guard<std::mutex> lock(mutex_);
    return recvs_.count(recvComm) ? ncclSuccess : bad("irecvConsumed", "unknown recvComm");
  }

  ncclResult_t closeSend(void* comm) {
    host_("closeSend");
    Tunables::stall(tunables_.slowCloseMs);
    std::lock_guard<std::mutex> lock(mutex_);
    return sends_.erase(comm) ? ncclSuccess : bad("closeSend", "unknown sendComm");
  }
  ncclResult_t closeRecv(void* comm) {
    host_("closeRecv");
    Tunables::stall(tunables_.slowCloseMs);
    std::lock_guard<std::mutex> lock(mutex_);
    return recvs_.erase(comm) ? ncclSuccess : bad("closeRecv", "unknown recvComm");
  }
  ncclResult_t closeListen(void* comm) {
    host_("closeListen");
    Tunables::stall(tunables_.slowCloseMs);
    std::lock_guard<std::mutex> lock(mutex_);
    return listens_.erase(comm) ? ncclSuccess : bad("closeListen", "unknown listenComm");
  }

  ~ConfTcp() {
    for (auto& entry : connecting_) close(entry.second);
  }

 private:
  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInternalError;
  }
  ncclResult_t connectFailed() {
    poisoned_ = defects_.has(Defect::PoisonedByBadConnect);
    return sys("connect");
  }
  ncclResult_t sys(const char* fn) {
    NCCLNET_WARN(log_, "%s: %s", fn, std::strerror(errno));
    return ncclSystemError;
  }
  bool covers(void* mhandle, void* data, size_t size) {
    auto it = mrs_.find(mhandle);
    if (it == mrs_.end() || it->second->magic != kMrMagic) return false;
    const char* p = static_cast<const char*>(data);
    return size == 0 || (p >= it->second->base && p + size <= it->second->base + it->second->size);
  }
  Request* findRequest(void* request) {
    for (auto& entry : sends_) {
      if (Request* r = entry.second->pool().find(request)) return r;
    }
    for (auto& entry : recvs_) {
      if (Request* r = entry.second->pool().find(request)) return r;
    }
    return nullptr;
  }

  ncclnet::Logger log_;
  const Defects defects_;
  const Tunables tunables_;
  const HostCalls host_;
  std::mutex mutex_;
  char names_[kDevices][16] = {"conf-tcp0", "conf-tcp1"};
  uint64_t nextConnectId_ = 0;
  std::mt19937_64 random_{std::random_device{}()};
  bool poisoned_ = false;  // only with poisoned-by-bad-connect
  std::unordered_map<uint64_t, int> connecting_;
  std::unordered_map<void*, std::unique_ptr<Listen>> listens_;
  std::unordered_map<void*, std::unique_ptr<SendComm>> sends_;
  std::unordered_map<void*, std::unique_ptr<RecvComm>> recvs_;
  std::unordered_map<void*, std::unique_ptr<Mr>> mrs_;
};

}  // namespace
}  // namespace conftcp

NCCLNET_EXPORT_PLUGIN(conftcp::ConfTcp)
