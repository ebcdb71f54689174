// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the plugin class NCCL drives, exported through every ABI version.
//
// Locks: the registry mutex (which comms exist) is taken before an endpoint
// mutex, never after; the request index has its own leaf mutex, taken
// under an endpoint mutex so a request leaves the index before its slot can
// be reused.
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "comm.hpp"
#include "config.hpp"
#include "discovery.hpp"
#include "endpoint.hpp"
#include "ncclnet/plugin.hpp"

namespace ncclnet::ofinet {
namespace {

class OfiNet {
 public:
  static constexpr const char* kName = "sdk-ofi";

  static ncclResult_t create(const InitArgs& args, std::unique_ptr<OfiNet>* out) {
    auto net = std::make_unique<OfiNet>(args.logger);
    ncclResult_t res = Config::read(net->params_, &net->config_);
    if (res != ncclSuccess) return res;
    uint32_t api = fi_version();
    NCCLNET_INFO(net->log_, NCCL_INIT | NCCL_NET, "libfabric %u.%u (headers %d.%d), API %u.%u",
                 FI_MAJOR(api), FI_MINOR(api), FI_MAJOR_VERSION, FI_MINOR_VERSION,
                 FI_MAJOR(apiVersion()), FI_MINOR(apiVersion()));
    std::vector<Nic> nics;
    std::string why;
    res = discoverNics(net->config_, net->log_, &nics, &why);
    if (res != ncclSuccess) {
      NCCLNET_WARN(net->log_, "no usable libfabric NIC: %s", why.c_str());
      return res;
    }
    for (Nic& nic : nics) {
      auto device = std::make_unique<Device>();
      device->nic = std::move(nic);
      net->devices_.push_back(std::move(device));
    }
    *out = std::move(net);
    return ncclSuccess;
  }

  explicit OfiNet(Logger log) : log_(log), params_(log) {
    // Names a connect in progress inside handles (comm.hpp: Handle).
    std::random_device random;
    nonce_ = (static_cast<uint64_t>(random()) << 32 | random()) | 1;
  }

  ~OfiNet() {
    // Comms NCCL never closed go before the endpoints they use, each under
    // its endpoint's mutex (the watchdog looks at them).
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& entry : connecting_) destroy(std::move(entry.second));
    for (auto& entry : comms_) destroy(std::move(entry.second));
    connecting_.clear();
    comms_.clear();
  }

  const ParamTable& params() const { return params_; }

  ncclResult_t devices(int* ndev) {
    *ndev = static_cast<int>(devices_.size());
    return ncclSuccess;
  }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    if (dev < 0 || dev >= static_cast<int>(devices_.size())) {
      NCCLNET_WARN(log_, "getProperties: device %d does not exist (%zu devices)", dev,
                   devices_.size());
      return ncclInvalidArgument;
    }
    const Nic& nic = devices_[dev]->nic;
    props->name = const_cast<char*>(nic.name.c_str());
    props->pciPath = nic.pciPath.empty() ? nullptr : const_cast<char*>(nic.pciPath.c_str());
    props->guid = nic.guid;
    // DMA-BUF only where this build and the libfabric loaded both have
    // FI_MR_DMABUF and the provider registers device memory (dmabuf.hpp).
    props->ptrSupport =
        NCCL_PTR_HOST | (nic.hmem ? NCCL_PTR_CUDA : 0) | (nic.dmabuf ? NCCL_PTR_DMABUF : 0);
    // Registrations belong to the device's domain, not to a comm, and
    // re-registering covered pages is a cache hit.
    props->regIsGlobal = 1;
    props->forceFlush = 0;
    props->speed = nic.speedMbps;
    props->port = 1;
    props->latency = 0;  // unknown: NCCL's default
    props->maxComms = static_cast<int>(std::min<uint64_t>(nic.tags.connIdCount(), 65536));
    props->maxRecvs = kMaxRecvs;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    props->vProps.ndevs = 1;
    props->vProps.devs[0] = dev;
    // test() reports sizes as int: no single transfer may exceed INT_MAX.
    size_t limit = std::min<size_t>(nic.info->ep_attr->max_msg_size, NCCL_MAX_NET_SIZE);
    props->maxP2pBytes = limit;
    props->maxCollBytes = limit;
    props->maxMultiRequestSize = 1;
    props->railId = NCCL_NET_ID_UNDEF;
    props->planeId = NCCL_NET_ID_UNDEF;
    return ncclSuccess;
  }

