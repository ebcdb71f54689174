// SPDX-License-Identifier: Apache-2.0
// conf-tcp: a small, correct TCP-over-loopback net plugin the conformance
// suite is developed and tested with, built with the SDK's export macro.
// Two devices on 127.0.0.1, grouped receives up to 8, every rule honoured;
// each CONF_TCP_DEFECT_* build breaks exactly one on purpose.
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

#include "ncclnet/plugin.hpp"
#include "tcp_comm.hpp"
#include "tunables.hpp"

#ifndef CONF_TCP_NAME
#define CONF_TCP_NAME "conf-tcp"
#endif

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

#if defined(CONF_TCP_CALLS_HOST_UNCHECKED) || defined(CONF_TCP_DEFECT_BAD_PROFILER_EVENTS)
// Calls what the host handed init the way several third-party plugins do:
// the logger and, through a v10+ table, the profiler callback, from init
// and from every call after, without a NULL check (NCCL never passes NULL).
class HostCalls {
 public:
  explicit HostCalls(const ncclnet::InitArgs& args)
      : log_(args.logger.function()),
        profiler_(args.abiHasProfiler ? args.profiler : nullptr),
        hasProfiler_(args.abiHasProfiler) {}
  void operator()(const char* fn, void* phandle = nullptr) const {
    log_(NCCL_LOG_TRACE, NCCL_NET, __FILE__, __LINE__, "conf-tcp: %s", fn);
    // Events belong to transfers NCCL handed a phandle (its step).
    if (!hasProfiler_ || phandle == nullptr) return;
    void* event = nullptr;
#ifdef CONF_TCP_DEFECT_BAD_PROFILER_EVENTS
    profiler_(&event, 9, phandle, 1, nullptr);  // defect: no such event type
#endif
    profiler_(&event, ncclProfilerNetEventStart, phandle, 1, nullptr);
    profiler_(&event, ncclProfilerNetEventUpdate, phandle, 1, nullptr);
    profiler_(&event, ncclProfilerNetEventStop, phandle, 1, nullptr);
  }

 private:
  ncclDebugLogger_t log_;
  ncclProfilerCallback_t profiler_;
  bool hasProfiler_;
};
#define CONF_TCP_HOST_CALL(...) host_(__VA_ARGS__)
#else
#define CONF_TCP_HOST_CALL(...) \
  do {                          \
  } while (0)
#endif

class ConfTcp {
 public:
  static constexpr const char* kName = CONF_TCP_NAME;

  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<ConfTcp>* out) {
#ifdef CONF_TCP_DEFECT_CRASHES_IN_INIT
    volatile int* nowhere = nullptr;
    *nowhere = 1;  // defect: dies while NCCL (or the probe) initializes it
#endif
    *out = std::make_unique<ConfTcp>(args);
#ifdef CONF_TCP_TUNABLE
    std::string bad;
    (*out)->tunables_ = Tunables::fromEnvironment(&bad);
    if (!bad.empty()) {
      out->reset();
      NCCLNET_WARN(args.logger, "init: %s does not parse whole", bad.c_str());
      return ncclInvalidArgument;
    }
#endif
    return ncclSuccess;
  }
  explicit ConfTcp(const ncclnet::InitArgs& args)
      : log_(args.logger)
#if defined(CONF_TCP_CALLS_HOST_UNCHECKED) || defined(CONF_TCP_DEFECT_BAD_PROFILER_EVENTS)
        ,
        host_(args)
#endif
  {
    CONF_TCP_HOST_CALL("init");
#ifdef CONF_TCP_DEFECT_SEGFAULTS_BEHIND_A_HANDLER
    // As some fabric libraries do: a SIGSEGV handler of their own that
    // turns a crash into exit(1), hiding the signal from the parent.
    struct sigaction quiet {};
    quiet.sa_handler = [](int) { std::exit(1); };
    sigemptyset(&quiet.sa_mask);
    sigaction(SIGSEGV, &quiet, nullptr);
#endif
  }

  ncclResult_t devices(int* ndev) {
    CONF_TCP_HOST_CALL("devices");
    *ndev = kDevices;
    return ncclSuccess;
  }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    CONF_TCP_HOST_CALL("getProperties");
    if (dev < 0 || dev >= kDevices) return bad("getProperties", "no such device");
#ifdef CONF_TCP_DEFECT_DUPLICATE_NAMES
    props->name = names_[0];  // defect: every device has the same name
#else
    props->name = names_[dev];
