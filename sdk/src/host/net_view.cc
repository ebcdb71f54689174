// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): one adapter template for every ABI version. Each
// `if constexpr` below is one change in the ABI's history (docs/abi.md).
#include "ncclnet/host/net_view.hpp"

#include <climits>
#include <mutex>
#include <unordered_map>

#include "ncclnet/detail/properties.hpp"

namespace ncclnet::host {

const char* optionalName(Optional op) {
  switch (op) {
    case Optional::RegMrDmaBuf: return "regMrDmaBuf";
    case Optional::GetDeviceMr: return "getDeviceMr";
    case Optional::IrecvConsumed: return "irecvConsumed";
    case Optional::MakeVDevice: return "makeVDevice";
    case Optional::SetNetAttr: return "setNetAttr";
  }
  return "?";
}

namespace {

template <int V> struct Abi;
template <> struct Abi<6> { using Net = ncclNet_v6_t; using Props = ncclNetProperties_v6_t; };
template <> struct Abi<7> { using Net = ncclNet_v7_t; using Props = ncclNetProperties_v7_t; };
template <> struct Abi<8> { using Net = ncclNet_v8_t; using Props = ncclNetProperties_v8_t; };
template <> struct Abi<9> {
  using Net = ncclNet_v9_t; using Props = ncclNetProperties_v9_t; using VProps = ncclNetVDeviceProps_v9_t;
};
template <> struct Abi<10> {
  using Net = ncclNet_v10_t; using Props = ncclNetProperties_v10_t; using VProps = ncclNetVDeviceProps_v10_t;
};
template <> struct Abi<11> {
  using Net = ncclNet_v11_t; using Props = ncclNetProperties_v11_t; using VProps = ncclNetVDeviceProps_v11_t;
};
template <> struct Abi<12> {
  using Net = ncclNet_v12_t; using Props = ncclNetProperties_v12_t; using VProps = ncclNetVDeviceProps_v12_t;
};

// What v6..v10 plugins see of a per-communicator init: nothing. The view
// hands out a context of its own that remembers the comm's config.
struct LegacyContext {
  ncclNetCommConfig_v10_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
};

template <int V>
class ImportedNet final : public NetView {
  using Net = typename Abi<V>::Net;
  static constexpr bool kPerCommInit = V >= 11;
  static constexpr bool kIntSizes = V <= 8;

 public:
  ImportedNet(const Net* table, Logger logger) : t_(table), log_(logger) {}

  int version() const override { return V; }
  const char* name() const override { return t_->name; }

  bool provides(Optional op) const override {
    switch (op) {
      case Optional::RegMrDmaBuf: return t_->regMrDmaBuf != nullptr;
      case Optional::GetDeviceMr:
        if constexpr (V >= 7) return t_->getDeviceMr != nullptr;
        return false;
      case Optional::IrecvConsumed:
        if constexpr (V >= 7) return t_->irecvConsumed != nullptr;
        return false;
      case Optional::MakeVDevice:
        if constexpr (V >= 9) return t_->makeVDevice != nullptr;
        return false;
      case Optional::SetNetAttr:
        if constexpr (V >= 11) return t_->setNetAttr != nullptr;
        return false;
    }
    return false;
  }

  ncclResult_t init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                    ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) override {
    if constexpr (kPerCommInit) {
      return t_->init(ctx, commId, config, logFn, profFn);
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      if (legacyRefs_ == 0) {
        ncclResult_t res;
        if constexpr (V == 10) res = t_->init(logFn, profFn);
        else res = t_->init(logFn);
        if (res != ncclSuccess) return res;
      }
      legacyRefs_++;
      auto context = std::make_unique<LegacyContext>();
      if (config != nullptr) context->config.trafficClass = config->trafficClass;
      *ctx = context.get();
      legacyContexts_.emplace(context.get(), std::move(context));
      return ncclSuccess;
    }
  }

