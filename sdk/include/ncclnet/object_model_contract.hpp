// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the object-model plugin class's contract, checked at compile
// time the way <ncclnet/plugin_contract.hpp> checks a void* plugin: one
// static_assert per member, naming it and spelling its exact signature.
#pragma once

#include <memory>
#include <type_traits>

#include "ncclnet/abi/net.h"
#include "ncclnet/object_model.hpp"
#include "ncclnet/plugin_contract.hpp"  // names_<optional member>_v

// X(Impl, id, member, (parameters)): `id` tells overloads apart.
#define NCCLNET_DETAIL_OBJECT_REQUIRED_MEMBERS(X, Impl)                                        \
  X(Impl, devices, devices, (int* ndev))                                                       \
  X(Impl, getProperties, getProperties, (int dev, ncclNetProperties_v12_t* props))             \
  X(Impl, listen, listen,                                                                      \
    (const ncclnet::CommContext& ctx, int dev, void* handle,                                   \
     std::unique_ptr<typename Impl::ListenComm>* out))                                         \
  X(Impl, connect, connect,                                                                    \
    (const ncclnet::CommContext& ctx, int dev, const void* handle,                             \
     std::unique_ptr<typename Impl::Connector>* out))                                          \
  X(Impl, connectStep, connectStep,                                                            \
    (typename Impl::Connector & connector, std::unique_ptr<typename Impl::SendComm> * out,     \
     ncclNetDeviceHandle_v12_t * *sendDevComm))                                                \
  X(Impl, accept, accept,                                                                      \
    (typename Impl::ListenComm & listen, std::unique_ptr<typename Impl::RecvComm> * out,       \
     ncclNetDeviceHandle_v12_t * *recvDevComm))                                                \
  X(Impl, regMr, regMr,                                                                        \
    (ncclnet::DataComm<Impl> comm, void* data, size_t size, int type,                          \
     std::unique_ptr<typename Impl::MemHandle>* out))                                          \
  X(Impl, deregMr, deregMr, (ncclnet::DataComm<Impl> comm, typename Impl::MemHandle & mh))     \
  X(Impl, isend, isend,                                                                        \
    (typename Impl::SendComm & comm, void* data, size_t size, int tag,                         \
     typename Impl::MemHandle* mh, void* phandle, typename Impl::Request** request))           \
  X(Impl, irecv, irecv,                                                                        \
    (typename Impl::RecvComm & comm, int n, void** data, size_t* sizes, int* tags,             \
     typename Impl::MemHandle** mhs, void** phandles, typename Impl::Request** request))       \
  X(Impl, iflush, iflush,                                                                      \
    (typename Impl::RecvComm & comm, int n, void** data, int* sizes,                           \
     typename Impl::MemHandle** mhs, typename Impl::Request** request))                        \
  X(Impl, testSend, test,                                                                      \
    (typename Impl::SendComm & comm, typename Impl::Request & request, int* done, int* sizes)) \
  X(Impl, testRecv, test,                                                                      \
    (typename Impl::RecvComm & comm, typename Impl::Request & request, int* done, int* sizes)) \
  X(Impl, closeSend, close, (std::unique_ptr<typename Impl::SendComm> comm))                   \
  X(Impl, closeRecv, close, (std::unique_ptr<typename Impl::RecvComm> comm))                   \
  X(Impl, closeListen, close, (std::unique_ptr<typename Impl::ListenComm> comm))

#define NCCLNET_DETAIL_OBJECT_OPTIONAL_MEMBERS(X, Impl)                                        \
  X(Impl, regMrDmaBuf, regMrDmaBuf,                                                            \
    (ncclnet::DataComm<Impl> comm, void* data, size_t size, int type, uint64_t offset, int fd, \
     std::unique_ptr<typename Impl::MemHandle>* out))                                          \
  X(Impl, getDeviceMr, getDeviceMr,                                                            \
    (ncclnet::DataComm<Impl> comm, typename Impl::MemHandle & mh, void** dptr_mhandle))        \
  X(Impl, irecvConsumed, irecvConsumed,                                                        \
    (typename Impl::RecvComm & comm, int n, typename Impl::Request* request))                  \
  X(Impl, makeVDevice, makeVDevice, (int* d, ncclNetVDeviceProps_v12_t* props))                \
  X(Impl, setNetAttr, setNetAttr, (const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr))

