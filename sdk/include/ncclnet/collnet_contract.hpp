// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the CollNet class's contract (<ncclnet/collnet.hpp>),
// checked at compile time the way the net and RMA classes' are
// (<ncclnet/plugin_contract.hpp>, <ncclnet/rma_contract.hpp>): one
// static_assert per member, naming it and spelling its signature; an
// optional member with another signature fails instead of leaving its slot
// NULL; a class that fails gets empty tables, so these messages are the
// only errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ncclnet/abi/collnet.h"
#include "ncclnet/detail/member_checks.hpp"
#include "ncclnet/plugin_contract.hpp"  // declares_kName_v, declares_create_v
#include "ncclnet/plugin_types.hpp"

// X(Impl, member, (parameters)): ncclCollNet_v12_t's members with the init
// context handed to listen as a CommContext. iallgather and ireducescatter
// are required: NCCL 2.28 and newer wrap them for tables v8 to v11 whether
// or not the plugin filled them (plugin/net/net_v8.cc ... net_v11.cc,
// ncclCollNet_init), so every exported table carries them.
#define NCCLNET_DETAIL_COLLNET_REQUIRED_MEMBERS(X, Impl)                                       \
  X(Impl, devices, (int* ndev))                                                                \
  X(Impl, getProperties, (int dev, ncclNetProperties_v12_t* props))                            \
  X(Impl, listen, (const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm)) \
  X(Impl, connect,                                                                             \
    (void* const* handles, int nranks, int rank, void* listenComm, void** collComm))           \
  X(Impl, reduceSupport, (ncclDataType_t dataType, ncclRedOp_t redOp, int* supported))         \
  X(Impl, regMr, (void* collComm, void* data, size_t size, int type, void** mhandle))          \
  X(Impl, deregMr, (void* collComm, void* mhandle))                                            \
  X(Impl, iallreduce,                                                                          \
    (void* collComm, void* sendData, void* recvData, size_t count, ncclDataType_t dataType,    \
     ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle, void** request))                 \
  X(Impl, iallgather,                                                                          \
    (void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v12_t* recvParts,              \
     size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,          \
     void** request))                                                                          \
  X(Impl, ireducescatter,                                                                      \
    (void* collComm, int nSendParts, ncclNetSGE_v12_t* sendParts, void* recvData,              \
     size_t bytesPerRank, size_t windowOffset, size_t windowBytes, ncclDataType_t dataType,    \
     ncclRedOp_t redOp, void* recvMhandle, void** request))                                    \
  X(Impl, iflush, (void* collComm, void* data, int size, void* mhandle, void** request))       \
  X(Impl, test, (void* request, int* done, int* size))                                         \
  X(Impl, closeColl, (void* collComm))                                                         \
  X(Impl, closeListen, (void* listenComm))

#define NCCLNET_DETAIL_COLLNET_OPTIONAL_MEMBERS(X, Impl)                                          \
  X(Impl, regMrDmaBuf,                                                                            \
    (void* collComm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle)) \
  X(Impl, makeVDevice, (int* d, ncclNetVDeviceProps_v12_t* props))

namespace ncclnet::detail::collnet {

NCCLNET_DETAIL_COLLNET_REQUIRED_MEMBERS(NCCLNET_DETAIL_EXACT_MEMBER, _)
NCCLNET_DETAIL_COLLNET_OPTIONAL_MEMBERS(NCCLNET_DETAIL_EXACT_MEMBER, _)
NCCLNET_DETAIL_COLLNET_OPTIONAL_MEMBERS(NCCLNET_DETAIL_NAMED_MEMBER, _)

#define NCCLNET_DETAIL_AND_DECLARES(Impl, name, params) &&declares_##name##_v<Impl>
#define NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES(Impl, name, params) \
  &&(!names_##name##_v<Impl> || declares_##name##_v<Impl>)
template <class T>
constexpr bool meetsContract_v = std::is_class_v<T>&& ::ncclnet::detail::declares_kName_v<
    T>&& ::ncclnet::detail::declares_create_v<T>
    NCCLNET_DETAIL_COLLNET_REQUIRED_MEMBERS(NCCLNET_DETAIL_AND_DECLARES, T)
        NCCLNET_DETAIL_COLLNET_OPTIONAL_MEMBERS(NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES, T);
#undef NCCLNET_DETAIL_AND_DECLARES
#undef NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES

// The optional members the class offers: the others' slots are NULL. NCCL's
// adapters keep a NULL makeVDevice NULL (plugin/net/net_v9.cc ...
// net_v11.cc, ncclCollNet_init); NCCL calls regMrDmaBuf whenever
// getProperties says NCCL_PTR_DMABUF (transport/coll_net.cc,
// sendProxySetup), so without it the SDK clears that bit.
template <class T>
constexpr bool offersDmaBuf_v = declares_regMrDmaBuf_v<T>;
template <class T>
constexpr bool offersMakeVDevice_v = declares_makeVDevice_v<T>;

}  // namespace ncclnet::detail::collnet

#define NCCLNET_DETAIL_REQUIRE_COLLNET_MEMBER(Impl, name, params)      \
  static_assert(::ncclnet::detail::collnet::declares_##name##_v<Impl>, \
                #Impl " must declare: ncclResult_t " #name #params);
#define NCCLNET_DETAIL_CHECK_OPTIONAL_COLLNET_MEMBER(Impl, name, params)   \
  static_assert(!::ncclnet::detail::collnet::names_##name##_v<Impl> ||     \
                    ::ncclnet::detail::collnet::declares_##name##_v<Impl>, \
                #Impl " declares the optional " #name                      \
                      " with another signature; it must be: ncclResult_t " #name #params);

// Checks `Impl` against the CollNet contract, at namespace scope.
// NCCLNET_EXPORT_COLLNET_PLUGIN runs it.
#define NCCLNET_CHECK_COLLNET_CONTRACT(Impl)                                           \
  static_assert(std::is_class_v<Impl>, #Impl " must be a class");                      \
  static_assert(::ncclnet::detail::declares_kName_v<Impl>,                             \
                #Impl " must declare: static constexpr const char* kName");            \
  static_assert(::ncclnet::detail::declares_create_v<Impl>, #Impl                      \
                " must declare: static ncclResult_t create(const ncclnet::InitArgs& "  \
                "args, std::unique_ptr<" #Impl ">* out)");                             \
  NCCLNET_DETAIL_COLLNET_REQUIRED_MEMBERS(NCCLNET_DETAIL_REQUIRE_COLLNET_MEMBER, Impl) \
  NCCLNET_DETAIL_COLLNET_OPTIONAL_MEMBERS(NCCLNET_DETAIL_CHECK_OPTIONAL_COLLNET_MEMBER, Impl)