#endif
    props->pciPath = nullptr;
    props->guid = 0xc0f0 + static_cast<uint64_t>(dev);
    props->ptrSupport = NCCL_PTR_HOST;
#ifdef CONF_TCP_DEFECT_BAD_PROPERTY
    props->ptrSupport = NCCL_PTR_HOST | NCCL_PTR_DMABUF;  // defect: DMA-BUF without regMrDmaBuf
#endif
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
    CONF_TCP_HOST_CALL("listen");
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
    CONF_TCP_HOST_CALL("connect");
    Tunables::stall(tunables_.slowSetupMs);
#if defined(CONF_TCP_DEFECT_SEGFAULTS_IN_CONNECT) || \
    defined(CONF_TCP_DEFECT_SEGFAULTS_BEHIND_A_HANDLER)
    volatile int* nowhere = nullptr;
    *nowhere = 1;  // defect: a NULL dereference in connect
#endif
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    if (h.magic != kHandleMagic) return bad("connect", "not a conf-tcp handle");
    *sendComm = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
#ifdef CONF_TCP_DEFECT_POISONED_BY_BAD_CONNECT
    if (poisoned_) return bad("connect", "an earlier connect failed");  // defect: one for all
#endif
    if (h.connectId == 0) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return sys("connect");
      tune(fd);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = h.addr;
      addr.sin_port = h.port;
#ifdef CONF_TCP_DEFECT_BLOCKS_IN_CONNECT
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
      auto blocked = std::make_unique<SendComm>(fd);
      *sendComm = blocked.get();
      sends_.emplace(blocked.get(), std::move(blocked));
      return ncclSuccess;
#else
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
          errno != EINPROGRESS) {
        close(fd);
        return connectFailed();
      }
#endif
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
    auto comm = std::make_unique<SendComm>(it->second);
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
    CONF_TCP_HOST_CALL("accept");
    Tunables::stall(tunables_.slowSetupMs);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = listens_.find(listenComm);
    if (it == listens_.end()) return bad("accept", "unknown listenComm");
    *recvComm = nullptr;
    Listen& l = *it->second;
    for (;;) {
#ifdef CONF_TCP_DEFECT_ONE_HANDSHAKE_AT_A_TIME
      if (!l.pending.empty()) break;  // defect: the next connection waits for this one's hello
#endif
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
#ifdef CONF_TCP_DEFECT_ACCEPT_FAILS_ON_STRAY
        return bad("accept", "a connection that is not a conf-tcp peer");  // defect: fatal
#endif
        NCCLNET_INFO(log_, NCCL_NET, "accept: dropped a connection that is not a conf-tcp peer");
        continue;
      }
      tune(fd);
#ifdef CONF_TCP_DEFECT_BLOCKS_IN_CONNECT
      char ack = 1;
      if (write(fd, &ack, 1) != 1) return sys("accept");
#endif
      auto comm = std::make_unique<RecvComm>(fd);
      *recvComm = comm.get();
      recvs_.emplace(comm.get(), std::move(comm));
      return ncclSuccess;
    }
    return ncclSuccess;
  }

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    CONF_TCP_HOST_CALL("regMr");
    std::lock_guard<std::mutex> lock(mutex_);
    if (type != NCCL_PTR_HOST) return bad("regMr", "only host memory");
    if (!sends_.count(comm) && !recvs_.count(comm)) return bad("regMr", "unknown comm");
    auto mr = std::make_unique<Mr>(Mr{kMrMagic, static_cast<const char*>(data), size});
    *mhandle = mr.get();
    mrs_.emplace(mr.get(), std::move(mr));
    return ncclSuccess;
  }

  ncclResult_t deregMr(void*, void* mhandle) {
    CONF_TCP_HOST_CALL("deregMr");
    Tunables::stall(tunables_.slowCloseMs);
    std::lock_guard<std::mutex> lock(mutex_);
    return mrs_.erase(mhandle) ? ncclSuccess : bad("deregMr", "not an mhandle of regMr");
  }

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                     [[maybe_unused]] void* phandle, void** request) {
    CONF_TCP_HOST_CALL("isend", phandle);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sends_.find(sendComm);
    if (it == sends_.end()) return bad("isend", "unknown sendComm");
#ifdef CONF_TCP_DEFECT_SEGFAULTS_ON_BAD_MHANDLE
    if (!mrs_.count(mhandle)) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;  // defect: dies on an mhandle regMr never returned (NCCL never passes one)
    }
