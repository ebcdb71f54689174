// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the plugin object NCCL drives, and the export of its tables.
#include <memory>
#include <mutex>

#include "closing_sockets.hpp"
#include "config.hpp"
#include "connect.hpp"
#include "device_properties.hpp"
#include "ncclnet/cuda_driver.hpp"
#include "ncclnet/cuda_driver_slot.hpp"
#include "ncclnet/interfaces.hpp"
#include "ncclnet/plugin.hpp"
#include "ncclnet/result_policy.hpp"
#include "ncclnet/unpack.hpp"

namespace ncclnet::socket {

namespace {

// The largest message: test() reports sizes as int, and NCCL never issues a
// transfer above 1 GiB (NCCL_MAX_NET_SIZE).
constexpr size_t kMaxMessageBytes = NCCL_MAX_NET_SIZE;

// The CUDA driver of UNPACK mode, released when NCCL unloads the plugin
// (ncclnet/cuda_driver_slot.hpp); opened at init only when UNPACK is asked.
cuda::DriverSlot gDriver;

}  // namespace

// A host registration: sockets need none, so there is nothing to hold. The
// SDK still hands NCCL a handle, and refuses any that regMr never returned.
struct Region {};

class SocketNet {
 public:
  static constexpr const char* kName = "sdk-socket";
  using ListenComm = socket::ListenComm;
  using SendComm = socket::SendComm;
  using RecvComm = socket::RecvComm;
  using MemHandle = Region;
  using Request = RequestBase;
  using Connector = socket::Connector;

  static ncclResult_t create(const InitArgs& args, std::unique_ptr<SocketNet>* out) {
    auto net = std::unique_ptr<SocketNet>(new SocketNet(args.logger));
    ncclResult_t res = Config::read(net->params_, usableCores(), &net->config_);
    if (res != ncclSuccess) return res;
    if (net->config_.unpack) {
      net->driver_ = gDriver.get();
      if (net->driver_ == nullptr || !net->driver_->available()) {
        NCCLNET_WARN(net->log_,
                     "NCCLNET_SOCKET_UNPACK=1 ignored: UNPACK bounce pages need the CUDA driver, "
                     "which is %s; receive comms stay in host mode",
                     net->driver_ != nullptr ? net->driver_->whyNot().c_str()
                                             : "not available: the plugin is unloading");
        net->config_.unpack = false;
        net->driver_.reset();
      }
    }
    net->interfaces_ = findDevices(net->config_, net->log_);
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

  // What differs from NCCL's defaults, which the SDK filled in.
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    if (!validDevice("getProperties", dev)) return resultOf(Failure::kBadDevice);
    Interface& itf = interfaces_[dev];
    describeDevice(itf, props);
    // Registration holds no per-comm state and costs the same for any range.
    props->regIsGlobal = 1;
    props->maxRecvs = kMaxRecvs;
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
    return ncclSuccess;
  }

  ncclResult_t listen(const CommContext&, int dev, void* handle, std::unique_ptr<ListenComm>* out) {
    if (!validDevice("listen", dev)) return resultOf(Failure::kBadDevice);
    ListenHandle h;
    ncclResult_t res = ListenComm::open(interfaces_[dev], config_, log_, out, &h);
    if (res == ncclSuccess) encodeHandle(h, handle);
    return res;
  }

  ncclResult_t connect(const CommContext&, int dev, const void* handle,
                       std::unique_ptr<Connector>* out) {
    if (!validDevice("connect", dev)) return resultOf(Failure::kBadDevice);
    ListenHandle h;
    WireVerdict verdict = decodeHandle(handle, &h);
    if (verdict != WireVerdict::kOk) {
      NCCLNET_WARN(
          log_, "connect: %s",
          kHandleStamp.explain(verdict, handle, kHandleBytes, "a field out of range").c_str());
      return wireResult(verdict, WireSource::kHandle);
    }
    // Parked control sockets of closed send comms are let go of here too
    // (closing_sockets.hpp): a new connect comes when their receivers have
    // had time to close.
    config_.closingSockets->sweep();
    *out = std::make_unique<Connector>(h, config_, log_);
    return ncclSuccess;
  }

  ncclResult_t connectStep(Connector& connector, std::unique_ptr<SendComm>* out,
                           ncclNetDeviceHandle_v12_t**) {
    return connector.step(out);
  }

  ncclResult_t accept(ListenComm& listen, std::unique_ptr<RecvComm>* out,
                      ncclNetDeviceHandle_v12_t** devHandle) {
    std::unique_ptr<RecvComm> comm;
    ncclResult_t res = listen.accept(&comm);
    if (comm && wantsUnpack(devHandle)) {
      std::unique_ptr<unpack::Receiver> receiver;
      res = makeReceiver(&receiver);
      if (res != ncclSuccess) return res;  // the comm closes
      receiver->describe(*devHandle);
      comm->enableUnpack(std::move(receiver));
    }
    *out = std::move(comm);
    return res;
  }