  // ---- connection setup ------------------------------------------------------

  ncclResult_t listen(const CommContext&, int dev, void* handle, void** listenComm) {
    if (handle == nullptr || listenComm == nullptr) return bad("listen", "NULL argument");
    *listenComm = nullptr;
    Endpoint* ep = nullptr;
    ncclResult_t res = endpointFor(dev, &ep);
    if (res != ncclSuccess) return res;
    std::unique_ptr<ListenComm> listen;
    Handle h{};
    {
      std::lock_guard<std::mutex> lock(ep->mutex());
      uint64_t id = ep->nextListenId();
      if (id >= ep->tags().listenIdLimit()) return bad("listen", "listen ids exhausted");
      listen = std::make_unique<ListenComm>(ep, id);
      res = listen->post();
      if (res != ncclSuccess) return res;
      h.magic = kHandleMagic;
      h.addressLength = static_cast<uint16_t>(ep->address().size());
      h.listenId = id;
      std::memcpy(h.address, ep->address().data(), ep->address().size());
    }
    std::memcpy(handle, &h, sizeof(h));
    *listenComm = listen.get();
    std::lock_guard<std::mutex> lock(mutex_);
    comms_.emplace(listen.get(), std::move(listen));
    return ncclSuccess;
  }

  ncclResult_t connect(const CommContext&, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t**) {
    if (handle == nullptr || sendComm == nullptr) return bad("connect", "NULL argument");
    *sendComm = nullptr;
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    if (h.magic != kHandleMagic || h.addressLength == 0 || h.addressLength > kMaxAddress) {
      NCCLNET_WARN(log_, "connect: not an sdk-ofi handle (magic 0x%08x, address %u bytes)", h.magic,
                   h.addressLength);
      return ncclInvalidUsage;
    }
    Endpoint* ep = nullptr;
    ncclResult_t res = endpointFor(dev, &ep);
    if (res != ncclSuccess) return res;

    SendComm* comm = nullptr;
    uint64_t pendingId = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (h.connectorNonce == nonce_) {
        auto it = connecting_.find(h.pendingId);
        if (it != connecting_.end()) {
          comm = it->second.get();
          pendingId = h.pendingId;
        }
      }
    }
    if (comm == nullptr) {
      // First call with this buffer: the connection's state is created here
      // and named in the handle, which NCCL passes back on every retry.
      std::unique_ptr<SendComm> fresh;
      {
        std::lock_guard<std::mutex> lock(ep->mutex());
        Remote* peer = nullptr;
        res = ep->resolve(h.address, h.addressLength, &peer);
        if (res != ncclSuccess) return res;
        uint32_t connId = 0;
        if (!ep->allocConnId(&connId)) return bad("connect", "connection ids exhausted");
        fresh = std::make_unique<SendComm>(ep, peer, connId, h.listenId);
      }
      comm = fresh.get();
      std::lock_guard<std::mutex> lock(mutex_);
      pendingId = ++lastPendingId_;
      connecting_.emplace(pendingId, std::move(fresh));
      h.connectorNonce = nonce_;
      h.pendingId = pendingId;
      std::memcpy(handle, &h, sizeof(h));
    }

    bool connected = false;
    ncclResult_t failure = ncclSuccess;
    {
      std::lock_guard<std::mutex> lock(ep->mutex());
      failure = comm->postConnect();
      if (failure == ncclSuccess) failure = ep->progress();
      if (failure == ncclSuccess) comm->connectFailed(&failure);
      connected = failure == ncclSuccess && comm->connected();
    }
    if (!connected && failure == ncclSuccess) return ncclSuccess;  // call again

