// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the plugin object NCCL drives, and the export of its tables.
#include <unistd.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "config.hpp"
#include "connect.hpp"
#include "interfaces.hpp"
#include "ncclnet/cuda_driver.hpp"
#include "ncclnet/plugin.hpp"
#include "ncclnet/unpack.hpp"

namespace ncclnet::socketnet {

namespace {

// The largest message: test() reports sizes as int, and NCCL never issues a
// transfer above 1 GiB (NCCL_MAX_NET_SIZE).
constexpr size_t kMaxMessageBytes = NCCL_MAX_NET_SIZE;
constexpr int kMaxComms = 65536;
constexpr uint32_t kRegionMagic = 0x4d52'5353;

// A host registration. Sockets need none, so this records the range only so
// that deregMr, isend and irecv can tell a real handle from garbage.
struct Region {
  uint32_t magic = kRegionMagic;
  void* base = nullptr;
  size_t size = 0;
};

}  // namespace

class SocketNet {
 public:
  static constexpr const char* kName = "sdk-socket";

  static ncclResult_t create(const InitArgs& args, std::unique_ptr<SocketNet>* out) {
    auto net = std::unique_ptr<SocketNet>(new SocketNet(args.logger));
    ncclResult_t res = Config::read(net->params_, usableCores(), &net->config_);
    if (res != ncclSuccess) return res;
    if (net->config_.unpack && !cuda::Driver::get().available()) {
      NCCLNET_WARN(net->log_,
                   "NCCLNET_SOCKET_UNPACK=1 ignored: UNPACK bounce pages need the CUDA driver, "
                   "which is %s; receive comms stay in host mode",
                   cuda::Driver::get().whyNot().c_str());
      net->config_.unpack = false;
    }
    net->interfaces_ = findInterfaces(net->config_.ifname, net->config_.family, net->log_);
    if (net->interfaces_.empty()) return ncclSystemError;  // NCCL then falls back
    for (size_t i = 0; i < net->interfaces_.size(); i++) {
      const Interface& itf = net->interfaces_[i];
      NCCLNET_INFO(net->log_, NCCL_INIT | NCCL_NET, "device %zu: %s %s, %d Mb/s%s, pci %s", i,
                   itf.name.c_str(), itf.address.c_str(), itf.speedMbps,
                   itf.speedFromSysfs ? "" : " (assumed)",
                   itf.pciPath.empty() ? "none" : itf.pciPath.c_str());
    }
    *out = std::move(net);
    return ncclSuccess;
  }

  const ParamTable& params() const { return params_; }

  ncclResult_t devices(int* ndev) {
    *ndev = static_cast<int>(interfaces_.size());
    return ncclSuccess;
  }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    if (!validDevice("getProperties", dev)) return ncclInvalidArgument;
    Interface& itf = interfaces_[dev];
    props->name = const_cast<char*>(itf.name.c_str());
    props->pciPath = itf.pciPath.empty() ? nullptr : const_cast<char*>(itf.pciPath.c_str());
    props->guid = itf.guid;
    props->ptrSupport = NCCL_PTR_HOST;
    // Registration holds no per-comm state and costs the same for any range.
    props->regIsGlobal = 1;
    props->forceFlush = 0;
    props->speed = itf.speedMbps;
    props->port = 0;
    props->latency = 0;  // NCCL's defaults
    props->maxComms = kMaxComms;
    props->maxRecvs = kMaxRecvs;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    props->vProps.ndevs = 1;
    props->vProps.devs[0] = dev;
    props->maxP2pBytes = kMaxMessageBytes;
    props->maxCollBytes = kMaxMessageBytes;
    if (config_.unpack) {
      // One receive per irecv (a slot of the kernel's queue per step), and
      // no receive larger than the kernel's scatter list covers.
      props->maxRecvs = 1;
      props->netDeviceType = NCCL_NET_DEVICE_UNPACK;
      props->netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
      props->maxP2pBytes = unpack::kMaxReceiveBytes;
      props->maxCollBytes = unpack::kMaxReceiveBytes;
    }
    props->maxMultiRequestSize = 1;
    props->railId = NCCL_NET_ID_UNDEF;
    props->planeId = NCCL_NET_ID_UNDEF;
    return ncclSuccess;
  }

  ncclResult_t listen(const CommContext&, int dev, void* handle, void** listenComm) {
    if (!validDevice("listen", dev)) return ncclInvalidArgument;
    if (handle == nullptr || listenComm == nullptr)
      return bad("listen", "NULL handle or listenComm");
    std::unique_ptr<ListenComm> comm;
    ListenHandle h;
    ncclResult_t res = ListenComm::open(interfaces_[dev], config_, log_, &comm, &h);
    if (res != ncclSuccess) return res;
    encodeHandle(h, handle);
    std::lock_guard<std::mutex> lock(mutex_);
    *listenComm = comm.get();
    listens_.emplace(comm.get(), std::move(comm));
    return ncclSuccess;
  }

