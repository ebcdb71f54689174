// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the reference host RMA / GIN-proxy plugin over TCP, in
// the same library as the net table (NCCL 2.28 looks for ncclGinPlugin_v11
// only there: plugin/net.cc). Host memory, and CUDA memory where this
// process has a CUDA driver and device (device_link.hpp: through host
// staging, no GPUDirect).
#include <memory>

#include "../config.hpp"
#include "coll_comm.hpp"
#include "mesh.hpp"
#include "ncclnet/rma.hpp"
#include "wire.hpp"

namespace ncclnet::socket::rma {

namespace {

// NCCL sizes its proxy queue per (context, peer) as 32 * maxRecvs and masks
// indices with it, unchecked, so this must be a power of two
// (gin_host_proxy.cc ncclGinProxyCreateContext; rma_proxy.cc uses the same
// credit). 8: 256 requests in flight per (context, peer).
constexpr int kMaxRecvs = 8;
static_assert((kMaxRecvs & (kMaxRecvs - 1)) == 0, "maxRecvs must be a power of two");
// closeColl gives the frames still queued (and its goodbye) this long.
constexpr int kCloseTimeoutMs = 1000;
// A frame carries the context in 16 bits.
constexpr int kMaxContexts = 1 << 16;

}  // namespace

class SocketRma {
 public:
  static constexpr const char* kName = "sdk-socket";

  static ncclResult_t create(const InitArgs& args, std::unique_ptr<SocketRma>* out) {
    auto rma = std::unique_ptr<SocketRma>(new SocketRma(args.logger));
    ncclResult_t res = Config::read(rma->params_, usableCores(), &rma->config_);
    if (res != ncclSuccess) return res;
    rma->interfaces_ = findDevices(rma->config_, rma->log_);
    if (rma->interfaces_.empty()) return ncclSystemError;  // NCCL then goes without GIN
    *out = std::move(rma);
    return ncclSuccess;
  }

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
    std::string whyNot;
    props->ptrSupport = NCCL_PTR_HOST | (DeviceLink::available(&whyNot) ? NCCL_PTR_CUDA : 0);
    props->speed = itf.speedMbps;
    props->maxRecvs = kMaxRecvs;
    return ncclSuccess;
  }

  ncclResult_t listen(const CommContext&, int dev, void* handle, void** listenComm) {
    if (!validDevice("listen", dev)) return ncclInvalidArgument;
    std::unique_ptr<Listener> listener;
    Handle h;
    ncclResult_t res = Listener::open(interfaces_[dev], log_, &listener, &h);
    if (res != ncclSuccess) return res;
    encodeHandle(h, handle);
    *listenComm = listener.release();
    return ncclSuccess;
  }

  ncclResult_t connect(const CommContext&, void* const* handles, int nranks, int rank,
                       void* listenComm, void** collComm) {
    if (listenComm == nullptr) {
      NCCLNET_WARN(log_, "connect: listenComm is NULL");
      return ncclInvalidArgument;
    }
    std::vector<Handle> decoded(nranks);
    for (int r = 0; r < nranks; r++) {
      WireVerdict verdict =
          handles[r] == nullptr ? WireVerdict::kTruncated : decodeHandle(handles[r], &decoded[r]);
      if (verdict != WireVerdict::kOk) {
        NCCLNET_WARN(
            log_, "connect: the handle of rank %d: %s", r,
            handles[r] == nullptr
                ? "NULL"
                : kHandleStamp.explain(verdict, handles[r], kHandleBytes, "bad address").c_str());
        return wireResult(verdict, WireSource::kHandle);
      }
    }
    std::vector<Fd> peers;
    ncclResult_t res =
        buildMesh(*static_cast<Listener*>(listenComm), decoded, rank, config_, log_, &peers);
    if (res != ncclSuccess) return res;
    auto comm = std::make_unique<CollComm>(rank, nranks, kCloseTimeoutMs, log_);
    // A peer may put to a region before this rank has registered it: as
    // long as a peer may take to show up at all.
    res = comm->start(std::move(peers), config_.connectTimeoutMs);
    if (res != ncclSuccess) return res;
    NCCLNET_INFO(log_, NCCL_INIT | NCCL_NET, "RMA mesh of %d ranks up (rank %d)", nranks, rank);
    *collComm = comm.release();
    return ncclSuccess;
  }

