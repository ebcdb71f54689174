// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the plugin class NCCL drives, exported through every ABI version.
// The SDK's object model keeps the handles NCCL holds; every object here
// belongs to one Endpoint of its device and is touched under that
// endpoint's mutex. A device has NCCLNET_OFI_ENDPOINTS endpoints; listens
// take them in turn and a connect uses the endpoint of the listener's index,
// so NCCL's channels (a comm each) do not all share one provider connection
// and one completion queue.
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm.hpp"
#include "config.hpp"
#include "discovery.hpp"
#include "endpoint.hpp"
#include "ncclnet/plugin.hpp"
#include "ncclnet/result_policy.hpp"

namespace ncclnet::ofi {
namespace {

// A registration: an entry of the endpoint's MR cache, released once.
class Registration {
 public:
  Registration(Endpoint* endpoint, void* entry) : endpoint_(endpoint), entry_(entry) {}
  ~Registration() { release(); }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
  void* entry() const { return entry_; }
  ncclResult_t release() {
    if (entry_ == nullptr) return ncclSuccess;
    std::lock_guard<std::mutex> lock(endpoint_->mutex());
    ncclResult_t res = endpoint_->deregMr(entry_);
    entry_ = nullptr;
    return res;
  }

 private:
  Endpoint* endpoint_;
  void* entry_;
};

// A connect in progress: the send comm, until its connect message is out.
// One that never finishes is left to its endpoint, which frees it when the
// provider gives its operations back.
class Connecting {
 public:
  explicit Connecting(std::unique_ptr<SendComm> comm) : comm_(std::move(comm)) {}
  ~Connecting() {
    if (!comm_) return;
    Endpoint& ep = comm_->endpoint();
    std::lock_guard<std::mutex> lock(ep.mutex());
    ep.retire(std::move(comm_));
  }
  Connecting(const Connecting&) = delete;
  Connecting& operator=(const Connecting&) = delete;
  SendComm& comm() { return *comm_; }
  std::unique_ptr<SendComm> take() { return std::move(comm_); }

 private:
  std::unique_ptr<SendComm> comm_;
};

}  // namespace

class OfiNet {
 public:
  static constexpr const char* kName = "sdk-ofi";
  using ListenComm = ofi::ListenComm;
  using SendComm = ofi::SendComm;
  using RecvComm = ofi::RecvComm;
  using MemHandle = Registration;
  using Request = ofi::Request;
  using Connector = Connecting;

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

  explicit OfiNet(Logger log) : log_(log), params_(log) {}

  const ParamTable& params() const { return params_; }

  ncclResult_t devices(int* ndev) {
    *ndev = static_cast<int>(devices_.size());
    return ncclSuccess;
  }

  // What differs from NCCL's defaults, which the SDK filled in.
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
    // With one endpoint, registrations belong to the device's domain, not
    // to a comm, and re-registering covered pages is a cache hit. With
    // more, each endpoint has its own domain, and a registration serves
    // only the comms of the endpoint it was made on.
    props->regIsGlobal = config_.endpoints == 1 ? 1 : 0;
    props->speed = nic.speedMbps;
    props->port = 1;
    props->maxComms = static_cast<int>(std::min<uint64_t>(nic.tags.connIdCount(), 65536));
    props->maxRecvs = kMaxRecvs;
    // test() reports sizes as int: no single transfer may exceed INT_MAX.
    size_t limit = std::min<size_t>(nic.info->ep_attr->max_msg_size, NCCL_MAX_NET_SIZE);
    props->maxP2pBytes = limit;
    props->maxCollBytes = limit;
    return ncclSuccess;
  }

  // ---- connection setup ------------------------------------------------------

