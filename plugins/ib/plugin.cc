// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the contract mapped onto verbs, on the SDK's object model. The
// SDK keeps every handle NCCL holds, refuses unknown, stale and
// wrong-kind ones (and mhandles of another comm) before a call gets here,
// hands test() its comm, and finds a connect in progress again; what is
// left is which verbs objects each call makes, uses or releases.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "comm.hpp"
#include "config.hpp"
#include "connect.hpp"
#include "devices.hpp"
#include "gpu_memory.hpp"
#include "ibv_api.hpp"
#include "ncclnet/plugin.hpp"
#include "ncclnet/result_policy.hpp"

namespace ncclnet::ib {

class IbNet {
 public:
  static constexpr const char* kName = "sdk-ib";
  using ListenComm = ncclnet::ib::ListenComm;
  using SendComm = ncclnet::ib::SendComm;
  using RecvComm = ncclnet::ib::RecvComm;
  using MemHandle = MrHandle;
  using Request = ncclnet::ib::Request;
  using Connector = ConnectState;

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

  // The fields where a port differs from NCCL's defaults.
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    const Port* port = portAt("getProperties", dev);
    if (port == nullptr) return resultOf(Failure::kBadDevice);
    props->name = const_cast<char*>(port->name.c_str());
    props->pciPath = port->pciPath.empty() ? nullptr : const_cast<char*>(port->pciPath.c_str());
    props->guid = port->guid;
    props->ptrSupport = port->hca->ptrSupport;  // gpu_memory.hpp: peer memory, DMA-BUF
    props->regIsGlobal = 1;                     // the MR cache makes re-registration free
    props->speed = port->speedMbps;
    props->port = port->port;
    props->maxComms = port->hca->attr.max_qp;
    props->maxRecvs = kMaxRecvs;
    props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxCollBytes = NCCL_MAX_COLLNET_SIZE;
    return ncclSuccess;
  }

  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
                      std::unique_ptr<ListenComm>* out) {
    if (portAt("listen", dev) == nullptr) return resultOf(Failure::kBadDevice);
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
    kHandleStamp.write(&h, l->secret);
    std::memcpy(&h.addr, &bound,
                bound.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    std::memcpy(handle, &h, sizeof(h));
    *out = std::move(l);
    return ncclSuccess;
  }

  // Judges the handle, makes the QPs and starts the TCP connection.
  ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, const void* handle,
                       std::unique_ptr<ConnectState>* out) {
    const Port* port = portAt("connect", dev);
    if (port == nullptr) return resultOf(Failure::kBadDevice);
    WireVerdict verdict = kHandleStamp.check(handle, sizeof(Handle));
    if (verdict != WireVerdict::kOk) {
      NCCLNET_WARN(log_, "connect: %s",
                   kHandleStamp.explain(verdict, handle, sizeof(Handle)).c_str());
      return wireResult(verdict, WireSource::kHandle);
    }
    Handle h;
    std::memcpy(&h, handle, sizeof(h));
    auto st = std::make_unique<ConnectState>();
    st->sl = serviceLevel(config_, ctx.trafficClass);
    st->tc = trafficClassFor(config_, ctx.trafficClass);
    st->deadline = Clock::now() + std::chrono::milliseconds(config_.connectTimeoutMs);
    st->comm = std::make_unique<SendComm>(api_, *port, log_);
    sockaddr_storage peer{};
    std::memcpy(&peer, &h.addr, sizeof(h.addr));
    st->comm->peer = addressString(peer);
    std::string why;
    if (!st->comm->setup(config_, &why) || !oobConnectStart(peer, &st->fd, &why)) {
      NCCLNET_WARN(log_, "connect to %s on %s: %s", st->comm->peer.c_str(), port->name.c_str(),
                   why.c_str());
      return ncclSystemError;
    }
    st->comm->describe(config_, &st->local);
    st->secret = h.secret;
    st->local.secret = h.secret;
    *out = std::move(st);
    return ncclSuccess;
  }

  ncclResult_t connectStep(ConnectState& st, std::unique_ptr<SendComm>* out,
                           ncclNetDeviceHandle_v12_t**) {
    std::string why;
    Progress p = stepConnect(config_, st, &why);
    if (p == Progress::kPending) return ncclSuccess;
    if (p == Progress::kFailed) {
      NCCLNET_WARN(log_, "connect to %s: %s", st.comm->peer.c_str(), why.c_str());
      return ncclRemoteError;
    }
    NCCLNET_INFO(log_, NCCL_INIT | NCCL_NET, "connected to %s on %s, %d QP(s)",
                 st.comm->peer.c_str(), st.comm->ep.port().name.c_str(), st.comm->ep.nqps());
    oobKeepAlive(st.fd);
    st.comm->oob = std::move(st.fd);
    *out = std::move(st.comm);
    return ncclSuccess;
  }

  // Returns success with no comm until a peer that holds the handle has
  // finished its handshake; strays are dropped along the way.
  ncclResult_t accept(ListenComm& l, std::unique_ptr<RecvComm>* out, ncclNetDeviceHandle_v12_t**) {
    const Port& port = ports_[l.dev];
    AcceptContext ctx{config_, api_, port, log_, strays_};
    std::unique_ptr<RecvComm> comm;
    std::string why;
    Progress p = stepAccept(ctx, l, &comm, &why);
    if (p == Progress::kPending) return ncclSuccess;
    if (p == Progress::kFailed) {
      NCCLNET_WARN(log_, "accept on %s: %s", port.name.c_str(), why.c_str());
      return ncclRemoteError;
    }
    oobKeepAlive(comm->oob);
    *out = std::move(comm);
    return ncclSuccess;
  }

  ncclResult_t regMr(ncclnet::DataComm<IbNet> comm, void* data, size_t size, int type,
                     std::unique_ptr<MrHandle>* out) {
    return registerFor("regMr", comm, data, size, type, nullptr, out);
  }

  // The fd is NCCL's: used for this call only, never kept (NCCL closes it
  // as soon as the call returns).
  ncclResult_t regMrDmaBuf(ncclnet::DataComm<IbNet> comm, void* data, size_t size, int type,
                           uint64_t offset, int fd, std::unique_ptr<MrHandle>* out) {
    if (fd < 0) return bad("regMrDmaBuf", "the dma-buf fd is negative");
    DmaBufRange range{offset, fd};
    return registerFor("regMrDmaBuf", comm, data, size, type, &range, out);
  }

  // ~MrHandle releases the registration.
  ncclResult_t deregMr(ncclnet::DataComm<IbNet>, MrHandle&) { return ncclSuccess; }

  ncclResult_t isend(SendComm& comm, void* data, size_t size, int tag, MrHandle* mh, void*,
                     Request** request) {
    if (!inside(1, &data, &size, &mh))
      return bad("isend", "buffer not inside the registration mhandle names");
    return comm.isend(data, size, tag, mh, request);
  }

  ncclResult_t irecv(RecvComm& comm, int n, void** data, size_t* sizes, int* tags, MrHandle** mhs,
                     void**, Request** request) {
    if (n > kMaxRecvs) return bad("irecv", "n outside 1..maxRecvs (8)");
    if (!inside(n, data, sizes, mhs))
      return bad("irecv", "buffer not inside the registration mhandle names");
    return comm.irecv(n, data, sizes, tags, mhs, request);
  }

  // Every mhandle here was registered on this comm (the SDK checked), so
  // on this comm's HCA.
  ncclResult_t iflush(RecvComm& comm, int n, void** data, int* sizes, MrHandle** mhs,
                      Request** request) {
    if (n > kMaxRecvs) return bad("iflush", "n outside 1..maxRecvs (8)");
    if (!inside(n, data, sizes, mhs))
      return bad("iflush", "buffer not inside a registration of this comm's device");
    return comm.iflush(n, data, sizes, mhs, request);
  }

  ncclResult_t test(SendComm& comm, Request& request, int* done, int* sizes) {
    return comm.test(request, done, sizes);
  }
  ncclResult_t test(RecvComm& comm, Request& request, int* done, int* sizes) {
    return comm.test(request, done, sizes);
  }

  ncclResult_t close(std::unique_ptr<SendComm>) { return ncclSuccess; }
  ncclResult_t close(std::unique_ptr<RecvComm>) { return ncclSuccess; }
  ncclResult_t close(std::unique_ptr<ListenComm>) { return ncclSuccess; }

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

  const Port* portAt(const char* fn, int dev) const {
    if (dev < 0 || dev >= static_cast<int>(ports_.size())) {
      NCCLNET_WARN(log_, "%s: device %d does not exist (%zu devices)", fn, dev, ports_.size());
      return nullptr;
    }
    return &ports_[dev];
  }

  // regMr and regMrDmaBuf: the type the device supports, then the cache.
  ncclResult_t registerFor(const char* fn, ncclnet::DataComm<IbNet> comm, void* data, size_t size,
                           int type, const DmaBufRange* dmabuf, std::unique_ptr<MrHandle>* out) {
    const CommBase& c = comm.send != nullptr ? static_cast<const CommBase&>(*comm.send)
                                             : static_cast<const CommBase&>(*comm.recv);
    Hca& hca = *c.ep.port().hca;
    int needed = dmabuf != nullptr ? NCCL_PTR_DMABUF : type;
    if ((type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) || !(hca.ptrSupport & needed)) {
      NCCLNET_WARN(log_, "%s: type %d%s on %s, whose ptrSupport is 0x%x", fn, type,
                   dmabuf != nullptr ? " (DMA-BUF)" : "", hca.name.c_str(), hca.ptrSupport);
      return resultOf(Failure::kUnsupportedMemory);
    }
    std::string why;
    ibv_mr* mr = registerMemory(hca, data, size, type, dmabuf, &why);
    if (mr == nullptr) {
      NCCLNET_WARN(log_, "%s(%p, %zu, %s) on %s: %s", fn, data, size,
                   type == NCCL_PTR_CUDA ? "CUDA" : "HOST", hca.name.c_str(), why.c_str());
      return ncclSystemError;
    }
    *out = std::make_unique<MrHandle>(hca, mr, type == NCCL_PTR_CUDA);
    return ncclSuccess;
  }

  // Whether each buffer that carries bytes lies inside its registration.
  template <class Size>
  static bool inside(int n, void* const* data, const Size* sizes, MrHandle* const* mhs) {
    for (int i = 0; i < n; i++) {
      if (sizes[i] > 0 && (mhs[i] == nullptr || !mhs[i]->covers(data[i], sizes[i]))) return false;
    }
    return true;
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
  // Declaration order is teardown order reversed: the ports (HCA
  // contexts) close before the library. The SDK closes every comm and
  // registration NCCL left open before it destroys this object.
  IbvApi api_;
  std::vector<Port> ports_;
  ncclnet::WarnLimit strays_;  // lines about connections that are not peers
};

}  // namespace ncclnet::ib

NCCLNET_EXPORT_PLUGIN(ncclnet::ib::IbNet)
