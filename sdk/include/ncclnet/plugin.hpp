// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the one header a plugin includes. Write one class with the
// semantics of NCCL's newest ABI (v12) and export it with
//
//   NCCLNET_EXPORT_PLUGIN(MyNet)
//
// which defines the const tables ncclNetPlugin_v6 ... ncclNetPlugin_v12 and
// nothing else, so that every NCCL from 2.13 (v6) to 2.30 (v12) loads the
// library. The SDK adapts each older version to the one class, the way
// NCCL's own compat layer adapts old plugins to its core (docs/abi.md).
//
// The class comes in two forms, and the macro tells them apart:
//
//  - On the object model the class declares six types of its own and never
//    sees a void* that NCCL holds: the SDK keeps every handle, refuses a
//    stale or wrong one before the class is called, hands test() the
//    request's comm, and keeps a connect in progress between NCCL's calls.
//    sdk-socket, sdk-ofi, sdk-ib and the projects ncclnet-new-plugin writes
//    are built this way. <ncclnet/object_model.hpp> lists every member and
//    docs/object-model.md walks through a whole plugin.
//
//      class MyNet {
//       public:
//        static constexpr const char* kName = "my-net";  // what NCCL_NET matches
//        using ListenComm = MyListen;  // any classes; the SDK holds comms,
//        using SendComm = MySend;      // registrations and connectors in
//        using RecvComm = MyRecv;      // unique_ptrs, requests as pointers
//        using MemHandle = MyRegion;   // the plugin owns
//        using Request = MyRequest;
//        using Connector = MyConnect;  // one connect in progress
//        static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<MyNet>* out);
//        ncclResult_t devices(int* ndev);
//        // listen, connect, connectStep, accept, regMr, deregMr, isend, irecv,
//        // iflush, test, close; optional ones too
//      };
//      NCCLNET_EXPORT_PLUGIN(MyNet)
//
//  - The void* class, the advanced path, is NCCL's interface itself, for a
//    plugin that keeps its own handles: <ncclnet/plugin_contract.hpp>.
//
// The macro checks the class first: each member missing, or declared with
// another signature than its form's listing, is one compile error that
// names it and spells its signature. InitArgs and CommContext, the SDK's
// types in those signatures, are in <ncclnet/plugin_types.hpp>.
//
// ---- Threads and lifetimes ----------------------------------------------
//
// Threads (contract rule 40, docs/contract.md). Any member may be called
// from any thread. Inside NCCL the application thread calls init, devices
// and getProperties; each GPU's proxy service thread calls listen, connect,
// accept, regMr, deregMr and the closes; each GPU's proxy progress thread
// calls isend, irecv, iflush, test and irecvConsumed. All GPUs of a process
// share the one object, so calls on different comms overlap, and regMr or
// deregMr on a comm overlaps the data path on that comm. The SDK locks only
// its own bookkeeping (init and finalize, the contexts, the object model's
// handle tables) and holds no lock while a member runs, create() excepted:
// state that calls on several comms share needs the class's own locks.
//
// The object. create() runs at the first init of the process, whatever the
// ABI version, and never concurrently with another create(). From v11 on,
// NCCL calls init once per communicator and finalize when it goes: the
// object is destroyed at the last finalize, and a later init creates a new
// one (rules 3 and 42). Its destructor runs outside the SDK's lock, so it
// may overlap the next create(). Tables v6 to v10 have no finalize: their
// first init keeps the object until the library is unloaded, and a second
// init finds it ready.
//
// A CommContext (listen, connect, setNetAttr): from v11 on one per init,
// valid until that init's finalize; through v6 to v10 one per traffic
// class, shared by every communicator, valid while the object lives.
//
// On the object model the SDK owns the handles, and so decides lifetimes:
//  - a request: once test() reports it done (with an error too), the SDK
//    forgets it and the class may reuse it; a receive of a comm whose
//    holdsUntilConsumed() is true stays known until irecvConsumed.
//  - a comm: close() gets its unique_ptr after the SDK forgot the handle
//    and the requests on it; the class decides when the object dies.
//  - a registration: deregMr is called, then the SDK destroys the MemHandle.
//  - when the object goes (above), what NCCL left open goes back through
//    close() first (send, receive and listen comms), and connectors and
//    registrations are destroyed.
// The void* class gets nothing back: its destructor releases what NCCL
// left open.
//
// Exceptions. One escaping a member becomes ncclInternalError and a WARN
// line, and so does a std::exception escaping create(). One thrown while
// the object is destroyed (its destructor, or the closes of what NCCL
// left open) ends the process: destructors are noexcept.
//
// ---- Error codes ----------------------------------------------------------
//
// The SDK answers on its own, with one WARN line saying why:
//  - ncclInternalError: a call before init or after the last finalize; a
//    context init did not return; a NULL ndev, props or attr; a size or
//    count the calling version's NCCL never passes (docs/abi.md, section 4);
//    properties or a virtual device the calling version cannot hold;
//    create() that returns success and no object; an exception (above);
//    on the object model, a full handle table, or a listen that wrote past
//    kPluginHandleBytes.
//  - ncclInvalidArgument, on the object model: a handle that names no live
//    object of the right kind (closed, of another kind, an mhandle of
//    another comm, a request reported done already, garbage); a NULL
//    output, NULL data, sizes or tags, or n outside 1..64; a listen,
//    connect or registration that returns success and no object.
// Every other result is the class's own and reaches NCCL unchanged; a
// failed create() is init's result. A data-path failure reaches the
// application as the code of ncclCommGetAsyncError (rule 50), so it is
// the user's first clue. <ncclnet/result_policy.hpp> gives each way of
// failing one code (ncclnet::resultOf(Failure)), which the bundled plugins
// use; docs/contract.md ("Result codes") has the table and NCCL's reasons:
//  - ncclSystemError: a local call into the OS, verbs, libfabric or the
//    CUDA driver failed, or memory ran out; init found no usable device
//    (NCCL then uses its own IB or Socket);
//  - ncclRemoteError: the peer went away, did not answer in time, or sent
//    what the protocol never sends;
//  - ncclInvalidUsage: a mistake in how the job uses the plugin: a connect
//    handle another plugin or build wrote, a knob value the knob does not
//    allow (ncclnet::ParamTable::read), a message longer than the receive
//    posted for it;
//  - ncclInvalidArgument: an argument a correct NCCL never passes: a
//    device index out of range, a buffer outside its registration;
//  - ncclInternalError: a state a correct NCCL or peer never produces: a
//    memory type ptrSupport did not offer, an iflush with every request
//    in flight (a NULL flush request would mean "nothing to flush").
// A comm keeps its first failure (<ncclnet/sticky_error.hpp>): logged
// once, then returned by every later call on it without a new line.
#pragma once

// The ABI, the contracts, then the export layer: the compiler then shows a
// failed check as included from this header, not from deep inside detail/.
#include "ncclnet/abi/net.h"  // NCCLNET_ABI_FOR_EACH_VERSION
#include "ncclnet/detail/abi_versions.hpp"

#include "ncclnet/object_model_contract.hpp"
#include "ncclnet/plugin_contract.hpp"

#include "ncclnet/detail/export_tables.hpp"
#include "ncclnet/log.hpp"  // what a class logs with
#include "ncclnet/object_model.hpp"
#include "ncclnet/params.hpp"  // ParamTable, for params()
#include "ncclnet/plugin_types.hpp"

// Checks `Impl` against the contract of its form, then defines
// ncclNetPlugin_v6 ... ncclNetPlugin_v12 for it (one table per row of
// ncclnet/detail/abi_versions.hpp). Use once per plugin library, at
// namespace scope.
#define NCCLNET_EXPORT_PLUGIN(Impl)         \
  NCCLNET_CHECK_PLUGIN_CONTRACT(Impl)       \
  NCCLNET_CHECK_OBJECT_MODEL_CONTRACT(Impl) \
  NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_DETAIL_EXPORT_TABLE, Impl)