  ncclResult_t connect(const CommContext&, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t**) {
    if (handle == nullptr || sendComm == nullptr) return bad("connect", "NULL handle or sendComm");
    *sendComm = nullptr;
    if (!validDevice("connect", dev)) return ncclInvalidArgument;
    ListenHandle h;
    WireError error = decodeHandle(handle, &h);
    if (error != WireError::None) {
      NCCLNET_WARN(log_, "connect: the handle is not an sdk-socket listen handle: %s",
                   describe(error));
      return ncclInvalidUsage;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    // NCCL passes the same buffer on every retry: the connect in progress is
    // found through the id stored in it on the first call.
    uint64_t id = h.connectId;
    if (id == 0) {
      id = nextConnectId_++;
      storeConnectId(handle, id);
      connectors_.emplace(id, std::make_unique<Connector>(h, config_, log_));
    }
    auto it = connectors_.find(id);
    if (it == connectors_.end()) {
      NCCLNET_WARN(log_,
                   "connect: the handle names connect #%llu, which already finished or "
                   "failed; pass a fresh copy of the listen handle",
                   static_cast<unsigned long long>(id));
      return ncclInvalidUsage;
    }
    std::unique_ptr<Connector> connector = std::move(it->second);
    lock.unlock();  // connect steps make system calls: do not hold up other comms
    std::unique_ptr<SendComm> comm;
    ncclResult_t res = connector->step(&comm);
    lock.lock();
    if (res != ncclSuccess || comm) {
      connectors_.erase(id);
    } else {
      connectors_[id] = std::move(connector);
    }
    if (comm) {
      *sendComm = comm.get();
      sends_.emplace(comm.get(), std::move(comm));
    }
    return res;
  }

  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** devHandle) {
    if (recvComm == nullptr) return bad("accept", "NULL recvComm");
    *recvComm = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = listens_.find(listenComm);
    if (it == listens_.end()) return bad("accept", "unknown listenComm");
    std::unique_ptr<RecvComm> comm;
    ncclResult_t res = it->second->accept(&comm);
    if (comm && wantsUnpack(devHandle)) {
      std::unique_ptr<unpack::Receiver> receiver;
      res = makeReceiver(&receiver);
      if (res != ncclSuccess) return res;  // the comm closes
      receiver->describe(*devHandle);
      comm->enableUnpack(std::move(receiver));
    }
    if (comm) {
      *recvComm = comm.get();
      recvs_.emplace(comm.get(), std::move(comm));
    }
    return res;
  }

  ncclResult_t getDeviceMr(void*, void* mhandle, void** dptrMhandle) {
    if (dptrMhandle == nullptr) return bad("getDeviceMr", "NULL dptr_mhandle");
    std::lock_guard<std::mutex> lock(mutex_);
    if (regions_.count(mhandle) == 0) return bad("getDeviceMr", "unknown mhandle");
    // The kernel needs no view of a registration: it only copies bounce
    // pages into buffers it already knows.
    *dptrMhandle = nullptr;
    return ncclSuccess;
  }