  ncclResult_t finalize(void* ctx) override {
    if constexpr (kPerCommInit) {
      return t_->finalize(ctx);
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      if (legacyContexts_.erase(ctx) == 0) {
        NCCLNET_WARN(log_, "finalize: %p is not a context of this v%d plugin", ctx, V);
        return ncclInternalError;
      }
      legacyRefs_--;  // v6..v10 have no finalize: the plugin stays initialized
      return ncclSuccess;
    }
  }

  ncclResult_t devices(int* ndev) override { return t_->devices(ndev); }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) override {
    if constexpr (V == 12) {
      return t_->getProperties(dev, props);
    } else {
      typename Abi<V>::Props old;
      std::memset(static_cast<void*>(&old), 0, sizeof(old));
      ncclResult_t res = t_->getProperties(dev, &old);
      if (res == ncclSuccess) detail::propertiesToV12(old, dev, props);
      return res;
    }
  }

  ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) override {
    if constexpr (kPerCommInit) return t_->listen(ctx, dev, handle, listenComm);
    else return t_->listen(dev, handle, listenComm);
  }

  ncclResult_t connect(void* ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** sendDevComm) override {
    if constexpr (kPerCommInit) {
      return t_->connect(ctx, dev, handle, sendComm, sendDevComm);
    } else if constexpr (V == 10) {
      LegacyContext* context = findLegacy(ctx);
      if (context == nullptr) return badContext("connect", ctx);
      return t_->connect(dev, &context->config, handle, sendComm, sendDevComm);
    } else if constexpr (V >= 7) {
      return t_->connect(dev, handle, sendComm, sendDevComm);
    } else {
      return t_->connect(dev, handle, sendComm);
    }
  }

  ncclResult_t accept(void* listenComm, void** recvComm,
                      ncclNetDeviceHandle_v12_t** recvDevComm) override {
    if constexpr (V >= 7) return t_->accept(listenComm, recvComm, recvDevComm);
    else return t_->accept(listenComm, recvComm);
  }

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    if constexpr (V <= 7) {
      if (size > INT_MAX) return tooLarge("regMr", size);
      return t_->regMr(comm, data, static_cast<int>(size), type, mhandle);
    } else {
      return t_->regMr(comm, data, size, type, mhandle);
    }
  }

  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
                           int fd, void** mhandle) override {
    if (t_->regMrDmaBuf == nullptr) return missing(Optional::RegMrDmaBuf);
    return t_->regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
  }

  ncclResult_t deregMr(void* comm, void* mhandle) override { return t_->deregMr(comm, mhandle); }

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                     void* phandle, void** request) override {
    if constexpr (kIntSizes) {
      if (size > INT_MAX) return tooLarge("isend", size);
      return t_->isend(sendComm, data, static_cast<int>(size), tag, mhandle, request);
    } else if constexpr (V == 9) {
      return t_->isend(sendComm, data, size, tag, mhandle, request);
    } else {
      return t_->isend(sendComm, data, size, tag, mhandle, phandle, request);
    }
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
                     void** mhandles, void** phandles, void** request) override {
    if constexpr (kIntSizes) {
      int narrow[kMaxSubs];
      if (n < 1 || n > kMaxSubs || sizes == nullptr) {
        NCCLNET_WARN(log_, "irecv: n=%d outside 1..%d or NULL sizes", n, kMaxSubs);
        return ncclInternalError;
      }
      for (int i = 0; i < n; i++) {
        if (sizes[i] > INT_MAX) return tooLarge("irecv", sizes[i]);
        narrow[i] = static_cast<int>(sizes[i]);
      }
      // NCCL never hands the optional-completion hint to v6..v8 plugins.
      if (request != nullptr &&
          *request == reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION)) {
        *request = nullptr;
      }
      return t_->irecv(recvComm, n, data, narrow, tags, mhandles, request);
    } else if constexpr (V == 9) {
      return t_->irecv(recvComm, n, data, sizes, tags, mhandles, request);
    } else {
      return t_->irecv(recvComm, n, data, sizes, tags, mhandles, phandles, request);
    }
  }

  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request) override {
    return t_->iflush(recvComm, n, data, sizes, mhandles, request);
  }
  ncclResult_t test(void* request, int* done, int* sizes) override {
    return t_->test(request, done, sizes);
  }
  ncclResult_t closeSend(void* c) override { return t_->closeSend(c); }
  ncclResult_t closeRecv(void* c) override { return t_->closeRecv(c); }
  ncclResult_t closeListen(void* c) override { return t_->closeListen(c); }

  ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr) override {
    if constexpr (V >= 7) {
      if (t_->getDeviceMr != nullptr) return t_->getDeviceMr(comm, mhandle, dptr);
    }
    return missing(Optional::GetDeviceMr);
  }

  ncclResult_t irecvConsumed(void* recvComm, int n, void* request) override {
    if constexpr (V >= 7) {
      if (t_->irecvConsumed != nullptr) return t_->irecvConsumed(recvComm, n, request);
    }
    return missing(Optional::IrecvConsumed);
  }

  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) override {
    if constexpr (V >= 9) {
      if (t_->makeVDevice != nullptr) {
        if constexpr (V == 12) {
          return t_->makeVDevice(d, props);
        } else {
          typename Abi<V>::VProps old;
          if (props == nullptr || detail::vPropsFromV12(*props, &old) != ncclSuccess) {
            NCCLNET_WARN(log_, "makeVDevice: a v%d plugin fuses at most %d devices", V,
                         static_cast<int>(sizeof(old.devs) / sizeof(int)));
            return ncclInvalidArgument;
          }
          return t_->makeVDevice(d, &old);
        }
      }
    }
    return missing(Optional::MakeVDevice);
  }

  ncclResult_t setNetAttr(void* ctx, ncclNetAttr_v12_t* attr) override {
    if constexpr (V >= 11) {
      if (t_->setNetAttr != nullptr) return t_->setNetAttr(ctx, attr);
    }
    return missing(Optional::SetNetAttr);
  }

 private:
  static constexpr int kMaxSubs = 64;  // NCCL_PROXY_MAX_SUBS

  LegacyContext* findLegacy(void* ctx) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = legacyContexts_.find(ctx);
    return it == legacyContexts_.end() ? nullptr : it->second.get();
  }
  ncclResult_t badContext(const char* fn, void* ctx) {
    NCCLNET_WARN(log_, "%s: %p is not a context returned by init", fn, ctx);
    return ncclInternalError;
  }
  ncclResult_t tooLarge(const char* fn, size_t size) {
    NCCLNET_WARN(log_, "%s: size %zu does not fit the int sizes of ABI v%d (max %d)", fn, size,
                 V, INT_MAX);
    return ncclInternalError;
  }
  ncclResult_t missing(Optional op) {
    NCCLNET_WARN(log_, "%s: not provided by plugin '%s' (v%d)", optionalName(op), t_->name, V);
    return ncclInternalError;
  }

  const Net* t_;
  Logger log_;
  std::mutex mutex_;
  int legacyRefs_ = 0;
  std::unordered_map<void*, std::unique_ptr<LegacyContext>> legacyContexts_;
};

template <int V>
std::unique_ptr<NetView> make(const void* table, Logger logger) {
  return std::make_unique<ImportedNet<V>>(static_cast<const typename Abi<V>::Net*>(table), logger);
}

}  // namespace

std::unique_ptr<NetView> makeNetView(int version, const void* table, Logger logger) {
  if (table == nullptr) return nullptr;
  switch (version) {
    case 6: return make<6>(table, logger);
    case 7: return make<7>(table, logger);
    case 8: return make<8>(table, logger);
    case 9: return make<9>(table, logger);
    case 10: return make<10>(table, logger);
    case 11: return make<11>(table, logger);
    case 12: return make<12>(table, logger);
    default: return nullptr;
  }
}

}  // namespace ncclnet::host