  ncclResult_t createContext(void* collComm, const RmaConfig& config, void** rmaCtx) {
    CollComm* comm = commOf("createContext", collComm);
    if (comm == nullptr) return ncclInvalidArgument;
    if (config.nContexts > kMaxContexts) {
      NCCLNET_WARN(log_, "createContext: %d contexts asked, at most %d", config.nContexts,
                   kMaxContexts);
      return ncclInvalidArgument;
    }
    // rankStride > 1 only narrows whom NCCL targets: the mesh has them all.
    *rmaCtx = new Contexts{comm, config.nContexts};
    return ncclSuccess;
  }
  ncclResult_t destroyContext(void* rmaCtx) {
    delete static_cast<Contexts*>(rmaCtx);
    return ncclSuccess;
  }

  ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t,
                        void** mhandle) {
    CollComm* comm = commOf("regMrSym", collComm);
    if (comm == nullptr) return ncclInvalidArgument;
    if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) {
      NCCLNET_WARN(log_, "regMrSym: memory type %d is neither NCCL_PTR_HOST nor NCCL_PTR_CUDA",
                   type);
      return ncclInternalError;
    }
    if (data == nullptr && size > 0) {
      NCCLNET_WARN(log_, "regMrSym: NULL data of %zu bytes", size);
      return ncclInvalidArgument;
    }
    std::string why;
    if (type == NCCL_PTR_CUDA && !comm->deviceLink().prepare(data, &why)) {
      NCCLNET_WARN(log_, "regMrSym: cannot register %zu bytes of CUDA memory at %p: %s", size, data,
                   why.c_str());
      return ncclInternalError;
    }
    *mhandle = comm->regions().add(data, size, type);
    return ncclSuccess;
  }
  ncclResult_t deregMrSym(void* collComm, void* mhandle) {
    CollComm* comm = commOf("deregMrSym", collComm);
    if (comm == nullptr) return ncclInvalidArgument;
    if (!comm->regions().remove(mhandle)) {
      NCCLNET_WARN(log_, "deregMrSym: %p is not a registration of this comm", mhandle);
      return ncclInvalidArgument;
    }
    return ncclSuccess;
  }

  ncclResult_t closeColl(void* collComm) {
    delete static_cast<CollComm*>(collComm);  // bounded: kCloseTimeoutMs
    return ncclSuccess;
  }
  ncclResult_t closeListen(void* listenComm) {
    delete static_cast<Listener*>(listenComm);
    return ncclSuccess;
  }

  ncclResult_t iput(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                    uint64_t dstOff, void* dstMhandle, uint32_t rank, void** request) {
    CollComm* comm = contextOf("iput", rmaCtx, context);
    if (comm == nullptr) return ncclInvalidArgument;
    return comm->put(context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, nullptr, request);
  }
  ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size,
                          uint64_t dstOff, void* dstMhandle, uint32_t rank, const RmaSignal& signal,
                          void** request) {
    CollComm* comm = contextOf("iputSignal", rmaCtx, context);
    if (comm == nullptr) return ncclInvalidArgument;
    // Weak signals get the strong order too: one ordered stream per peer.
    return comm->put(context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, &signal, request);
  }
  ncclResult_t iget(void* rmaCtx, int context, uint64_t remoteOff, void* remoteMhandle, size_t size,
                    uint64_t localOff, void* localMhandle, uint32_t rank, void** request) {
    CollComm* comm = contextOf("iget", rmaCtx, context);
    if (comm == nullptr) return ncclInvalidArgument;
    return comm->get(context, remoteOff, remoteMhandle, size, localOff, localMhandle, rank,
                     request);
  }
  ncclResult_t iflush(void* rmaCtx, int context, void*, uint32_t rank, void** request) {
    CollComm* comm = contextOf("iflush", rmaCtx, context);
    if (comm == nullptr) return ncclInvalidArgument;
    return comm->flush(rank, request);
  }
  ncclResult_t test(void* collComm, void* request, int* done) {
    CollComm* comm = commOf("test", collComm);
    if (comm == nullptr) return ncclInvalidArgument;
    return comm->test(request, done);
  }
  // The engine thread moves everything: NCCL's progress calls cost nothing.
  ncclResult_t progress(void*) { return ncclSuccess; }
  ncclResult_t queryLastError(void* rmaCtx, bool* hasError) {
    auto* contexts = static_cast<Contexts*>(rmaCtx);
    if (contexts == nullptr) {
      NCCLNET_WARN(log_, "queryLastError: rmaCtx is NULL");
      return ncclInvalidArgument;
    }
    *hasError = contexts->comm->failed();
    return ncclSuccess;
  }

 private:
  explicit SocketRma(Logger log) : log_(log), params_(log) {}

  bool validDevice(const char* fn, int dev) {
    if (dev >= 0 && dev < static_cast<int>(interfaces_.size())) return true;
    NCCLNET_WARN(log_, "%s: device %d does not exist (%zu devices)", fn, dev, interfaces_.size());
    return false;
  }
  CollComm* commOf(const char* fn, void* collComm) {
    if (collComm == nullptr) NCCLNET_WARN(log_, "%s: collComm is NULL", fn);
    return static_cast<CollComm*>(collComm);
  }
  CollComm* contextOf(const char* fn, void* rmaCtx, int context) {
    auto* contexts = static_cast<Contexts*>(rmaCtx);
    if (contexts == nullptr) {
      NCCLNET_WARN(log_, "%s: rmaCtx is NULL", fn);
      return nullptr;
    }
    if (context < 0 || context >= contexts->count) {
      NCCLNET_WARN(log_, "%s: context %d is outside the %d createContext made", fn, context,
                   contexts->count);
      return nullptr;
    }
    return contexts->comm;
  }

  Logger log_;
  ParamTable params_;
  Config config_;
  std::vector<Interface> interfaces_;  // fixed after create(); the net table's order
};

}  // namespace ncclnet::socket::rma

NCCLNET_EXPORT_RMA_PLUGIN(ncclnet::socket::rma::SocketRma)