  ncclResult_t listen(const CommContext&, int dev, void* handle, std::unique_ptr<ListenComm>* out) {
    Endpoint* ep = nullptr;
    unsigned index = 0;
    ncclResult_t res = nextEndpoint(dev, &ep, &index);
    if (res != ncclSuccess) return res;
    Handle h{};
    std::lock_guard<std::mutex> lock(ep->mutex());
    uint64_t id = ep->nextListenId();
    if (id >= ep->tags().listenIdLimit()) return bad("listen", "listen ids exhausted");
    auto listen = std::make_unique<ListenComm>(ep, id);
    res = listen->post();
    if (res != ncclSuccess) return res;
    kHandleStamp.write(&h);
    h.addressLength = static_cast<uint16_t>(ep->address().size());
    h.endpoint = static_cast<uint16_t>(index);
    h.listenId = id;
    std::memcpy(h.address, ep->address().data(), ep->address().size());
    std::memcpy(handle, &h, sizeof(h));
    *out = std::move(listen);
    return ncclSuccess;
  }

  ncclResult_t connect(const CommContext&, int dev, const void* handle,
                       std::unique_ptr<Connecting>* out) {
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    WireVerdict verdict = kHandleStamp.check(handle, sizeof(h));
    if (verdict == WireVerdict::kOk && (h.addressLength == 0 || h.addressLength > kMaxAddress)) {
      verdict = WireVerdict::kMalformed;
    }
    if (verdict != WireVerdict::kOk) {
      std::string detail = "an address of " + std::to_string(h.addressLength) + " bytes";
      NCCLNET_WARN(log_, "connect: %s",
                   kHandleStamp.explain(verdict, handle, sizeof(h), detail.c_str()).c_str());
      return wireResult(verdict, WireSource::kHandle);
    }
    // Endpoint i connects only to the peers' endpoints i, so a pair of
    // processes holds one provider connection per endpoint, however many
    // comms NCCL opens and closes.
    Endpoint* ep = nullptr;
    ncclResult_t res = endpointAt(dev, h.endpoint, &ep);
    if (res != ncclSuccess) return res;
    std::lock_guard<std::mutex> lock(ep->mutex());
    Remote* peer = nullptr;
    res = ep->resolve(h.address, h.addressLength, &peer);
    if (res != ncclSuccess) return res;
    uint32_t connId = 0;
    if (!ep->allocConnId(&connId)) return bad("connect", "connection ids exhausted");
    *out = std::make_unique<Connecting>(std::make_unique<SendComm>(ep, peer, connId, h.listenId));
    return ncclSuccess;
  }

  ncclResult_t connectStep(Connecting& connecting, std::unique_ptr<SendComm>* out,
                           ncclNetDeviceHandle_v12_t**) {
    SendComm& comm = connecting.comm();
    std::lock_guard<std::mutex> lock(comm.endpoint().mutex());
    ncclResult_t failure = comm.postConnect();
    if (failure == ncclSuccess) failure = comm.endpoint().progress();
    if (failure == ncclSuccess) comm.connectFailed(&failure);
    if (failure != ncclSuccess) return failure;  // the connector retires the comm
    if (comm.connected()) *out = connecting.take();
    return ncclSuccess;  // with no comm: call again
  }

  ncclResult_t accept(ListenComm& listen, std::unique_ptr<RecvComm>* out,
                      ncclNetDeviceHandle_v12_t**) {
    Endpoint& ep = listen.endpoint();
    std::lock_guard<std::mutex> lock(ep.mutex());
    ncclResult_t res = listen.post();
    if (res == ncclSuccess) res = ep.progress();
    if (res != ncclSuccess) return res;
    ncclResult_t error = ncclSuccess;
    const ConnectMessage* message = listen.message(&error);
    if (error != ncclSuccess) return error;
    if (message == nullptr) return ncclSuccess;  // nobody yet: call again
    Remote* peer = nullptr;
    res = ep.resolve(message->address, message->addressLength, &peer);
    uint32_t connId = message->connId;
    listen.consume();
    // Several connects may target one handle; the receive for the next one
    // is posted by the next accept. Posted now, it would only be left for
    // closeListen to cancel in the usual one-accept-per-listen case.
    if (res != ncclSuccess) return res;  // that connector cannot be answered
    *out = std::make_unique<RecvComm>(&ep, peer, connId);
    return ncclSuccess;
  }

  // ---- memory registration --------------------------------------------------

