// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): the import view of one ABI version's table, an
// adapter template driven by the version's row of abi_versions.hpp. Each
// `if constexpr` below is one change in the ABI's history (docs/abi.md).
// makeNetView (net_view.hpp) instantiates it for every version the SDK
// knows; it is a header so that a test can instantiate it for a version
// row of its own (sdk/tests/fake_abi_version_test.cc).
#pragma once

#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/properties.hpp"
#include "ncclnet/host/net_view.hpp"
#include "ncclnet/log.hpp"

namespace ncclnet::host {

// The view of a table of ABI version V (the row detail::kAbi<V>, the C
// types detail::AbiTypes<V>).
template <int V>
class ImportedNet final : public NetView {
  using Abi = detail::AbiTypes<V>;
  using Net = typename Abi::Net;
  static constexpr detail::AbiVersion kRow = detail::kAbi<V>;

  // What v6..v10 plugins see of a per-communicator init: nothing. The view
  // hands out a context of its own that remembers the comm's config.
  struct LegacyContext {
    ncclNetCommConfig_v10_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  };

 public:
  ImportedNet(const Net* table, Logger logger) : t_(table), log_(logger) {}

  int version() const override { return V; }
  const char* name() const override { return t_->name; }

  bool provides(Optional op) const override {
    switch (op) {
      case Optional::RegMrDmaBuf: return t_->regMrDmaBuf != nullptr;
      case Optional::GetDeviceMr:
        if constexpr (kRow.deviceHandles) return t_->getDeviceMr != nullptr;
        return false;
      case Optional::IrecvConsumed:
        if constexpr (kRow.deviceHandles) return t_->irecvConsumed != nullptr;
        return false;
      case Optional::MakeVDevice:
        if constexpr (kRow.makeVDevice) return t_->makeVDevice != nullptr;
        return false;
      case Optional::SetNetAttr:
        if constexpr (kRow.perCommInit) return t_->setNetAttr != nullptr;
        return false;
    }
    return false;
  }

  ncclResult_t init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                    ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) override {
    if constexpr (kRow.perCommInit) {
      return t_->init(ctx, commId, config, logFn, profFn);
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      if (legacyRefs_ == 0) {
        ncclResult_t res;
        if constexpr (kRow.profiler)
          res = t_->init(logFn, profFn);
        else
          res = t_->init(logFn);
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
    if constexpr (kRow.perCommInit) {
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
    // The view speaks v12: a table with v12's struct fills it directly.
    if constexpr (std::is_same_v<typename Abi::Props, ncclNetProperties_v12_t>) {
      return t_->getProperties(dev, props);
    } else {
      typename Abi::Props old;
      std::memset(static_cast<void*>(&old), 0, sizeof(old));
      ncclResult_t res = t_->getProperties(dev, &old);
      if (res == ncclSuccess) detail::propertiesToV12(old, dev, props);
      return res;
    }
  }

  ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) override {
    if constexpr (kRow.perCommInit)
      return t_->listen(ctx, dev, handle, listenComm);
    else
      return t_->listen(dev, handle, listenComm);
  }

  ncclResult_t connect(void* ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** sendDevComm) override {
    if constexpr (kRow.perCommInit) {
      return t_->connect(ctx, dev, handle, sendComm, sendDevComm);
    } else if constexpr (kRow.connectConfig) {
      LegacyContext* context = findLegacy(ctx);
      if (context == nullptr) return badContext("connect", ctx);
      return t_->connect(dev, &context->config, handle, sendComm, sendDevComm);
    } else if constexpr (kRow.deviceHandles) {
      return t_->connect(dev, handle, sendComm, sendDevComm);
    } else {
      return t_->connect(dev, handle, sendComm);
    }
  }

  ncclResult_t accept(void* listenComm, void** recvComm,
                      ncclNetDeviceHandle_v12_t** recvDevComm) override {
    if constexpr (kRow.deviceHandles)
      return t_->accept(listenComm, recvComm, recvDevComm);
    else
      return t_->accept(listenComm, recvComm);
  }

  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    if constexpr (kRow.intRegMrSize) {
      if (const char* why = detail::refuseRegMrSize(kRow, size)) return refused("regMr", why, size);
      return t_->regMr(comm, data, static_cast<int>(size), type, mhandle);
    } else {
      return t_->regMr(comm, data, size, type, mhandle);
    }
  }

  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle) override {
    if (t_->regMrDmaBuf == nullptr) return missing(Optional::RegMrDmaBuf);
    return t_->regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
  }

  ncclResult_t deregMr(void* comm, void* mhandle) override { return t_->deregMr(comm, mhandle); }

  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                     void** request) override {
    if constexpr (kRow.intMessageSizes) {
      if (const char* why = detail::refuseMessageSize(kRow, size)) {
        return refused("isend", why, size);
      }
      return t_->isend(sendComm, data, static_cast<int>(size), tag, mhandle, request);
    } else if constexpr (!kRow.profiler) {
      return t_->isend(sendComm, data, size, tag, mhandle, request);
    } else {
      return t_->isend(sendComm, data, size, tag, mhandle, phandle, request);
    }
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** phandles, void** request) override {
    if constexpr (kRow.intMessageSizes) {
      int narrow[kMaxGroupedRecvs];
      if (const char* why = detail::narrowRecvSizes(kRow, n, sizes, narrow)) {
        NCCLNET_WARN(log_, "irecv: n=%d: %s (ABI v%d)", n, why, V);
        return ncclInternalError;
      }
      // NCCL never hands the optional-completion hint to v6..v8 plugins.
      if (request != nullptr &&
          *request == reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION)) {
        *request = nullptr;
      }
      return t_->irecv(recvComm, n, data, narrow, tags, mhandles, request);
    } else if constexpr (!kRow.profiler) {
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
    if constexpr (kRow.deviceHandles) {
      if (t_->getDeviceMr != nullptr) return t_->getDeviceMr(comm, mhandle, dptr);
    }
    return missing(Optional::GetDeviceMr);
  }

  ncclResult_t irecvConsumed(void* recvComm, int n, void* request) override {
    if constexpr (kRow.deviceHandles) {
      if (t_->irecvConsumed != nullptr) return t_->irecvConsumed(recvComm, n, request);
    }
    return missing(Optional::IrecvConsumed);
  }

  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) override {
    if constexpr (kRow.makeVDevice) {
      if (t_->makeVDevice != nullptr) {
        if constexpr (std::is_same_v<typename Abi::VProps, ncclNetVDeviceProps_v12_t>) {
          return t_->makeVDevice(d, props);
        } else {
          typename Abi::VProps old;
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
    if constexpr (kRow.perCommInit) {
      if (t_->setNetAttr != nullptr) return t_->setNetAttr(ctx, attr);
    }
    return missing(Optional::SetNetAttr);
  }

 private:
  LegacyContext* findLegacy(void* ctx) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = legacyContexts_.find(ctx);
    return it == legacyContexts_.end() ? nullptr : it->second.get();
  }
  ncclResult_t badContext(const char* fn, void* ctx) {
    NCCLNET_WARN(log_, "%s: %p is not a context returned by init", fn, ctx);
    return ncclInternalError;
  }
  ncclResult_t refused(const char* fn, const char* why, size_t size) {
    NCCLNET_WARN(log_, "%s: size %zu: %s (ABI v%d)", fn, size, why, V);
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

}  // namespace ncclnet::host