  ncclResult_t irecvConsumed(void* recvComm, int, void* request) {
    auto* comm = static_cast<RecvComm*>(recvComm);
    if (comm == nullptr || !comm->valid()) return bad("irecvConsumed", "not a recvComm");
    return comm->consumed(request);
  }

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    if (mhandle == nullptr || comm == nullptr) return bad("regMr", "NULL comm or mhandle");
    if (type != NCCL_PTR_HOST) {
      NCCLNET_WARN(log_, "regMr: memory type %d is not supported (ptrSupport is HOST only)", type);
      return ncclInternalError;
    }
    auto region = std::make_unique<Region>();
    region->base = data;
    region->size = size;
    std::lock_guard<std::mutex> lock(mutex_);
    *mhandle = region.get();
    regions_.emplace(region.get(), std::move(region));
    return ncclSuccess;
  }

  ncclResult_t deregMr(void*, void* mhandle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = regions_.find(mhandle);
    if (it == regions_.end()) return bad("deregMr", "unknown mhandle");
    it->second->magic = 0;  // a stale copy of the handle is refused from now on
    regions_.erase(it);
    return ncclSuccess;
  }

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void*,
                     void** request) {
    auto* comm = static_cast<SendComm*>(sendComm);
    if (comm == nullptr || request == nullptr || !comm->valid()) {
      return bad("isend", "not a sendComm, or NULL request");
    }
    if (!isRegion(mhandle)) return bad("isend", "the mhandle is not one regMr returned");
    return comm->isend(data, size, tag, request);
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void**, void** request) {
    auto* comm = static_cast<RecvComm*>(recvComm);
    if (comm == nullptr || request == nullptr || !comm->valid()) {
      return bad("irecv", "not a recvComm, or NULL request");
    }
    for (int i = 0; mhandles != nullptr && i < n && i < kMaxGroupedRecvs; i++) {
      if (!isRegion(mhandles[i])) return bad("irecv", "an mhandle is not one regMr returned");
    }
    return comm->irecv(n, data, sizes, tags, request);
  }

  ncclResult_t iflush(void*, int, void**, int*, void**, void** request) {
    if (request != nullptr) *request = nullptr;  // host memory only: nothing to flush
    return ncclSuccess;
  }

  ncclResult_t test(void* request, int* done, int* sizes) {
    auto* base = static_cast<RequestBase*>(request);
    if (base == nullptr || done == nullptr || base->magic != kRequestMagic) {
      return bad("test", "not a request of this plugin, or NULL done");
    }
    if (base->kind == RequestKind::Send) {
      return static_cast<SendComm*>(base->comm)->test(static_cast<SendRequest*>(base), done, sizes);
    }
    return static_cast<RecvComm*>(base->comm)->test(static_cast<RecvRequest*>(base), done, sizes);
  }

  ncclResult_t closeSend(void* sendComm) { return closeOne("closeSend", sends_, sendComm); }
  ncclResult_t closeRecv(void* recvComm) { return closeOne("closeRecv", recvs_, recvComm); }
  ncclResult_t closeListen(void* listenComm) {
    return closeOne("closeListen", listens_, listenComm);
  }

 private:
  explicit SocketNet(Logger log) : log_(log), params_(log) {}

  // An UNPACK receive: NCCL preallocated a handle of the version we offer.
  bool wantsUnpack(ncclNetDeviceHandle_v12_t** devHandle) const {
    return config_.unpack && devHandle != nullptr && *devHandle != nullptr &&
           (*devHandle)->netDeviceType == NCCL_NET_DEVICE_UNPACK &&
           (*devHandle)->netDeviceVersion == NCCL_NET_DEVICE_UNPACK_VERSION;
  }

  // A receiver on the process's bounce pool, made at the first UNPACK
  // accept (mutex_ held).
  ncclResult_t makeReceiver(std::unique_ptr<unpack::Receiver>* out) {
    std::string why;
    if (!bounce_) {
      bounce_ = unpack::BouncePool::create(unpack::mappedRegions(cuda::Driver::get()),
                                           config_.unpackArenaBytes, config_.unpackComms, &why);
      if (!bounce_) {
        NCCLNET_WARN(log_, "accept: cannot make the UNPACK bounce pool: %s", why.c_str());
        return ncclSystemError;
      }
    }
    *out = unpack::Receiver::create(bounce_, &why);
    if (!*out) {
      NCCLNET_WARN(log_, "accept: cannot set up UNPACK for a receive comm: %s%s", why.c_str(),
                   " (NCCLNET_SOCKET_UNPACK_COMMS sets how many the pool serves)");
      return ncclSystemError;
    }
    return ncclSuccess;
  }

  // The data path checks only the magic (no lock, no lookup): enough to
  // refuse an mhandle that regMr never returned, which NCCL never passes.
  // NULL is let through: sockets need no registration, so a host may skip
  // it (NCCL's own Socket transport hands out NULL mhandles).
  static bool isRegion(const void* mhandle) {
    return mhandle == nullptr || static_cast<const Region*>(mhandle)->magic == kRegionMagic;
  }

  bool validDevice(const char* fn, int dev) {
    if (dev >= 0 && dev < static_cast<int>(interfaces_.size())) return true;
    NCCLNET_WARN(log_, "%s: device %d does not exist (%zu devices)", fn, dev, interfaces_.size());
    return false;
  }

  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInvalidArgument;
  }

  // Destroys a comm outside the lock: joining helper threads takes time.
  template <class T>
  ncclResult_t closeOne(const char* fn, std::unordered_map<void*, std::unique_ptr<T>>& map,
                        void* comm) {
    std::unique_ptr<T> doomed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map.find(comm);
      if (it == map.end()) return bad(fn, "unknown comm (already closed?)");
      doomed = std::move(it->second);
      map.erase(it);
    }
    return ncclSuccess;
  }

  Logger log_;
  ParamTable params_;
  Config config_;
  std::vector<Interface> interfaces_;  // fixed after create()

  std::mutex mutex_;  // guards the maps below (control path only)
  uint64_t nextConnectId_ =
      randomId() | 1;  // random start: a stale handle from an earlier plugin object finds nothing
  std::unordered_map<uint64_t, std::unique_ptr<Connector>> connectors_;
  std::unordered_map<void*, std::unique_ptr<ListenComm>> listens_;
  std::unordered_map<void*, std::unique_ptr<SendComm>> sends_;
  std::unordered_map<void*, std::unique_ptr<RecvComm>> recvs_;
  std::unordered_map<void*, std::unique_ptr<Region>> regions_;
  std::shared_ptr<unpack::BouncePool> bounce_;  // UNPACK bounce pages, from the first accept
};

}  // namespace ncclnet::socketnet

NCCLNET_EXPORT_PLUGIN(ncclnet::socketnet::SocketNet)