  ncclResult_t regMr(DataComm<OfiNet> comm, void* data, size_t size, int type,
                     std::unique_ptr<Registration>* out) {
    Endpoint& ep = endpointOf(comm);
    void* entry = nullptr;
    std::lock_guard<std::mutex> lock(ep.mutex());
    ncclResult_t res = ep.regMr(data, size, type, &entry);
    if (res == ncclSuccess) *out = std::make_unique<Registration>(&ep, entry);
    return res;
  }

  // Always exported, so one binary serves every libfabric it may meet; on a
  // NIC without DMA-BUF (ptrSupport says so) it fails with one log line
  // naming the check that failed. The fd is used during the call only.
  ncclResult_t regMrDmaBuf(DataComm<OfiNet> comm, void* data, size_t size, int type,
                           uint64_t offset, int fd, std::unique_ptr<Registration>* out) {
    Endpoint& ep = endpointOf(comm);
    if (!ep.nic().dmabuf) {
      NCCLNET_WARN(log_,
                   "regMrDmaBuf on %s: DMA-BUF is not available: %s; ptrSupport does not "
                   "advertise NCCL_PTR_DMABUF",
                   ep.nic().name.c_str(), ep.nic().dmabufWhyNot.c_str());
      return resultOf(Failure::kUnsupportedMemory);
    }
    // A host buffer needs no dma-buf (NCCL passes CUDA memory only).
    if (type == NCCL_PTR_HOST) return regMr(comm, data, size, type, out);
    if (type != NCCL_PTR_CUDA) {
      NCCLNET_WARN(log_, "regMrDmaBuf: memory type %d is neither NCCL_PTR_CUDA nor HOST", type);
      return resultOf(Failure::kUnsupportedMemory);
    }
    if (fd < 0) return bad("regMrDmaBuf", "the dma-buf fd is negative");
    void* entry = nullptr;
    std::lock_guard<std::mutex> lock(ep.mutex());
    ncclResult_t res = ep.regMrDmaBuf(data, size, offset, fd, &entry);
    if (res == ncclSuccess) *out = std::make_unique<Registration>(&ep, entry);
    return res;
  }

  ncclResult_t deregMr(DataComm<OfiNet>, Registration& registration) {
    return registration.release();
  }

  // ---- data path ------------------------------------------------------------

  ncclResult_t isend(SendComm& comm, void* data, size_t size, int tag, Registration* mh, void*,
                     Request** request) {
    std::lock_guard<std::mutex> lock(comm.endpoint().mutex());
    void* issued = nullptr;
    ncclResult_t res = comm.isend(data, size, tag, mh ? mh->entry() : nullptr, &issued);
    *request = static_cast<Request*>(issued);
    return res;
  }

  ncclResult_t irecv(RecvComm& comm, int n, void** data, size_t* sizes, int* tags,
                     Registration** mhs, void**, Request** request) {
    void* entries[kMaxGroupedRecvs];
    for (int i = 0; i < n; i++) entries[i] = mhs[i] ? mhs[i]->entry() : nullptr;
    std::lock_guard<std::mutex> lock(comm.endpoint().mutex());
    void* issued = nullptr;
    ncclResult_t res = comm.irecv(n, data, sizes, tags, entries, &issued);
    *request = static_cast<Request*>(issued);
    return res;
  }

  ncclResult_t iflush(RecvComm& comm, int n, void** data, int* sizes, Registration** mhs,
                      Request** request) {
    if (n > kMaxRecvs) return bad("iflush", "n outside 1..maxRecvs");
    void* entries[kMaxGroupedRecvs];
    for (int i = 0; i < n; i++) entries[i] = mhs[i] ? mhs[i]->entry() : nullptr;
    std::lock_guard<std::mutex> lock(comm.endpoint().mutex());
    void* issued = nullptr;
    ncclResult_t res = comm.iflush(n, data, sizes, entries, &issued);
    *request = static_cast<Request*>(issued);
    return res;
  }

  ncclResult_t test(SendComm& comm, Request& request, int* done, int* sizes) {
    return finish(comm, request, done, sizes);
  }
  ncclResult_t test(RecvComm& comm, Request& request, int* done, int* sizes) {
    return finish(comm, request, done, sizes);
  }

  // ---- teardown -------------------------------------------------------------

