// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the plugin class NCCL drives through the SDK's export tables.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm.hpp"
#include "config.hpp"
#include "connect.hpp"
#include "devices.hpp"
#include "gpu_memory.hpp"
#include "ibv_api.hpp"
#include "ncclnet/plugin.hpp"

namespace sdkib {

class IbNet {
 public:
  static constexpr const char* kName = "sdk-ib";

  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<IbNet>* out) {
    auto net = std::make_unique<IbNet>(args.logger);
    ncclResult_t res = Config::read(net->params_, &net->config_);
    if (res != ncclSuccess) return res;
    // Nothing usable: init fails (docs/abi.md), so NCCL moves on to the next
    // network. NCCL's own IB transport succeeds with zero devices instead
    // and lets devices() say so (docs/plugins/ib.md).
    if (!net->discover()) return ncclSystemError;
    *out = std::move(net);
    return ncclSuccess;
  }

  explicit IbNet(ncclnet::Logger log) : log_(log), params_(log) {}

  const ncclnet::ParamTable& params() const { return params_; }

  ncclResult_t devices(int* ndev) {
    *ndev = static_cast<int>(ports_.size());
    return ncclSuccess;
  }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    const Port* port = portAt("getProperties", dev);
    if (port == nullptr) return ncclInvalidArgument;
    props->name = const_cast<char*>(port->name.c_str());
    props->pciPath = port->pciPath.empty() ? nullptr : const_cast<char*>(port->pciPath.c_str());
    props->guid = port->guid;
    props->ptrSupport = port->hca->ptrSupport;  // gpu_memory.hpp: peer memory, DMA-BUF
    props->regIsGlobal = 1;                     // the MR cache makes re-registration free
    props->forceFlush = 0;
    props->speed = port->speedMbps;
    props->port = port->port;
    props->latency = 0;
    props->maxComms = port->hca->attr.max_qp;
    props->maxRecvs = kMaxRecvs;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    props->vProps.ndevs = 1;
    props->vProps.devs[0] = dev;
    props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxCollBytes = NCCL_MAX_COLLNET_SIZE;
    props->maxMultiRequestSize = 1;
    props->railId = NCCL_NET_ID_UNDEF;
    props->planeId = NCCL_NET_ID_UNDEF;
    return ncclSuccess;
  }

  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm) {
    if (portAt("listen", dev) == nullptr || handle == nullptr) return ncclInvalidArgument;
    auto l = std::make_unique<ListenComm>();
    l->dev = dev;
    l->trafficClass = ctx.trafficClass;
    sockaddr_storage bound;
    std::string why;
    if (!oobListen(oobAddr_, &l->listener, &bound, &why)) {
      NCCLNET_WARN(log_, "listen: %s", why.c_str());
      return ncclSystemError;
    }
    l->secret = randomSecret();
    Handle h{};
    h.magic = kHandleMagic;
    h.secret = l->secret;
    std::memcpy(&h.addr, &bound,
                bound.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
    std::memcpy(handle, &h, sizeof(h));
    std::lock_guard<std::mutex> lock(mutex_);
    *listenComm = l.get();
    listens_.emplace(l.get(), std::move(l));
    return ncclSuccess;
  }

  ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t**) {
    *sendComm = nullptr;
    const Port* port = portAt("connect", dev);
    if (port == nullptr || handle == nullptr) return ncclInvalidArgument;
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    if (h.magic != kHandleMagic) {
      NCCLNET_WARN(log_, "connect: the handle was not written by sdk-ib's listen");
      return ncclInvalidUsage;
    }
    std::string why;
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = connects_.find(reinterpret_cast<void*>(h.pending));
    if (h.stage == 0 || it == connects_.end()) {
      auto st = std::make_unique<ConnectState>();
      st->sl = serviceLevel(config_, ctx.trafficClass);
      st->tc = trafficClassFor(config_, ctx.trafficClass);
      st->deadline = Clock::now() + std::chrono::milliseconds(config_.connectTimeoutMs);
      st->comm = std::make_unique<SendComm>(api_, *port, log_, requests_);
      sockaddr_storage peer{};
      std::memcpy(&peer, &h.addr, sizeof(h.addr));
      st->comm->peer = addressString(peer);
      if (!st->comm->setup(config_, &why) || !oobConnectStart(peer, &st->fd, &why)) {
        NCCLNET_WARN(log_, "connect to %s on %s: %s", st->comm->peer.c_str(), port->name.c_str(),
                     why.c_str());
        return ncclSystemError;
      }
      st->comm->describe(config_, &st->local);
      st->secret = h.secret;
      st->local.secret = h.secret;
      h.stage = 1;
      h.pending = reinterpret_cast<uintptr_t>(st.get());
      std::memcpy(handle, &h, sizeof(h));
      it = connects_.emplace(st.get(), std::move(st)).first;
    }
    ConnectState& st = *it->second;
    Progress p = stepConnect(config_, st, &why);
    if (p == Progress::kPending) return ncclSuccess;
    std::unique_ptr<ConnectState> finished = std::move(it->second);
    connects_.erase(it);
    if (p == Progress::kFailed) {
      NCCLNET_WARN(log_, "connect to %s: %s", finished->comm->peer.c_str(), why.c_str());
      return ncclRemoteError;
    }
    NCCLNET_INFO(log_, NCCL_INIT | NCCL_NET, "connected to %s on %s, %d QP(s)",
                 finished->comm->peer.c_str(), port->name.c_str(), finished->comm->ep.nqps());
    oobKeepAlive(finished->fd);
    finished->comm->oob = std::move(finished->fd);
    *sendComm = finished->comm.get();
    sends_.emplace(finished->comm.get(), std::move(finished->comm));
    return ncclSuccess;
  }

  // Returns success with no comm until a peer that holds the handle has
  // finished its handshake; strays are dropped along the way.
  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t**) {
    *recvComm = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = listens_.find(listenComm);
    if (it == listens_.end()) return bad("accept", "unknown listenComm");
    ListenComm& l = *it->second;
    AcceptContext ctx{config_, api_, ports_[l.dev], log_, requests_, strays_};
    std::unique_ptr<RecvComm> comm;
    std::string why;
    Progress p = stepAccept(ctx, l, &comm, &why);
    if (p == Progress::kPending) return ncclSuccess;
    if (p == Progress::kFailed) {
      NCCLNET_WARN(log_, "accept on %s: %s", ports_[l.dev].name.c_str(), why.c_str());
      return ncclRemoteError;
    }
    oobKeepAlive(comm->oob);
    *recvComm = comm.get();
    recvs_.emplace(comm.get(), std::move(comm));
    return ncclSuccess;
  }

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    return registerFor("regMr", comm, data, size, type, nullptr, mhandle);
  }

  // The fd is NCCL's: used for this call only, never kept (NCCL closes it
  // as soon as the call returns).
  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle) {
    if (fd < 0) return bad("regMrDmaBuf", "the dma-buf fd is negative");
    DmaBufRange range{offset, fd};
    return registerFor("regMrDmaBuf", comm, data, size, type, &range, mhandle);
  }

  ncclResult_t deregMr(void*, void* mhandle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = mrs_.find(mhandle);
    if (it == mrs_.end()) return bad("deregMr", "unknown mhandle");
    it->second->hca->mrs->release(it->second->mr);
    mrs_.erase(it);
    return ncclSuccess;
  }

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void*,
                     void** request) {
    *request = nullptr;
    SendComm* comm;
    MrHandle* mh;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = sends_.find(sendComm);
      if (it == sends_.end()) return bad("isend", "unknown sendComm");
      comm = it->second.get();
      mh = findMr(mhandle);
    }
    if (size > 0 && (mh == nullptr || !mh->covers(data, size))) {
      return bad("isend", "buffer not inside the registration mhandle names");
    }
    return comm->isend(data, size, tag, mh, request);
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void**, void** request) {
    *request = nullptr;
    if (n < 1 || n > kMaxRecvs) return bad("irecv", "n outside 1..maxRecvs (8)");
    RecvComm* comm;
    MrHandle* mhs[kMaxRecvs] = {};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = recvs_.find(recvComm);
      if (it == recvs_.end()) return bad("irecv", "unknown recvComm");
      comm = it->second.get();
      for (int i = 0; i < n; i++) mhs[i] = findMr(mhandles ? mhandles[i] : nullptr);
    }
    for (int i = 0; i < n; i++) {
      if (sizes[i] > 0 && (mhs[i] == nullptr || !mhs[i]->covers(data[i], sizes[i]))) {
        return bad("irecv", "buffer not inside the registration mhandle names");
      }
    }
    return comm->irecv(n, data, sizes, tags, mhs, request);
  }

  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request) {
    *request = nullptr;
    if (n < 1 || n > kMaxRecvs) return bad("iflush", "n outside 1..maxRecvs (8)");
    RecvComm* comm;
    MrHandle* mhs[kMaxRecvs] = {};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = recvs_.find(recvComm);
      if (it == recvs_.end()) return bad("iflush", "unknown recvComm");
      comm = it->second.get();
      for (int i = 0; i < n; i++) mhs[i] = findMr(mhandles ? mhandles[i] : nullptr);
    }
    const Hca* hca = comm->ep.port().hca.get();
    for (int i = 0; i < n; i++) {
      if (sizes[i] <= 0) continue;
      if (mhs[i] == nullptr || mhs[i]->hca != hca || !mhs[i]->covers(data[i], sizes[i]))
        return bad("iflush", "buffer not inside a registration of this comm's device");
    }
    return comm->iflush(n, data, sizes, mhs, request);
  }

  ncclResult_t test(void* request, int* done, int* sizes) {
    void* owner = requests_.ownerOf(request);
    SendComm* send = nullptr;
    RecvComm* recv = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto s = sends_.find(owner);
      if (s != sends_.end()) send = s->second.get();
      auto r = recvs_.find(owner);
      if (r != recvs_.end()) recv = r->second.get();
    }
    if (send != nullptr) return send->test(static_cast<Request*>(request), done, sizes);
    if (recv != nullptr) return recv->test(static_cast<Request*>(request), done, sizes);
    return bad("test", "not a live request");
  }

  ncclResult_t closeSend(void* comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    return sends_.erase(comm) ? ncclSuccess : bad("closeSend", "unknown sendComm");
  }
  ncclResult_t closeRecv(void* comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    return recvs_.erase(comm) ? ncclSuccess : bad("closeRecv", "unknown recvComm");
  }
  ncclResult_t closeListen(void* comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    return listens_.erase(comm) ? ncclSuccess : bad("closeListen", "unknown listenComm");
  }

 private:
  // False (after one WARN) when no device is usable.
  bool discover() {
    std::string why;
    if (!api_.load(config_.verbsLib, &why)) {
      whyNone_ = why;
    } else if (!oobLocalAddress(config_.socketIfname, &oobAddr_, &why)) {
      whyNone_ = "no address for the connection handshake: " + why;
    } else {
      discoverPorts(api_, config_, log_, &ports_, &whyNone_);
    }
    if (ports_.empty()) {
      NCCLNET_WARN(log_, "init: no usable device, so sdk-ib is not available: %s",
                   whyNone_.c_str());
      return false;
    }
    for (size_t i = 0; i < ports_.size(); i++) {
      const Port& p = ports_[i];
      NCCLNET_INFO(log_, NCCL_INIT | NCCL_NET,
                   "dev %zu: %s port %d %s speed %d Mb/s GID index %d P_Key index %d AR %d%s "
                   "pci %s (verbs: %s)",
                   i, p.name.c_str(), p.port,
                   p.attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB", p.speedMbps,
                   p.gidIndex, p.pkeyIndex, p.adaptiveRouting ? 1 : 0,
                   p.hca->relaxedOrdering ? " [RO]" : "",
                   p.pciPath.empty() ? "none" : p.pciPath.c_str(), api_.path.c_str());
    }
    return true;
  }

  const Port* portAt(const char* fn, int dev) {
    if (dev < 0 || dev >= static_cast<int>(ports_.size())) {
      NCCLNET_WARN(log_, "%s: device %d does not exist (%zu devices)", fn, dev, ports_.size());
      return nullptr;
    }
    return &ports_[dev];
  }

  CommBase* findComm(void* comm) {
    auto s = sends_.find(comm);
    if (s != sends_.end()) return s->second.get();
    auto r = recvs_.find(comm);
    return r == recvs_.end() ? nullptr : r->second.get();
  }

  // regMr and regMrDmaBuf: the type the device supports, then the cache.
  ncclResult_t registerFor(const char* fn, void* comm, void* data, size_t size, int type,
                           const DmaBufRange* dmabuf, void** mhandle) {
    *mhandle = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    CommBase* c = findComm(comm);
    if (c == nullptr) return bad(fn, "comm is neither a sendComm nor a recvComm");
    Hca* hca = c->ep.port().hca.get();
    int needed = dmabuf != nullptr ? NCCL_PTR_DMABUF : type;
    if ((type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) || !(hca->ptrSupport & needed)) {
      NCCLNET_WARN(log_, "%s: type %d%s on %s, whose ptrSupport is 0x%x", fn, type,
                   dmabuf != nullptr ? " (DMA-BUF)" : "", hca->name.c_str(), hca->ptrSupport);
      return ncclInternalError;
    }
    std::string why;
    ibv_mr* mr = registerMemory(*hca, data, size, type, dmabuf, &why);
    if (mr == nullptr) {
      NCCLNET_WARN(log_, "%s(%p, %zu, %s) on %s: %s", fn, data, size,
                   type == NCCL_PTR_CUDA ? "CUDA" : "HOST", hca->name.c_str(), why.c_str());
      return ncclSystemError;
    }
    auto h = std::make_unique<MrHandle>(MrHandle{hca, mr, type == NCCL_PTR_CUDA});
    *mhandle = h.get();
    mrs_.emplace(h.get(), std::move(h));
    return ncclSuccess;
  }

  MrHandle* findMr(void* mhandle) {
    auto it = mrs_.find(mhandle);
    return it == mrs_.end() ? nullptr : it->second.get();
  }

  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInvalidArgument;
  }

  ncclnet::Logger log_;
  ncclnet::ParamTable params_;
  Config config_;
  sockaddr_storage oobAddr_{};
  std::string whyNone_;
  RequestIndex requests_;
  // Declaration order is teardown order reversed: comms and registrations
  // go before the ports (HCA contexts), and those before the library.
  IbvApi api_;
  std::vector<Port> ports_;
  std::mutex mutex_;
  ncclnet::WarnLimit strays_;  // lines about connections that are not peers
  std::unordered_map<void*, std::unique_ptr<MrHandle>> mrs_;
  std::unordered_map<void*, std::unique_ptr<ListenComm>> listens_;
  std::unordered_map<void*, std::unique_ptr<ConnectState>> connects_;
  std::unordered_map<void*, std::unique_ptr<SendComm>> sends_;
  std::unordered_map<void*, std::unique_ptr<RecvComm>> recvs_;
};

}  // namespace sdkib

NCCLNET_EXPORT_PLUGIN(sdkib::IbNet)
