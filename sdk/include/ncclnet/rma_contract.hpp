// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the RMA class's contract (<ncclnet/rma.hpp>), checked at
// compile time the way the net class's is (<ncclnet/plugin_contract.hpp>):
// one static_assert per member, naming it and spelling its signature; an
// optional member with another signature fails instead of leaving its slot
// NULL; a class that fails gets empty tables, so these messages are the
// only errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/member_checks.hpp"
#include "ncclnet/plugin_contract.hpp"  // declares_kName_v, declares_create_v
#include "ncclnet/rma_types.hpp"

// X(Impl, member, (parameters)): ncclRma_v14_t's members with the init
// context handed over as a CommContext and the signal as an RmaSignal.
#define NCCLNET_DETAIL_RMA_REQUIRED_MEMBERS(X, Impl)                                             \
  X(Impl, devices, (int* ndev))                                                                  \
  X(Impl, getProperties, (int dev, ncclNetProperties_v12_t* props))                              \
  X(Impl, listen, (const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm))   \
  X(Impl, connect,                                                                               \
    (const ncclnet::CommContext& ctx, void* const* handles, int nranks, int rank,                \
     void* listenComm, void** collComm))                                                         \
  X(Impl, createContext, (void* collComm, const ncclnet::RmaConfig& config, void** rmaCtx))      \
  X(Impl, regMrSym,                                                                              \
    (void* collComm, void* data, size_t size, int type, uint64_t mrFlags, void** mhandle))       \
  X(Impl, deregMrSym, (void* collComm, void* mhandle))                                           \
  X(Impl, destroyContext, (void* rmaCtx))                                                        \
  X(Impl, closeColl, (void* collComm))                                                           \
  X(Impl, closeListen, (void* listenComm))                                                       \
  X(Impl, iput,                                                                                  \
    (void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size, uint64_t dstOff, \
     void* dstMhandle, uint32_t rank, void** request))                                           \
  X(Impl, iputSignal,                                                                            \
    (void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle, size_t size, uint64_t dstOff, \
     void* dstMhandle, uint32_t rank, const ncclnet::RmaSignal& signal, void** request))         \
  X(Impl, iget,                                                                                  \
    (void* rmaCtx, int context, uint64_t remoteOff, void* remoteMhandle, size_t size,            \
     uint64_t localOff, void* localMhandle, uint32_t rank, void** request))                      \
  X(Impl, iflush, (void* rmaCtx, int context, void* mhandle, uint32_t rank, void** request))     \
  X(Impl, test, (void* collComm, void* request, int* done))                                      \
  X(Impl, queryLastError, (void* rmaCtx, bool* hasError))

#define NCCLNET_DETAIL_RMA_OPTIONAL_MEMBERS(X, Impl)                                               \
  X(Impl, regMrSymDmaBuf,                                                                          \
    (void* collComm, void* data, size_t size, int type, uint64_t offset, int fd, uint64_t mrFlags, \
     void** mhandle))                                                                              \
  X(Impl, progress, (void* rmaCtx))

namespace ncclnet::detail::rma {

NCCLNET_DETAIL_RMA_REQUIRED_MEMBERS(NCCLNET_DETAIL_EXACT_MEMBER, _)
NCCLNET_DETAIL_RMA_OPTIONAL_MEMBERS(NCCLNET_DETAIL_EXACT_MEMBER, _)
NCCLNET_DETAIL_RMA_OPTIONAL_MEMBERS(NCCLNET_DETAIL_NAMED_MEMBER, _)

#define NCCLNET_DETAIL_AND_DECLARES(Impl, name, params) &&declares_##name##_v<Impl>
#define NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES(Impl, name, params) \
  &&(!names_##name##_v<Impl> || declares_##name##_v<Impl>)
template <class T>
constexpr bool meetsContract_v = std::is_class_v<T>&& ::ncclnet::detail::declares_kName_v<
    T>&& ::ncclnet::detail::declares_create_v<T>
    NCCLNET_DETAIL_RMA_REQUIRED_MEMBERS(NCCLNET_DETAIL_AND_DECLARES, T)
        NCCLNET_DETAIL_RMA_OPTIONAL_MEMBERS(NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES, T);
#undef NCCLNET_DETAIL_AND_DECLARES
#undef NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES

// The optional members the class offers: the others' slots are NULL.
template <class T>
constexpr bool offersProgress_v = declares_progress_v<T>;
template <class T>
constexpr bool offersDmaBuf_v = declares_regMrSymDmaBuf_v<T>;

}  // namespace ncclnet::detail::rma

#define NCCLNET_DETAIL_REQUIRE_RMA_MEMBER(Impl, name, params)      \
  static_assert(::ncclnet::detail::rma::declares_##name##_v<Impl>, \
                #Impl " must declare: ncclResult_t " #name #params);
#define NCCLNET_DETAIL_CHECK_OPTIONAL_RMA_MEMBER(Impl, name, params)   \
  static_assert(!::ncclnet::detail::rma::names_##name##_v<Impl> ||     \
                    ::ncclnet::detail::rma::declares_##name##_v<Impl>, \
                #Impl " declares the optional " #name                  \
                      " with another signature; it must be: ncclResult_t " #name #params);

// Checks `Impl` against the RMA contract, at namespace scope.
// NCCLNET_EXPORT_RMA_PLUGIN runs it.
#define NCCLNET_CHECK_RMA_CONTRACT(Impl)                                              \
  static_assert(std::is_class_v<Impl>, #Impl " must be a class");                     \
  static_assert(::ncclnet::detail::declares_kName_v<Impl>,                            \
                #Impl " must declare: static constexpr const char* kName");           \
  static_assert(::ncclnet::detail::declares_create_v<Impl>, #Impl                     \
                " must declare: static ncclResult_t create(const ncclnet::InitArgs& " \
                "args, std::unique_ptr<" #Impl ">* out)");                            \
  NCCLNET_DETAIL_RMA_REQUIRED_MEMBERS(NCCLNET_DETAIL_REQUIRE_RMA_MEMBER, Impl)        \
  NCCLNET_DETAIL_RMA_OPTIONAL_MEMBERS(NCCLNET_DETAIL_CHECK_OPTIONAL_RMA_MEMBER, Impl)
