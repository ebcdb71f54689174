// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: ObjectAdapter<Impl> turns a plugin written on the object
// model (<ncclnet/object_model.hpp>) into the void* plugin class the export
// tables drive. Everything NCCL passes back is looked up here, once, and a
// handle that does not name a live object of the right kind is refused
// before the plugin sees the call.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/abi_versions.hpp"     // kMaxGroupedRecvs
#include "ncclnet/detail/offers_optional.hpp"  // specialized below
#include "ncclnet/handle_table.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/object_model.hpp"
#include "ncclnet/object_model_contract.hpp"
#include "ncclnet/plugin_types.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet::detail {

template <class Impl>
class ObjectAdapter {
  using Listen = typename Impl::ListenComm;
  using Send = typename Impl::SendComm;
  using Recv = typename Impl::RecvComm;
  using Mem = typename Impl::MemHandle;
  using Req = typename Impl::Request;
  using Connector = typename Impl::Connector;

  // A comm with the requests NCCL holds on it.
  template <class T>
  struct CommEntry {
    std::unique_ptr<T> object;
    RequestTable requests;
  };
  struct MemEntry {
    std::unique_ptr<Mem> object;
    const void* owner;  // the comm handle regMr was called with
  };
  struct ConnectEntry {
    std::unique_ptr<Connector> object;
  };

  // Request slot marks.
  static constexpr uint32_t kFlushRequest = 1;
  static constexpr uint32_t kReportedDone = 2;  // held until irecvConsumed

  // The SDK's bytes at the end of the listen handle: which connect in
  // progress this buffer belongs to. The nonce tells this plugin object's
  // handles from a copy made by another process (or an earlier object).
  struct ConnectTail {
    uint64_t nonce;
    uint64_t connect;  // the Connect handle, as an integer
  };
  static_assert(sizeof(ConnectTail) == kHandleReservedBytes, "the tail fills the reserved bytes");

 public:
  static constexpr const char* kName = Impl::kName;
  using Model = Impl;

  static ncclResult_t create(const InitArgs& args, std::unique_ptr<ObjectAdapter>* out) {
    std::unique_ptr<Impl> impl;
    ncclResult_t res = Impl::create(args, &impl);
    if (res != ncclSuccess) return res;
    if (!impl) {
      NCCLNET_WARN(args.logger, "init: create() returned success but no object");
      return ncclInternalError;
    }
    out->reset(new ObjectAdapter(args.logger, std::move(impl)));
    return ncclSuccess;
  }

  ~ObjectAdapter() {
    // What NCCL never closed goes back through the plugin's close, in the
    // order NCCL closes: connects, comms, listens; registrations last.
    drain<ConnectEntry>(HandleKind::Connect, [](ConnectEntry&) {});
    drain<CommEntry<Send>>(HandleKind::Send,
                           [&](CommEntry<Send>& e) { impl_->close(std::move(e.object)); });
    drain<CommEntry<Recv>>(HandleKind::Recv,
                           [&](CommEntry<Recv>& e) { impl_->close(std::move(e.object)); });
    drain<CommEntry<Listen>>(HandleKind::Listen,
                             [&](CommEntry<Listen>& e) { impl_->close(std::move(e.object)); });
    drain<MemEntry>(HandleKind::Mem, [](MemEntry&) {});
  }

  Impl& model() { return *impl_; }