#endif
    if (!covers(mhandle, data, size)) return bad("isend", "buffer outside its registration");
    Request* r = it->second->pool().acquire();
#ifdef CONF_TCP_DEFECT_KEEPS_STALE_REQUEST
    if (r == nullptr) return ncclSuccess;  // defect: *request keeps what the caller left there
#endif
    *request = r;  // NULL: every request is in flight, NCCL retries later
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
    CONF_TCP_HOST_CALL("irecv", phandles ? phandles[0] : nullptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = recvs_.find(recvComm);
    if (it == recvs_.end()) return bad("irecv", "unknown recvComm");
    if (n < 1 || n > kMaxRecvs) return bad("irecv", "n outside 1..maxRecvs");
    for (int i = 0; i < n; i++) {
      if (!covers(mhandles[i], data[i], sizes[i]))
        return bad("irecv", "buffer outside its registration");
    }
#ifdef CONF_TCP_DEFECT_LEAVES_SENTINEL
    bool hinted = *request == reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);
#endif
    Request* r = it->second->pool().acquire();
#ifdef CONF_TCP_DEFECT_KEEPS_STALE_REQUEST
    if (r == nullptr) return ncclSuccess;  // defect: *request keeps what the caller left there
#endif
    *request = r;
#ifdef CONF_TCP_DEFECT_LEAVES_SENTINEL
    if (hinted) *request = reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);  // defect
#endif
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
    CONF_TCP_HOST_CALL("iflush");
    *request = nullptr;  // host memory is coherent: nothing to flush
    return ncclSuccess;
  }

  ncclResult_t test(void* request, int* done, int* sizes) {
    CONF_TCP_HOST_CALL("test");
    std::lock_guard<std::mutex> lock(mutex_);
    Request* r = findRequest(request);
    if (r == nullptr) return bad("test", "not a request in flight");
    if (r->isSend)
      static_cast<SendComm*>(r->owner)->progress();
    else
      static_cast<RecvComm*>(r->owner)->progress();
    *done = r->done;
#ifdef CONF_TCP_DEFECT_NEVER_COMPLETES
    if (!r->isSend) *done = 0;  // defect: receives never report completion
#endif
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
    CONF_TCP_HOST_CALL("irecvConsumed");
    std::lock_guard<std::mutex> lock(mutex_);
    return recvs_.count(recvComm) ? ncclSuccess : bad("irecvConsumed", "unknown recvComm");
  }

  ncclResult_t closeSend(void* comm) {
    CONF_TCP_HOST_CALL("closeSend");
    Tunables::stall(tunables_.slowCloseMs);
    std::lock_guard<std::mutex> lock(mutex_);
    return sends_.erase(comm) ? ncclSuccess : bad("closeSend", "unknown sendComm");
  }
  ncclResult_t closeRecv(void* comm) {
    CONF_TCP_HOST_CALL("closeRecv");
    Tunables::stall(tunables_.slowCloseMs);
    std::lock_guard<std::mutex> lock(mutex_);
    return recvs_.erase(comm) ? ncclSuccess : bad("closeRecv", "unknown recvComm");
  }
  ncclResult_t closeListen(void* comm) {
    CONF_TCP_HOST_CALL("closeListen");
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
#ifdef CONF_TCP_DEFECT_POISONED_BY_BAD_CONNECT
    poisoned_ = true;
#endif
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
  Tunables tunables_;
#if defined(CONF_TCP_CALLS_HOST_UNCHECKED) || defined(CONF_TCP_DEFECT_BAD_PROFILER_EVENTS)
  HostCalls host_;
#endif
  std::mutex mutex_;
  char names_[kDevices][16] = {"conf-tcp0", "conf-tcp1"};
  uint64_t nextConnectId_ = 0;
  std::mt19937_64 random_{std::random_device{}()};
#ifdef CONF_TCP_DEFECT_POISONED_BY_BAD_CONNECT
  bool poisoned_ = false;
#endif
  std::unordered_map<uint64_t, int> connecting_;
  std::unordered_map<void*, std::unique_ptr<Listen>> listens_;
  std::unordered_map<void*, std::unique_ptr<SendComm>> sends_;
  std::unordered_map<void*, std::unique_ptr<RecvComm>> recvs_;
  std::unordered_map<void*, std::unique_ptr<Mr>> mrs_;
};

}  // namespace
}  // namespace conftcp

NCCLNET_EXPORT_PLUGIN(conftcp::ConfTcp)
