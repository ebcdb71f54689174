// SPDX-License-Identifier: Apache-2.0
// A NetView that forwards to another and records the calls the transport
// makes, so tests can check NCCL's call pattern (grouped irecv sizes,
// iflush, irecvConsumed, the optional-completion hint, close order).
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "ncclnet/host/net_view.hpp"

namespace ncclnet::transport::testing {

class RecordingNet final : public host::NetView {
 public:
  explicit RecordingNet(host::NetView& inner) : inner_(inner) {}

  std::atomic<int> connects{0}, accepts{0}, listens{0}, closeListens{0}, closeSends{0},
      closeRecvs{0}, regMrs{0}, deregMrs{0}, isends{0}, irecvs{0}, iflushes{0}, irecvConsumeds{0},
      optionalHints{0}, getDeviceMrs{0}, maxIrecvN{0}, regMrDmaBufs{0};
  std::atomic<int> deviceHandleAccepts{0};  // accepts that completed holding a handle
  std::atomic<int> groupedHints{0};         // the optional hint on an irecv with n > 1
  std::vector<int> regTypes;                // every regMr type, in order
  // regMr succeeds with a NULL handle, as NCCL's own Socket transport does
  // (the plugin's own registration is released at once).
  std::atomic<bool> nullMhandles{false};
  std::mutex mutex;

  int version() const override { return inner_.version(); }
  const char* name() const override { return inner_.name(); }
  bool provides(host::Optional op) const override { return inner_.provides(op); }
  ncclResult_t init(void** ctx, uint64_t id, ncclNetCommConfig_v12_t* c, ncclDebugLogger_t l,
                    ncclProfilerCallback_t p) override {
    return inner_.init(ctx, id, c, l, p);
  }
  ncclResult_t finalize(void* ctx) override { return inner_.finalize(ctx); }
  ncclResult_t devices(int* n) override { return inner_.devices(n); }
  ncclResult_t getProperties(int d, ncclNetProperties_v12_t* p) override {
    return inner_.getProperties(d, p);
  }
  ncclResult_t listen(void* ctx, int dev, void* h, void** l) override {
    listens++;
    return inner_.listen(ctx, dev, h, l);
  }
  ncclResult_t connect(void* ctx, int dev, void* h, void** s,
                       ncclNetDeviceHandle_v12_t** d) override {
    connects++;
    return inner_.connect(ctx, dev, h, s, d);
  }
  ncclResult_t accept(void* l, void** r, ncclNetDeviceHandle_v12_t** d) override {
    accepts++;
    ncclResult_t res = inner_.accept(l, r, d);
    if (*r != nullptr && d != nullptr && *d != nullptr) deviceHandleAccepts++;
    return res;
  }
  ncclResult_t regMr(void* c, void* data, size_t size, int type, void** mh) override {
    regMrs++;
    {
      std::lock_guard<std::mutex> lock(mutex);
      regTypes.push_back(type);
    }
    ncclResult_t res = inner_.regMr(c, data, size, type, mh);
    if (res == ncclSuccess && nullMhandles) {
      res = inner_.deregMr(c, *mh);
      *mh = nullptr;
    }
    return res;
  }
  ncclResult_t regMrDmaBuf(void* c, void* data, size_t size, int type, uint64_t off, int fd,
                           void** mh) override {
    regMrDmaBufs++;
    return inner_.regMrDmaBuf(c, data, size, type, off, fd, mh);
  }
  ncclResult_t deregMr(void* c, void* mh) override {
    deregMrs++;
    return inner_.deregMr(c, mh);
  }
  ncclResult_t isend(void* s, void* data, size_t size, int tag, void* mh, void* ph,
                     void** req) override {
    ncclResult_t res = inner_.isend(s, data, size, tag, mh, ph, req);
    if (*req != nullptr) isends++;
    return res;
  }
  ncclResult_t irecv(void* r, int n, void** data, size_t* sizes, int* tags, void** mh, void** ph,
                     void** req) override {
    if (*req == reinterpret_cast<void*>(0x1)) {
      optionalHints++;
      if (n > 1) groupedHints++;
    }
    ncclResult_t res = inner_.irecv(r, n, data, sizes, tags, mh, ph, req);
    if (*req != nullptr) {
      irecvs++;
      int seen = maxIrecvN.load();
      while (n > seen && !maxIrecvN.compare_exchange_weak(seen, n)) {
      }
    }
    return res;
  }
  ncclResult_t iflush(void* r, int n, void** data, int* sizes, void** mh, void** req) override {
    iflushes++;
    return inner_.iflush(r, n, data, sizes, mh, req);
  }
  ncclResult_t test(void* req, int* done, int* sizes) override {
    return inner_.test(req, done, sizes);
  }
  ncclResult_t closeSend(void* s) override {
    closeSends++;
    return inner_.closeSend(s);
  }
  ncclResult_t closeRecv(void* r) override {
    closeRecvs++;
    return inner_.closeRecv(r);
  }
  ncclResult_t closeListen(void* l) override {
    closeListens++;
    return inner_.closeListen(l);
  }
  ncclResult_t getDeviceMr(void* c, void* mh, void** d) override {
    getDeviceMrs++;
    return inner_.getDeviceMr(c, mh, d);
  }
  ncclResult_t irecvConsumed(void* r, int n, void* req) override {
    irecvConsumeds++;
    return inner_.irecvConsumed(r, n, req);
  }
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* p) override {
    return inner_.makeVDevice(d, p);
  }
  ncclResult_t setNetAttr(void* ctx, ncclNetAttr_v12_t* a) override {
    return inner_.setNetAttr(ctx, a);
  }

 private:
  host::NetView& inner_;
};

}  // namespace ncclnet::transport::testing