  ncclResult_t regMr(DataComm<SocketNet>, void*, size_t, int type, std::unique_ptr<Region>* out) {
    if (type != NCCL_PTR_HOST) {
      NCCLNET_WARN(log_, "regMr: memory type %d is not supported (ptrSupport is HOST only)", type);
      return resultOf(Failure::kUnsupportedMemory);
    }
    *out = std::make_unique<Region>();
    return ncclSuccess;
  }
  ncclResult_t deregMr(DataComm<SocketNet>, Region&) { return ncclSuccess; }

  // The kernel needs no view of a registration: it only copies bounce pages
  // into buffers it already knows.
  ncclResult_t getDeviceMr(DataComm<SocketNet>, Region&, void** dptrMhandle) {
    *dptrMhandle = nullptr;
    return ncclSuccess;
  }

  // Sockets need no registration: a NULL mhandle is accepted (NCCL's own
  // Socket transport hands out NULL mhandles).
  ncclResult_t isend(SendComm& comm, void* data, size_t size, int tag, Region*, void*,
                     RequestBase** request) {
    void* issued = nullptr;
    ncclResult_t res = comm.isend(data, size, tag, &issued);
    *request = static_cast<RequestBase*>(issued);
    return res;
  }

  ncclResult_t irecv(RecvComm& comm, int n, void** data, size_t* sizes, int* tags, Region**, void**,
                     RequestBase** request) {
    void* issued = nullptr;
    ncclResult_t res = comm.irecv(n, data, sizes, tags, &issued);
    *request = static_cast<RequestBase*>(issued);
    return res;
  }

  ncclResult_t iflush(RecvComm&, int, void**, int*, Region**, RequestBase** request) {
    *request = nullptr;  // host memory only: nothing to flush
    return ncclSuccess;
  }

  ncclResult_t test(SendComm& comm, RequestBase& request, int* done, int* sizes) {
    return comm.test(static_cast<SendRequest*>(&request), done, sizes);
  }
  ncclResult_t test(RecvComm& comm, RequestBase& request, int* done, int* sizes) {
    return comm.test(static_cast<RecvRequest*>(&request), done, sizes);
  }

  ncclResult_t irecvConsumed(RecvComm& comm, int, RequestBase* request) {
    return comm.consumed(request);
  }

  // Destroying a comm joins its helper threads; the SDK calls this outside
  // any lock of its own.
  ncclResult_t close(std::unique_ptr<SendComm>) { return ncclSuccess; }
  ncclResult_t close(std::unique_ptr<RecvComm>) { return ncclSuccess; }
  ncclResult_t close(std::unique_ptr<ListenComm>) { return ncclSuccess; }

 private:
  explicit SocketNet(Logger log) : log_(log), params_(log) {}

  // An UNPACK receive: NCCL preallocated a handle of the version we offer.
  bool wantsUnpack(ncclNetDeviceHandle_v12_t** devHandle) const {
    return config_.unpack && devHandle != nullptr && *devHandle != nullptr &&
           (*devHandle)->netDeviceType == NCCL_NET_DEVICE_UNPACK &&
           (*devHandle)->netDeviceVersion == NCCL_NET_DEVICE_UNPACK_VERSION;
  }

  // A receiver on the process's bounce pool, made at the first UNPACK
  // accept.
  ncclResult_t makeReceiver(std::unique_ptr<unpack::Receiver>* out) {
    std::lock_guard<std::mutex> lock(bounceMutex_);
    std::string why;
    if (!bounce_) {
      bounce_ = unpack::BouncePool::create(unpack::mappedRegions(driver_), config_.unpackArenaBytes,
                                           config_.unpackComms, &why);
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

  bool validDevice(const char* fn, int dev) {
    if (dev >= 0 && dev < static_cast<int>(interfaces_.size())) return true;
    NCCLNET_WARN(log_, "%s: device %d does not exist (%zu devices)", fn, dev, interfaces_.size());
    return false;
  }

  Logger log_;
  ParamTable params_;
  Config config_;
  std::vector<Interface> interfaces_;           // fixed after create()
  std::shared_ptr<const cuda::Driver> driver_;  // UNPACK only; the bounce pool keeps it too
  std::mutex bounceMutex_;
  std::shared_ptr<unpack::BouncePool> bounce_;  // UNPACK bounce pages, from the first accept
};

}  // namespace ncclnet::socket

NCCLNET_EXPORT_PLUGIN(ncclnet::socket::SocketNet)