  ncclResult_t devices(int* ndev) { return impl_->devices(ndev); }

  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    fillNcclDefaults(dev, props);
    return impl_->getProperties(dev, props);
  }

  // ---- connection setup ------------------------------------------------
  ncclResult_t listen(const CommContext& ctx, int dev, void* handle, void** listenComm) {
    if (handle == nullptr || listenComm == nullptr)
      return bad("listen", "NULL handle or listenComm");
    *listenComm = nullptr;
    std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
    std::unique_ptr<Listen> listen;
    ncclResult_t res = impl_->listen(ctx, dev, handle, &listen);
    if (res != ncclSuccess) return res;
    if (!listen) return bad("listen", "the plugin returned success and no listen comm");
    static const uint8_t kZeros[kHandleReservedBytes] = {};
    if (std::memcmp(tail(handle), kZeros, kHandleReservedBytes) != 0) {
      NCCLNET_WARN(log_, "listen: the plugin wrote past its %zu bytes of the handle",
                   kPluginHandleBytes);
      impl_->close(std::move(listen));
      return ncclInternalError;
    }
    auto entry = std::make_unique<CommEntry<Listen>>();
    entry->object = std::move(listen);
    return insert("listen", HandleKind::Listen, std::move(entry), listenComm);
  }

  ncclResult_t connect(const CommContext& ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** sendDevComm) {
    if (handle == nullptr || sendComm == nullptr) return bad("connect", "NULL handle or sendComm");
    *sendComm = nullptr;
    ConnectTail t;
    std::memcpy(&t, tail(handle), sizeof(t));
    void* pending = reinterpret_cast<void*>(static_cast<uintptr_t>(t.connect));
    ConnectEntry* entry =
        t.nonce == nonce_ ? find<ConnectEntry>(pending, HandleKind::Connect) : nullptr;
    if (entry == nullptr) {
      // The first call with this buffer (or a copy of a handle whose
      // connect is not ours): the plugin judges the bytes and starts.
      std::unique_ptr<Connector> connector;
      ncclResult_t res = impl_->connect(ctx, dev, handle, &connector);
      if (res != ncclSuccess) return res;
      if (!connector) return bad("connect", "the plugin returned success and no connector");
      auto fresh = std::make_unique<ConnectEntry>();
      fresh->object = std::move(connector);
      entry = fresh.get();
      res = insert("connect", HandleKind::Connect, std::move(fresh), &pending);
      if (res != ncclSuccess) return res;
      t = ConnectTail{nonce_, handle_bits::raw(pending)};
      std::memcpy(tail(handle), &t, sizeof(t));
    }
    std::unique_ptr<Send> comm;
    ncclResult_t res = impl_->connectStep(*entry->object, &comm, sendDevComm);
    if (res == ncclSuccess && !comm) return ncclSuccess;  // call again
    // Done, one way or the other: the buffer may start a new connect.
    destroy<ConnectEntry>(pending, HandleKind::Connect);
    std::memset(tail(handle), 0, kHandleReservedBytes);
    if (res != ncclSuccess) return res;
    auto sendEntry = std::make_unique<CommEntry<Send>>();
    sendEntry->object = std::move(comm);
    return insert("connect", HandleKind::Send, std::move(sendEntry), sendComm);
  }

  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm) {
    if (recvComm == nullptr) return bad("accept", "recvComm is NULL");
    *recvComm = nullptr;
    auto* listen = find<CommEntry<Listen>>(listenComm, HandleKind::Listen);
    if (listen == nullptr) return notLive("accept", listenComm, HandleKind::Listen);
    std::unique_ptr<Recv> comm;
    ncclResult_t res = impl_->accept(*listen->object, &comm, recvDevComm);
    if (res != ncclSuccess || !comm) return res;
    auto entry = std::make_unique<CommEntry<Recv>>();
    entry->object = std::move(comm);
    return insert("accept", HandleKind::Recv, std::move(entry), recvComm);
  }

  // ---- memory registration ---------------------------------------------
  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    return registerWith("regMr", comm, mhandle, [&](DataComm<Impl> dc, std::unique_ptr<Mem>* out) {
      return impl_->regMr(dc, data, size, type, out);
    });
  }

  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle) {
    if constexpr (object::declares_regMrDmaBuf_v<Impl>) {
      return registerWith("regMrDmaBuf", comm, mhandle,
                          [&](DataComm<Impl> dc, std::unique_ptr<Mem>* out) {
                            return impl_->regMrDmaBuf(dc, data, size, type, offset, fd, out);
                          });
    } else {
      return bad("regMrDmaBuf", "not offered by this plugin");
    }
  }

  ncclResult_t deregMr(void* comm, void* mhandle) {
    DataComm<Impl> dc;
    if (!findDataComm("deregMr", comm, &dc)) return ncclInvalidArgument;
    MemEntry* mem = findMem("deregMr", comm, mhandle);
    if (mem == nullptr) return ncclInvalidArgument;
    ncclResult_t res = impl_->deregMr(dc, *mem->object);
    destroy<MemEntry>(mhandle, HandleKind::Mem);
    return res;
  }

  ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr) {
    if constexpr (object::declares_getDeviceMr_v<Impl>) {
      if (dptr == nullptr) return bad("getDeviceMr", "dptr_mhandle is NULL");
      DataComm<Impl> dc;
      if (!findDataComm("getDeviceMr", comm, &dc)) return ncclInvalidArgument;
      MemEntry* mem = findMem("getDeviceMr", comm, mhandle);
      if (mem == nullptr) return ncclInvalidArgument;
      return impl_->getDeviceMr(dc, *mem->object, dptr);
    } else {
      return bad("getDeviceMr", "not offered by this plugin");
    }
  }

  // ---- data path -------------------------------------------------------
  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                     void** request) {
    if (request == nullptr) return bad("isend", "request is NULL");
    *request = nullptr;
    auto* comm = find<CommEntry<Send>>(sendComm, HandleKind::Send);
    if (comm == nullptr) return notLive("isend", sendComm, HandleKind::Send);
    Mem* mh = nullptr;
    if (mhandle != nullptr) {
      MemEntry* mem = findMem("isend", sendComm, mhandle);
      if (mem == nullptr) return ncclInvalidArgument;
      mh = mem->object.get();
    }
    return issue(sendComm, *comm, 0, request, [&](Req** out) {
      return impl_->isend(*comm->object, data, size, tag, mh, phandle, out);
    });
  }

  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** phandles, void** request) {
    if (request == nullptr) return bad("irecv", "request is NULL");
    *request = nullptr;  // NCCL may have preloaded NCCL_NET_OPTIONAL_RECV_COMPLETION
    if (n < 1 || n > kMaxGroupedRecvs || data == nullptr || sizes == nullptr || tags == nullptr) {
      return bad("irecv", "n outside 1..64, or NULL data, sizes or tags");
    }
    auto* comm = find<CommEntry<Recv>>(recvComm, HandleKind::Recv);
    if (comm == nullptr) return notLive("irecv", recvComm, HandleKind::Recv);
    Mem* mhs[kMaxGroupedRecvs];
    if (!resolveMems("irecv", recvComm, n, mhandles, mhs)) return ncclInvalidArgument;
    return issue(recvComm, *comm, 0, request, [&](Req** out) {
      return impl_->irecv(*comm->object, n, data, sizes, tags, mhs, phandles, out);
    });
  }

  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request) {
    if (request == nullptr) return bad("iflush", "request is NULL");
    *request = nullptr;
    if (n < 1 || n > kMaxGroupedRecvs || data == nullptr || sizes == nullptr) {
      return bad("iflush", "n outside 1..64, or NULL data or sizes");
    }
    auto* comm = find<CommEntry<Recv>>(recvComm, HandleKind::Recv);
    if (comm == nullptr) return notLive("iflush", recvComm, HandleKind::Recv);
    Mem* mhs[kMaxGroupedRecvs];
    if (!resolveMems("iflush", recvComm, n, mhandles, mhs)) return ncclInvalidArgument;
    return issue(recvComm, *comm, kFlushRequest, request,
                 [&](Req** out) { return impl_->iflush(*comm->object, n, data, sizes, mhs, out); });
  }

  ncclResult_t test(void* request, int* done, int* sizes) {
    if (done == nullptr) return bad("test", "done is NULL");
    *done = 0;
    if (handle_bits::kindOf(request) == HandleKind::Request) {
      uint32_t commGenerationLow = 0;
      SlotId commId = handle_bits::requestCommIndex(request, &commGenerationLow);
      uint32_t mark = 0;
      void* entry = objects_.findByIndex(commId.index, handle_bits::kCommGenerationInRequest,
                                         commGenerationLow, &mark);
      auto kind = static_cast<HandleKind>(mark);
      if (entry != nullptr && kind == HandleKind::Send) {
        return testOn(*static_cast<CommEntry<Send>*>(entry), request, done, sizes, false);
      }
      if (entry != nullptr && kind == HandleKind::Recv) {
        return testOn(*static_cast<CommEntry<Recv>*>(entry), request, done, sizes,
                      holdsUntilConsumed(*static_cast<CommEntry<Recv>*>(entry)->object));
      }
    }
    NCCLNET_WARN(log_,
                 "test: %p is not a request in flight (done already, its comm closed, or "
                 "never issued)",
                 request);
    return ncclInvalidArgument;
  }

  ncclResult_t irecvConsumed(void* recvComm, int n, void* request) {
    if constexpr (object::declares_irecvConsumed_v<Impl>) {
      auto* comm = find<CommEntry<Recv>>(recvComm, HandleKind::Recv);
      if (comm == nullptr) return notLive("irecvConsumed", recvComm, HandleKind::Recv);
      if (!comm->object->holdsUntilConsumed())
        return impl_->irecvConsumed(*comm->object, n, nullptr);
      SlotId id = requestOf(recvComm, request);
      Req* req = static_cast<Req*>(comm->requests.find(id));
      if (req == nullptr || comm->requests.mark(id) != kReportedDone) {
        NCCLNET_WARN(log_,
                     "irecvConsumed: %p is not a receive of this comm that test() reported "
                     "done",
                     request);
        return ncclInvalidArgument;
      }
      ncclResult_t res = impl_->irecvConsumed(*comm->object, n, req);
      comm->requests.remove(id);
      return res;
    } else {
      return bad("irecvConsumed", "not offered by this plugin");
    }
  }

  // ---- teardown --------------------------------------------------------
  ncclResult_t closeSend(void* comm) {
    return closeComm<Send>("closeSend", comm, HandleKind::Send);
  }
  ncclResult_t closeRecv(void* comm) {
    return closeComm<Recv>("closeRecv", comm, HandleKind::Recv);
  }
  ncclResult_t closeListen(void* comm) {
    return closeComm<Listen>("closeListen", comm, HandleKind::Listen);
  }

  // ---- passed through --------------------------------------------------
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
    if constexpr (object::declares_makeVDevice_v<Impl>) {
      return impl_->makeVDevice(d, props);
    } else {
      return bad("makeVDevice", "not offered by this plugin");
    }
  }
  ncclResult_t setNetAttr(const CommContext& ctx, const ncclNetAttr_v12_t& attr) {
    if constexpr (object::declares_setNetAttr_v<Impl>) {
      return impl_->setNetAttr(ctx, attr);
    } else {
      return bad("setNetAttr", "not offered by this plugin");
    }
  }

 private:
  ObjectAdapter(Logger log, std::unique_ptr<Impl> impl) : log_(log), impl_(std::move(impl)) {
    std::random_device random;
    nonce_ = (static_cast<uint64_t>(random()) << 32 | random()) | 1;
  }

  static uint8_t* tail(void* handle) { return static_cast<uint8_t*>(handle) + kPluginHandleBytes; }

  template <class Entry>
  Entry* find(const void* handle, HandleKind kind) const {
    if (handle_bits::kindOf(handle) != kind) return nullptr;
    return static_cast<Entry*>(objects_.find(handle_bits::objectId(handle)));
  }

  template <class Entry>
  ncclResult_t insert(const char* fn, HandleKind kind, std::unique_ptr<Entry> entry, void** out) {
    SlotId id;
    if (!objects_.insert(entry.get(), &id)) {
      NCCLNET_WARN(log_, "%s: the handle table is full (%u objects)", fn, ObjectTable::kCapacity);
      return ncclInternalError;  // `entry` and what it holds are destroyed
    }
    objects_.setMark(id, static_cast<uint32_t>(kind));
    entry.release();
    *out = handle_bits::object(kind, id);
    return ncclSuccess;
  }

  template <class Entry>
  void destroy(void* handle, HandleKind kind) {
    if (handle_bits::kindOf(handle) != kind) return;
    delete static_cast<Entry*>(objects_.remove(handle_bits::objectId(handle)));
  }

  template <class Entry, class F>
  void drain(HandleKind kind, F&& close) {
    std::vector<SlotId> ids;
    objects_.forEach([&](SlotId id, void*) {
      if (objects_.mark(id) == static_cast<uint32_t>(kind)) ids.push_back(id);
    });
    for (SlotId id : ids) {
      std::unique_ptr<Entry> entry(static_cast<Entry*>(objects_.remove(id)));
      if (entry) close(*entry);
    }
  }

  template <class T>
  ncclResult_t closeComm(const char* fn, void* handle, HandleKind kind) {
    if (handle_bits::kindOf(handle) != kind) return notLive(fn, handle, kind);
    std::unique_ptr<CommEntry<T>> entry(
        static_cast<CommEntry<T>*>(objects_.remove(handle_bits::objectId(handle))));
    if (!entry) return notLive(fn, handle, kind);
    // Its requests are forgotten with the entry; the plugin's comm owns
    // (and frees) what they were.
    return impl_->close(std::move(entry->object));
  }

  bool findDataComm(const char* fn, void* comm, DataComm<Impl>* out) {
    if (auto* s = find<CommEntry<Send>>(comm, HandleKind::Send)) {
      out->send = s->object.get();
      return true;
    }
    if (auto* r = find<CommEntry<Recv>>(comm, HandleKind::Recv)) {
      out->recv = r->object.get();
      return true;
    }
    NCCLNET_WARN(log_, "%s: %p is not a live sendComm or recvComm", fn, comm);
    return false;
  }

  template <class F>
  ncclResult_t registerWith(const char* fn, void* comm, void** mhandle, F&& reg) {
    if (mhandle == nullptr) return bad(fn, "mhandle is NULL");
    // *mhandle is written on success only: a failed registration leaves
    // the caller's variable (maybe an earlier handle) as it was.
    DataComm<Impl> dc;
    if (!findDataComm(fn, comm, &dc)) return ncclInvalidArgument;
    std::unique_ptr<Mem> mem;
    ncclResult_t res = reg(dc, &mem);
    if (res != ncclSuccess) return res;
    if (!mem) return bad(fn, "the plugin returned success and no registration");
    auto entry = std::make_unique<MemEntry>();
    entry->object = std::move(mem);
    entry->owner = comm;
    return insert(fn, HandleKind::Mem, std::move(entry), mhandle);
  }

  // An mhandle NCCL passes with a call on `comm`: live, and registered
  // through that comm (src/transport/net.cc registers each buffer on the
  // comm that will carry it).
  MemEntry* findMem(const char* fn, const void* comm, void* mhandle) {
    MemEntry* mem = find<MemEntry>(mhandle, HandleKind::Mem);
    if (mem == nullptr) {
      NCCLNET_WARN(log_,
                   "%s: mhandle %p is not a live registration (regMr never returned it, "
                   "or deregMr released it)",
                   fn, mhandle);
      return nullptr;
    }
    if (mem->owner != comm) {
      NCCLNET_WARN(log_, "%s: mhandle %p was registered on comm %p, not on %p", fn, mhandle,
                   mem->owner, comm);
      return nullptr;
    }
    return mem;
  }

  bool resolveMems(const char* fn, const void* comm, int n, void** mhandles, Mem** out) {
    for (int i = 0; i < n; i++) {
      out[i] = nullptr;
      if (mhandles == nullptr || mhandles[i] == nullptr) continue;
      MemEntry* mem = findMem(fn, comm, mhandles[i]);
      if (mem == nullptr) return false;
      out[i] = mem->object.get();
    }
    return true;
  }

  // Reserves the request's slot first, so that a request the plugin issued
  // always gets a handle.
  template <class T, class F>
  ncclResult_t issue(const void* commHandle, CommEntry<T>& comm, uint32_t mark, void** request,
                     F&& post) {
    SlotId id;
    if (!comm.requests.insert(nullptr, &id)) {
      return ncclSuccess;  // RequestTable::kCapacity in flight: NULL, "try again"
    }
    Req* req = nullptr;
    ncclResult_t res = post(&req);
    if (res != ncclSuccess || req == nullptr) {
      comm.requests.remove(id);
      return res;
    }
    comm.requests.assign(id, req);
    if (mark != 0) comm.requests.setMark(id, mark);
    *request = handle_bits::request(handle_bits::objectId(commHandle), id);
    return ncclSuccess;
  }

  SlotId requestOf(const void* commHandle, const void* request) const {
    if (handle_bits::kindOf(request) != HandleKind::Request) return SlotId{};
    uint32_t low = 0;
    SlotId comm = handle_bits::requestCommIndex(request, &low);
    SlotId own = handle_bits::objectId(commHandle);
    if (comm.index != own.index || low != (own.generation & handle_bits::kCommGenerationInRequest))
      return SlotId{};
    return handle_bits::requestId(request);
  }

  template <class T>
  ncclResult_t testOn(CommEntry<T>& comm, const void* request, int* done, int* sizes, bool holds) {
    SlotId id = handle_bits::requestId(request);
    Req* req = static_cast<Req*>(comm.requests.find(id));
    uint32_t mark = comm.requests.mark(id);
    if (req == nullptr || mark == kReportedDone) {
      NCCLNET_WARN(log_, "test: %p is not a request in flight (%s)", request,
                   req == nullptr ? "done already, or never issued" : "reported done already");
      return ncclInvalidArgument;
    }
    ncclResult_t res = impl_->test(*comm.object, *req, done, sizes);
    if (*done) {
      // A failed request is done too: the plugin may have reused it.
      if (res == ncclSuccess && holds && mark != kFlushRequest) {
        comm.requests.setMark(id, kReportedDone);
      } else {
        comm.requests.remove(id);
      }
    }
    return res;
  }

  template <class C>
  static bool holdsUntilConsumed(const C& comm) {
    if constexpr (object::declares_irecvConsumed_v<Impl>) {
      return comm.holdsUntilConsumed();
    } else {
      return false;
    }
  }

  ncclResult_t notLive(const char* fn, const void* handle, HandleKind kind) {
    NCCLNET_WARN(log_, "%s: %p is not a live %s (closed, or another kind of handle)", fn, handle,
                 handleKindName(kind));
    return ncclInvalidArgument;
  }

  ncclResult_t bad(const char* fn, const char* why) {
    NCCLNET_WARN(log_, "%s: %s", fn, why);
    return ncclInvalidArgument;
  }

  Logger log_;
  uint64_t nonce_ = 0;
  // Declared before the table: destroyed after every object NCCL held.
  std::unique_ptr<Impl> impl_;
  ObjectTable objects_;
};

// The optional slots a plugin offers are the ones its model declares.
template <class Impl>
struct OffersOptional<ObjectAdapter<Impl>> {
  static constexpr bool regMrDmaBuf = object::declares_regMrDmaBuf_v<Impl>;
  static constexpr bool getDeviceMr = object::declares_getDeviceMr_v<Impl>;
  static constexpr bool irecvConsumed = object::declares_irecvConsumed_v<Impl>;
  static constexpr bool makeVDevice = object::declares_makeVDevice_v<Impl>;
  static constexpr bool setNetAttr = object::declares_setNetAttr_v<Impl>;
};

}  // namespace ncclnet::detail

#pragma GCC visibility pop