    // Done, one way or the other: the handle may be used for a new connect.
    h.connectorNonce = 0;
    h.pendingId = 0;
    std::memcpy(handle, &h, sizeof(h));
    std::unique_ptr<SendComm> owned;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = connecting_.find(pendingId);
      owned = std::move(it->second);
      connecting_.erase(it);
      if (connected) {
        *sendComm = owned.get();
        comms_.emplace(owned.get(), std::move(owned));
        return ncclSuccess;
      }
    }
    std::lock_guard<std::mutex> lock(ep->mutex());
    ep->retire(std::move(owned));
    return failure;
  }

  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t**) {
    if (recvComm == nullptr) return bad("accept", "recvComm is NULL");
    *recvComm = nullptr;
    auto* listen = static_cast<ListenComm*>(find(listenComm, Comm::Kind::Listen));
    if (listen == nullptr) return bad("accept", "not a live listenComm");
    Endpoint& ep = listen->endpoint();
    RecvComm* comm = nullptr;
    {
      std::lock_guard<std::mutex> lock(ep.mutex());
      ncclResult_t res = listen->post();
      if (res == ncclSuccess) res = ep.progress();
      if (res != ncclSuccess) return res;
      ncclResult_t error = ncclSuccess;
      const ConnectMessage* message = listen->message(&error);
      if (error != ncclSuccess) return error;
      if (message == nullptr) return ncclSuccess;  // nobody yet: call again
      Remote* peer = nullptr;
      res = ep.resolve(message->address, message->addressLength, &peer);
      uint32_t connId = message->connId;
      listen->consume();
      // Several connects may target one handle; the receive for the next
      // one is posted by the next accept. Posted now, it would only be left
      // for closeListen to cancel in the usual one-accept-per-listen case.
      if (res != ncclSuccess) return res;  // that connector cannot be answered
      comm = new RecvComm(&ep, peer, connId);
    }
    *recvComm = comm;
    std::lock_guard<std::mutex> lock(mutex_);
    comms_.emplace(comm, std::unique_ptr<Comm>(comm));
    return ncclSuccess;
  }

  // ---- memory registration --------------------------------------------------

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    if (mhandle == nullptr) return bad("regMr", "mhandle is NULL");
    Comm* c = findDataComm(comm);
    if (c == nullptr) return bad("regMr", "not a live sendComm or recvComm");
    std::lock_guard<std::mutex> lock(c->endpoint().mutex());
    return c->endpoint().regMr(data, size, type, mhandle);
  }

  // Always exported, so one binary serves every libfabric it may meet; on a
  // NIC without DMA-BUF (ptrSupport says so) it fails with one log line
  // naming the check that failed. The fd is used during the call only.
  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle) {
    if (mhandle == nullptr) return bad("regMrDmaBuf", "mhandle is NULL");
    Comm* c = findDataComm(comm);
    if (c == nullptr) return bad("regMrDmaBuf", "not a live sendComm or recvComm");
    Endpoint& ep = c->endpoint();
    if (!ep.nic().dmabuf) {
      NCCLNET_WARN(log_,
                   "regMrDmaBuf on %s: DMA-BUF is not available: %s; ptrSupport does not "
                   "advertise NCCL_PTR_DMABUF",
                   ep.nic().name.c_str(), ep.nic().dmabufWhyNot.c_str());
      return ncclInvalidUsage;
    }
    // A host buffer needs no dma-buf (NCCL passes CUDA memory only).
    if (type == NCCL_PTR_HOST) return regMr(comm, data, size, type, mhandle);
    if (type != NCCL_PTR_CUDA) return bad("regMrDmaBuf", "type is neither NCCL_PTR_CUDA nor HOST");
    if (fd < 0) return bad("regMrDmaBuf", "the dma-buf fd is negative");
    std::lock_guard<std::mutex> lock(ep.mutex());
    return ep.regMrDmaBuf(data, size, offset, fd, mhandle);
  }

  ncclResult_t deregMr(void* comm, void* mhandle) {
    Comm* c = findDataComm(comm);
    if (c == nullptr) return bad("deregMr", "not a live sendComm or recvComm");
    std::lock_guard<std::mutex> lock(c->endpoint().mutex());
    return c->endpoint().deregMr(mhandle);
  }

  // ---- data path ------------------------------------------------------------

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void*,
                     void** request) {
    if (request == nullptr) return bad("isend", "request is NULL");
    *request = nullptr;
    auto* comm = static_cast<SendComm*>(find(sendComm, Comm::Kind::Send));
    if (comm == nullptr) return bad("isend", "not a live sendComm");
    std::lock_guard<std::mutex> lock(comm->endpoint().mutex());
    ncclResult_t res = comm->isend(data, size, tag, mhandle, request);
    if (res == ncclSuccess && *request != nullptr) track(*request, comm);
    return res;
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void**, void** request) {
    if (request == nullptr) return bad("irecv", "request is NULL");
    *request = nullptr;  // NCCL may have preloaded NCCL_NET_OPTIONAL_RECV_COMPLETION
    if (data == nullptr || sizes == nullptr || tags == nullptr) {
      return bad("irecv", "NULL data, sizes or tags");
    }
    auto* comm = static_cast<RecvComm*>(find(recvComm, Comm::Kind::Recv));
    if (comm == nullptr) return bad("irecv", "not a live recvComm");
    std::lock_guard<std::mutex> lock(comm->endpoint().mutex());
    ncclResult_t res = comm->irecv(n, data, sizes, tags, mhandles, request);
    if (res == ncclSuccess && *request != nullptr) track(*request, comm);
    return res;
  }

  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request) {
    if (request == nullptr) return bad("iflush", "request is NULL");
    *request = nullptr;
    auto* comm = static_cast<RecvComm*>(find(recvComm, Comm::Kind::Recv));
    if (comm == nullptr) return bad("iflush", "not a live recvComm");
    if (n < 1 || n > kMaxRecvs || data == nullptr || sizes == nullptr) {
      return bad("iflush", "n outside 1..maxRecvs or NULL data/sizes");
    }
    std::lock_guard<std::mutex> lock(comm->endpoint().mutex());
    ncclResult_t res = comm->iflush(n, data, sizes, mhandles, request);
    if (res == ncclSuccess && *request != nullptr) track(*request, comm);
    return res;
  }

  ncclResult_t test(void* request, int* done, int* sizes) {
    if (done == nullptr) return bad("test", "done is NULL");
    *done = 0;
    Comm* comm = nullptr;
    {
      std::lock_guard<std::mutex> lock(requestsMutex_);
      auto it = requests_.find(request);
      if (it != requests_.end()) comm = it->second;
    }
    if (comm == nullptr) {
      NCCLNET_WARN(log_, "test: %p is not a request in flight (finished, or never issued)",
                   request);
      return ncclInvalidArgument;
    }
    std::lock_guard<std::mutex> lock(comm->endpoint().mutex());
    auto* r = static_cast<Request*>(request);
    ncclResult_t res = testRequest(comm, r, done, sizes);
    if (*done) {
      {
        std::lock_guard<std::mutex> index(requestsMutex_);
        requests_.erase(request);
      }
      releaseRequest(comm, r);
    }
    return res;
  }

  // ---- teardown -------------------------------------------------------------

  ncclResult_t closeSend(void* comm) { return close("closeSend", comm, Comm::Kind::Send); }
  ncclResult_t closeRecv(void* comm) { return close("closeRecv", comm, Comm::Kind::Recv); }
  ncclResult_t closeListen(void* comm) { return close("closeListen", comm, Comm::Kind::Listen); }

 private:
  struct Device {
    Nic nic;
    std::mutex openMutex;
    std::unique_ptr<Endpoint> endpoint;  // opened by the first listen or connect
  };

  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInvalidArgument;
  }

  ncclResult_t endpointFor(int dev, Endpoint** out) {
    if (dev < 0 || dev >= static_cast<int>(devices_.size())) {
      NCCLNET_WARN(log_, "device %d does not exist (%zu devices)", dev, devices_.size());
      return ncclInvalidArgument;
    }
    Device& device = *devices_[dev];
    std::lock_guard<std::mutex> lock(device.openMutex);
    if (!device.endpoint) {
      ncclResult_t res = Endpoint::open(device.nic, config_, log_, &device.endpoint);
      if (res != ncclSuccess) return res;
    }
    *out = device.endpoint.get();
    return ncclSuccess;
  }

  // Frees a comm the way close() does when it is quiescent, else leaves it
  // to its endpoint.
  template <class C>
  static void destroy(std::unique_ptr<C> comm) {
    if (!comm) return;
    Endpoint& ep = comm->endpoint();
    std::lock_guard<std::mutex> lock(ep.mutex());
    comm->cancelAll();
    ep.retire(std::move(comm));
  }

  Comm* find(void* comm, Comm::Kind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = comms_.find(comm);
    if (it == comms_.end() || it->second->kind() != kind) return nullptr;
    return it->second.get();
  }

  Comm* findDataComm(void* comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = comms_.find(comm);
    if (it == comms_.end() || it->second->kind() == Comm::Kind::Listen) return nullptr;
    return it->second.get();
  }

  void track(void* request, Comm* comm) {
    std::lock_guard<std::mutex> lock(requestsMutex_);
    requests_[request] = comm;
  }

  ncclResult_t close(const char* fn, void* handle, Comm::Kind kind) {
    std::unique_ptr<Comm> comm;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = comms_.find(handle);
      if (it == comms_.end() || it->second->kind() != kind) {
        NCCLNET_WARN(log_, "%s: %p is not a live comm of that kind", fn, handle);
        return ncclInvalidArgument;
      }
      comm = std::move(it->second);
      comms_.erase(it);
    }
    {
      std::lock_guard<std::mutex> lock(requestsMutex_);
      for (auto it = requests_.begin(); it != requests_.end();) {
        it = it->second == comm.get() ? requests_.erase(it) : std::next(it);
      }
    }
    Endpoint& ep = comm->endpoint();
    // Operations still in flight (an abort): take back what can be taken
    // back, give the rest a bounded time, then leave the object to the
    // endpoint, which frees it when its last completion arrives. Nothing
    // more is worth waiting for once the peer is gone.
    bool gone = false;
    {
      std::lock_guard<std::mutex> lock(ep.mutex());
      gone = comm->gone();
    }
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(gone ? 0 : config_.closeTimeoutMs);
    bool cancelled = false;
    while (true) {
      {
        std::lock_guard<std::mutex> lock(ep.mutex());
        if (!cancelled) {
          comm->cancelAll();
          cancelled = true;
        }
        ep.progress();
        if (comm->quiescent()) {
          comm.reset();  // under the lock: its destructor returns ids and registrations
          return ncclSuccess;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
          NCCLNET_INFO(log_, NCCL_NET, "%s: %d operations still in flight; freed when they end", fn,
                       comm->pending);
          ep.retire(std::move(comm));
          return ncclSuccess;
        }
      }
      std::this_thread::yield();
    }
  }

  Logger log_;
  ParamTable params_;
  Config config_;
  uint64_t nonce_ = 0;
  std::vector<std::unique_ptr<Device>> devices_;  // declared before the comms that use them

  std::mutex mutex_;  // guards comms_, connecting_, lastPendingId_
  std::unordered_map<void*, std::unique_ptr<Comm>> comms_;
  std::unordered_map<uint64_t, std::unique_ptr<SendComm>> connecting_;
  uint64_t lastPendingId_ = 0;

  std::mutex requestsMutex_;  // leaf: guards requests_
  std::unordered_map<const void*, Comm*> requests_;
};

}  // namespace
}  // namespace ncclnet::ofinet

NCCLNET_EXPORT_PLUGIN(ncclnet::ofinet::OfiNet)