  ncclResult_t close(std::unique_ptr<SendComm> comm) { return drain("closeSend", std::move(comm)); }
  ncclResult_t close(std::unique_ptr<RecvComm> comm) { return drain("closeRecv", std::move(comm)); }
  ncclResult_t close(std::unique_ptr<ListenComm> comm) {
    return drain("closeListen", std::move(comm));
  }

 private:
  // A device's endpoints and whose turn it is: under openMutex_.
  struct Device {
    Nic nic;
    std::vector<std::unique_ptr<Endpoint>> endpoints;
    unsigned nextEndpoint = 0;  // the next listen's
  };

  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInvalidArgument;
  }

  // Opens every endpoint of `dev` on first use (so the descriptors a
  // device holds do not grow with later comms).
  ncclResult_t openEndpoints(int dev, Device** out) {
    if (dev < 0 || dev >= static_cast<int>(devices_.size())) {
      NCCLNET_WARN(log_, "device %d does not exist (%zu devices)", dev, devices_.size());
      return resultOf(Failure::kBadDevice);
    }
    Device& device = *devices_[dev];
    while (device.endpoints.size() < static_cast<size_t>(config_.endpoints)) {
      std::unique_ptr<Endpoint> endpoint;
      ncclResult_t res = Endpoint::open(device.nic, config_, log_, &endpoint);
      if (res != ncclSuccess) return res;
      device.endpoints.push_back(std::move(endpoint));
    }
    *out = &device;
    return ncclSuccess;
  }

  // A listen's endpoint: the device's next in turn.
  ncclResult_t nextEndpoint(int dev, Endpoint** out, unsigned* index) {
    Device* device = nullptr;
    std::lock_guard<std::mutex> lock(openMutex_);
    ncclResult_t res = openEndpoints(dev, &device);
    if (res != ncclSuccess) return res;
    *index = device->nextEndpoint++ % device->endpoints.size();
    *out = device->endpoints[*index].get();
    return ncclSuccess;
  }

  // A connect's endpoint: the one of the listener's index (modulo this
  // process's count, should the peers' settings differ).
  ncclResult_t endpointAt(int dev, unsigned index, Endpoint** out) {
    Device* device = nullptr;
    std::lock_guard<std::mutex> lock(openMutex_);
    ncclResult_t res = openEndpoints(dev, &device);
    if (res != ncclSuccess) return res;
    *out = device->endpoints[index % device->endpoints.size()].get();
    return ncclSuccess;
  }

  static Endpoint& endpointOf(DataComm<OfiNet> comm) {
    return comm.send != nullptr ? comm.send->endpoint() : comm.recv->endpoint();
  }

  ncclResult_t finish(Comm& comm, Request& request, int* done, int* sizes) {
    std::unique_lock<std::mutex> lock(comm.endpoint().mutex(), std::defer_lock);
    // With a progress thread, the endpoint's lock is mostly held while the
    // provider copies: NCCL's proxy thread tests another channel meanwhile
    // rather than wait (not done yet is always a true answer), and waits
    // for the lock only every 16th time, so it cannot be starved.
    if (!config_.progressThread) {
      lock.lock();
    } else if (!lock.try_lock()) {
      if (comm.endpoint().missedLock() % 16 != 0) {
        *done = 0;
        return ncclSuccess;
      }
      lock.lock();
    }
    ncclResult_t res = testRequest(&comm, &request, done, sizes);
    if (*done) releaseRequest(&comm, &request);
    return res;
  }

  // Operations still in flight (an abort): take back what can be taken
  // back, give the rest a bounded time, then leave the object to the
  // endpoint, which frees it when its last completion arrives. Nothing more
  // is worth waiting for once the peer is gone.
  template <class C>
  ncclResult_t drain(const char* fn, std::unique_ptr<C> comm) {
    Endpoint& ep = comm->endpoint();
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
  std::mutex openMutex_;
  std::vector<std::unique_ptr<Device>> devices_;  // outlive every comm (the SDK closes them first)
};

}  // namespace ncclnet::ofi

NCCLNET_EXPORT_PLUGIN(ncclnet::ofi::OfiNet)
