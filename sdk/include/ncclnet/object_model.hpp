// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the object model. A plugin written on it deals in its own
// typed objects; the SDK owns every handle NCCL holds.
//
// Declare six types and the members below, then export with
//
//   NCCLNET_EXPORT_PLUGIN(MyNet)
//
// from <ncclnet/plugin.hpp>, which also says from which threads NCCL calls
// the members, how long what they get lives, and which error codes mean
// what. The SDK then
//  - keeps every comm, registration, request and connect in progress in a
//    handle table (<ncclnet/handle_table.hpp>) and gives NCCL handles that
//    are not pointers: a handle of the wrong kind, a closed one, one of
//    another comm, or garbage is refused with an error and one WARN line
//    before the plugin sees the call, for every plugin alike;
//  - maps each request to its comm, so test() arrives with both;
//  - keeps the state of a connect in progress (NCCL calls connect again
//    with the same 128-byte handle until a comm comes back) in the last
//    kHandleReservedBytes of that handle;
//  - checks pointer arguments (NULL outputs, n outside 1..64) once;
//  - prefills getProperties with NCCL's defaults;
//  - closes, at the last finalize, what NCCL left open.
//
//   class MyNet {
//    public:
//     static constexpr const char* kName = "my-net";
//     using ListenComm = ...;  // any class: the SDK holds it in a unique_ptr
//     using SendComm = ...;
//     using RecvComm = ...;
//     using MemHandle = ...;   // a registration; its destructor releases it
//     using Request = ...;     // owned by the plugin (e.g. a RequestPool)
//     using Connector = ...;   // one connect in progress
//     static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<MyNet>* out);
//     ncclResult_t devices(int* ndev);
//     // `props` holds NCCL's defaults (ncclnet::fillNcclDefaults) on entry.
//     ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
//     // Writes at most kPluginHandleBytes into `handle` (zeroed on entry).
//     ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
//                         std::unique_ptr<ListenComm>* out);
//     // The first connect call with a handle: judge its bytes and start.
//     ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, const void* handle,
//                          std::unique_ptr<Connector>* out);
//     // Every call, the first included: success with *out empty = call again.
//     ncclResult_t connectStep(Connector& connector, std::unique_ptr<SendComm>* out,
//                              ncclNetDeviceHandle_v12_t** sendDevComm);
//     ncclResult_t accept(ListenComm& listen, std::unique_ptr<RecvComm>* out,
//                         ncclNetDeviceHandle_v12_t** recvDevComm);
//     ncclResult_t regMr(ncclnet::DataComm<MyNet> comm, void* data, size_t size, int type,
//                        std::unique_ptr<MemHandle>* out);
//     // Before the SDK destroys `mh`: an error here is NCCL's result.
//     ncclResult_t deregMr(ncclnet::DataComm<MyNet> comm, MemHandle& mh);
//     // mh is NULL where NCCL passed a NULL mhandle. *request stays NULL
//     // for "not now" (NCCL calls again).
//     ncclResult_t isend(SendComm& comm, void* data, size_t size, int tag, MemHandle* mh,
//                        void* phandle, Request** request);
//     ncclResult_t irecv(RecvComm& comm, int n, void** data, size_t* sizes, int* tags,
//                        MemHandle** mhs, void** phandles, Request** request);
//     ncclResult_t iflush(RecvComm& comm, int n, void** data, int* sizes, MemHandle** mhs,
//                         Request** request);
//     // Once *done is 1 (with an error too) the SDK forgets the request and
//     // the plugin may reuse it; a receive held until irecvConsumed (below)
//     // is the one exception.
//     ncclResult_t test(SendComm& comm, Request& request, int* done, int* sizes);
//     ncclResult_t test(RecvComm& comm, Request& request, int* done, int* sizes);
//     // The SDK has forgotten the comm; the plugin decides when it dies.
//     ncclResult_t close(std::unique_ptr<SendComm> comm);
//     ncclResult_t close(std::unique_ptr<RecvComm> comm);
//     ncclResult_t close(std::unique_ptr<ListenComm> comm);
//     // optional:
//     ncclResult_t regMrDmaBuf(ncclnet::DataComm<MyNet> comm, void* data, size_t size, int type,
//                              uint64_t offset, int fd, std::unique_ptr<MemHandle>* out);
//     ncclResult_t getDeviceMr(ncclnet::DataComm<MyNet> comm, MemHandle& mh, void** dptr_mhandle);
//     // With it, a receive of a comm whose holdsUntilConsumed() is true
//     // stays known after test() reported it done, until this call
//     // (`request` is then that receive; NULL for other comms).
//     ncclResult_t irecvConsumed(RecvComm& comm, int n, Request* request);
//     ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
//     ncclResult_t setNetAttr(const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr);
//     const ncclnet::ParamTable& params() const;
//   };
//
// docs/object-model.md walks through a complete plugin written this way.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <type_traits>
#include <utility>

#include "ncclnet/abi/net.h"
#include "ncclnet/c/plugin_helpers.h"
#include "ncclnet/handle_table.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/plugin_types.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet {

class ParamTable;

// NCCL's 128-byte listen handle: the plugin's bytes, then the SDK's.
constexpr size_t kHandleReservedBytes = 16;
constexpr size_t kPluginHandleBytes = NCCL_NET_HANDLE_MAXSIZE - kHandleReservedBytes;

// What regMr, deregMr and getDeviceMr are called on: a send or a receive
// comm (exactly one is set).
template <class Net>
struct DataComm {
  typename Net::SendComm* send = nullptr;
  typename Net::RecvComm* recv = nullptr;
};

// NCCL's defaults for the fields a plugin leaves alone: what NCCL's compat
// layer gives a field an older plugin cannot report (ncclnetPropertiesInit),
// and where that is zero, what NCCL's example plugin recommends: host
// memory, one receive per irecv, 1 Mi comms, and a guid per device (NCCL
// takes devices with one guid for ports of one NIC).
inline void fillNcclDefaults(int dev, ncclNetProperties_v12_t* props) {
  ncclnetPropertiesInit(props, dev);
  props->guid = static_cast<uint64_t>(dev);
  props->ptrSupport = NCCL_PTR_HOST;
  props->maxComms = 1024 * 1024;
  props->maxRecvs = 1;
}

namespace detail {

template <class T, class = void>
struct usesObjectModel : std::false_type {};
template <class T>
struct usesObjectModel<
    T, std::void_t<typename T::ListenComm, typename T::SendComm, typename T::RecvComm,
                   typename T::MemHandle, typename T::Request, typename T::Connector>>
    : std::true_type {};

}  // namespace detail

// True for a plugin class written on the object model.
template <class T>
constexpr bool usesObjectModel_v = detail::usesObjectModel<T>::value;

}  // namespace ncclnet

#pragma GCC visibility pop