namespace ncclnet::detail::object {

// declares_<id>_v<T>: T has the member with exactly that signature (or its
// const variant).
#define NCCLNET_DETAIL_OBJECT_EXACT(Impl, id, name, params)                                        \
  template <class Impl, class = void>                                                              \
  struct exact_##id : std::false_type {};                                                          \
  template <class Impl>                                                                            \
  struct exact_##id<Impl,                                                                          \
                    std::void_t<decltype(static_cast<ncclResult_t(Impl::*) params>(&Impl::name))>> \
      : std::true_type {};                                                                         \
  template <class Impl, class = void>                                                              \
  struct exactConst_##id : std::false_type {};                                                     \
  template <class Impl>                                                                            \
  struct exactConst_##id<                                                                          \
      Impl, std::void_t<decltype(static_cast<ncclResult_t(Impl::*) params const>(&Impl::name))>>   \
      : std::true_type {};                                                                         \
  template <class Impl>                                                                            \
  constexpr bool declares_##id##_v = exact_##id<Impl>::value || exactConst_##id<Impl>::value;

NCCLNET_DETAIL_OBJECT_REQUIRED_MEMBERS(NCCLNET_DETAIL_OBJECT_EXACT, _)
NCCLNET_DETAIL_OBJECT_OPTIONAL_MEMBERS(NCCLNET_DETAIL_OBJECT_EXACT, _)
#undef NCCLNET_DETAIL_OBJECT_EXACT

// holdsUntilConsumed: asked of a receive comm when irecvConsumed exists.
template <class T, class = void>
struct declaresHolds : std::false_type {};
template <class T>
struct declaresHolds<
    T, std::void_t<decltype(static_cast<bool (T::*)() const>(&T::holdsUntilConsumed))>>
    : std::true_type {};

#define NCCLNET_DETAIL_OBJECT_AND_DECLARES(Impl, id, name, params) &&declares_##id##_v<Impl>
#define NCCLNET_DETAIL_OBJECT_AND_ABSENT_OR_DECLARES(Impl, id, name, params) \
  &&(!names_##id##_v<Impl> || declares_##id##_v<Impl>)
template <class T>
constexpr bool holdsDeclaredIfNeeded() {
  if constexpr (declares_irecvConsumed_v<T>) {
    return declaresHolds<typename T::RecvComm>::value;
  } else {
    return true;
  }
}
// The whole contract: only a class that meets it is adapted.
template <class T>
constexpr bool meetsContract_v =
    usesObjectModel_v<T> NCCLNET_DETAIL_OBJECT_REQUIRED_MEMBERS(NCCLNET_DETAIL_OBJECT_AND_DECLARES,
                                                                T)
        NCCLNET_DETAIL_OBJECT_OPTIONAL_MEMBERS(NCCLNET_DETAIL_OBJECT_AND_ABSENT_OR_DECLARES, T) &&
    holdsDeclaredIfNeeded<T>();
#undef NCCLNET_DETAIL_OBJECT_AND_DECLARES
#undef NCCLNET_DETAIL_OBJECT_AND_ABSENT_OR_DECLARES

}  // namespace ncclnet::detail::object

#define NCCLNET_DETAIL_OBJECT_REQUIRE(Impl, id, name, params)                                    \
  static_assert(                                                                                 \
      !::ncclnet::usesObjectModel_v<Impl> || ::ncclnet::detail::object::declares_##id##_v<Impl>, \
      #Impl " (object model) must declare: ncclResult_t " #name #params);
#define NCCLNET_DETAIL_OBJECT_CHECK_OPTIONAL(Impl, id, name, params)                               \
  static_assert(!::ncclnet::usesObjectModel_v<Impl> || !::ncclnet::detail::names_##id##_v<Impl> || \
                    ::ncclnet::detail::object::declares_##id##_v<Impl>,                            \
                #Impl " (object model) declares the optional " #name                               \
                      " with another signature; it must be: ncclResult_t " #name #params);

// Checks an object-model class; passes any other class (the void* contract
// checks those).
#define NCCLNET_CHECK_OBJECT_MODEL_CONTRACT(Impl)                                             \
  NCCLNET_DETAIL_OBJECT_REQUIRED_MEMBERS(NCCLNET_DETAIL_OBJECT_REQUIRE, Impl)                 \
  NCCLNET_DETAIL_OBJECT_OPTIONAL_MEMBERS(NCCLNET_DETAIL_OBJECT_CHECK_OPTIONAL, Impl)          \
  static_assert(!::ncclnet::usesObjectModel_v<Impl> ||                                        \
                    ::ncclnet::detail::object::holdsDeclaredIfNeeded<Impl>(),                 \
                #Impl "::RecvComm must declare bool holdsUntilConsumed() const, since " #Impl \
                      " declares irecvConsumed");
