// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the void* plugin class, and its contract checked at compile
// time. This is the advanced form: NCCL's interface itself, where every
// comm, registration and request NCCL holds is the plugin's own pointer,
// and the plugin looks each one up, checks it and frees it. The object
// model (<ncclnet/object_model.hpp>) does that for a plugin; the bundled
// plugins use it. What both forms share (export, threads, lifetimes, error
// codes) is in <ncclnet/plugin.hpp>.
//
// The class, in full (the last five members are optional: leave one out and
// its slot is NULL in every table, which NCCL reads as "not supported"):
//
//   class MyNet {
//    public:
//     static constexpr const char* kName = "my-net";   // NCCL_NET matches this
//     static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<MyNet>* out);
//     ncclResult_t devices(int* ndev);
//     ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
//     ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
//                         void** listenComm);
//     ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,
//                          ncclNetDeviceHandle_v12_t** sendDevComm);
//     ncclResult_t accept(void* listenComm, void** recvComm,
//                         ncclNetDeviceHandle_v12_t** recvDevComm);
//     ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
//     ncclResult_t deregMr(void* comm, void* mhandle);
//     ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
//                        void* phandle, void** request);
//     ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
//                        void** mhandles, void** phandles, void** request);
//     ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
//                         void** request);
//     ncclResult_t test(void* request, int* done, int* sizes);
//     ncclResult_t closeSend(void* sendComm);
//     ncclResult_t closeRecv(void* recvComm);
//     ncclResult_t closeListen(void* listenComm);
//     // optional:
//     ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
//                              int fd, void** mhandle);
//     ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr_mhandle);
//     ncclResult_t irecvConsumed(void* recvComm, int n, void* request);
//     ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
//     ncclResult_t setNetAttr(const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr);
//     // optional, for tools: every knob the plugin read (ncclnet-info --params)
//     const ncclnet::ParamTable& params() const;
//   };
//
// NCCLNET_EXPORT_PLUGIN(MyNet) runs NCCLNET_CHECK_PLUGIN_CONTRACT(MyNet)
// first. Each member above gets one static_assert whose message names the
// member and spells its exact ncclNet_v12 signature:
//
//   error: static assertion failed: MyNet must declare: ncclResult_t
//          isend(void* sendComm, void* data, size_t size, int tag, ...)
//
// Signatures must match exactly: a member is checked by taking its address
// as a pointer to a member function of exactly that type, which allows no
// implicit conversion of a parameter (an `int size` isend does not pass,
// while a call with that int would have compiled and narrowed sizes above
// 2 GiB). A member may also be const or noexcept. An optional member that is
// declared with another signature fails too, instead of silently leaving its
// slot NULL. When the contract fails the SDK builds no tables, so these
// messages are the only errors.
#pragma once

#include <memory>
#include <type_traits>

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/member_checks.hpp"
#include "ncclnet/object_model.hpp"
#include "ncclnet/plugin_types.hpp"

namespace ncclnet {
class ParamTable;
}  // namespace ncclnet

// X(Impl, member, (parameters)) for every member returning ncclResult_t:
// the required ones, then the optional ones. The parameter lists are
// ncclNet_v12_t's (abi/net_v12.h) with v11+'s init context handed over as a
// CommContext, and are what the error messages print.
#define NCCLNET_DETAIL_REQUIRED_MEMBERS(X, Impl)                                                \
  X(Impl, devices, (int* ndev))                                                                 \
  X(Impl, getProperties, (int dev, ncclNetProperties_v12_t* props))                             \
  X(Impl, listen, (const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm))  \
  X(Impl, connect,                                                                              \
    (const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,                   \
     ncclNetDeviceHandle_v12_t** sendDevComm))                                                  \
  X(Impl, accept, (void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm)) \
  X(Impl, regMr, (void* comm, void* data, size_t size, int type, void** mhandle))               \
  X(Impl, deregMr, (void* comm, void* mhandle))                                                 \
  X(Impl, isend,                                                                                \
    (void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,            \
     void** request))                                                                           \
  X(Impl, irecv,                                                                                \
    (void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,             \
     void** phandles, void** request))                                                          \
  X(Impl, iflush,                                                                               \
    (void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request))          \
  X(Impl, test, (void* request, int* done, int* sizes))                                         \
  X(Impl, closeSend, (void* sendComm))                                                          \
  X(Impl, closeRecv, (void* recvComm))                                                          \
  X(Impl, closeListen, (void* listenComm))

#define NCCLNET_DETAIL_OPTIONAL_MEMBERS(X, Impl)                                              \
  X(Impl, regMrDmaBuf,                                                                        \
    (void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle)) \
  X(Impl, getDeviceMr, (void* comm, void* mhandle, void** dptr_mhandle))                      \
  X(Impl, irecvConsumed, (void* recvComm, int n, void* request))                              \
  X(Impl, makeVDevice, (int* d, ncclNetVDeviceProps_v12_t* props))                            \
  X(Impl, setNetAttr, (const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr))

namespace ncclnet::detail {

// The members that do not return ncclResult_t.
template <class T, class = void>
struct declaresName : std::false_type {};
template <class T>  // static: the address of a static member is a plain pointer
struct declaresName<T, std::enable_if_t<std::is_pointer_v<decltype(&T::kName)> &&
                                        std::is_convertible_v<decltype(T::kName), const char*>>>
    : std::true_type {};
template <class T>
constexpr bool declares_kName_v = declaresName<T>::value;

template <class T, class = void>
struct declaresCreate : std::false_type {};
template <class T>
struct declaresCreate<
    T, std::void_t<decltype(static_cast<ncclResult_t (*)(const InitArgs& args,
                                                         std::unique_ptr<T>* out)>(&T::create))>>
    : std::true_type {};
template <class T>
constexpr bool declares_create_v = declaresCreate<T>::value;

template <class T, class = void>
struct exact_params : std::false_type {};
template <class T>
struct exact_params<T, std::void_t<decltype(static_cast<const ParamTable& (T::*)()>(&T::params))>>
    : std::true_type {};
template <class T, class = void>
struct exactConst_params : std::false_type {};
template <class T>
struct exactConst_params<
    T, std::void_t<decltype(static_cast<const ParamTable& (T::*)() const>(&T::params))>>
    : std::true_type {};
template <class T>
constexpr bool declares_params_v = exact_params<T>::value || exactConst_params<T>::value;

NCCLNET_DETAIL_REQUIRED_MEMBERS(NCCLNET_DETAIL_EXACT_MEMBER, _)
NCCLNET_DETAIL_OPTIONAL_MEMBERS(NCCLNET_DETAIL_EXACT_MEMBER, _)
NCCLNET_DETAIL_OPTIONAL_MEMBERS(NCCLNET_DETAIL_NAMED_MEMBER, _)
NCCLNET_DETAIL_NAMED_MEMBER(_, params, ())

// The whole contract: the SDK builds tables only from a class that meets
// it, so a failed check is followed by no error from inside the adapters.
#define NCCLNET_DETAIL_AND_DECLARES(Impl, name, params) &&declares_##name##_v<Impl>
#define NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES(Impl, name, params) \
  &&(!names_##name##_v<Impl> || declares_##name##_v<Impl>)
template <class T>
constexpr bool meetsContract_v =
    std::is_class_v<T>&& declares_kName_v<T>&& declares_create_v<T> NCCLNET_DETAIL_REQUIRED_MEMBERS(
        NCCLNET_DETAIL_AND_DECLARES, T)
        NCCLNET_DETAIL_OPTIONAL_MEMBERS(NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES, T) &&
    (!names_params_v<T> || declares_params_v<T>);
#undef NCCLNET_DETAIL_AND_DECLARES
#undef NCCLNET_DETAIL_AND_ABSENT_OR_DECLARES

}  // namespace ncclnet::detail

// One static_assert per member, each naming the member and its signature.
// They are spelled here, in a public header, because this is the file a
// failing check points at.
// (A class on the object model, <ncclnet/object_model.hpp>, has a contract
// of its own: these pass it.)
#define NCCLNET_DETAIL_REQUIRE_MEMBER(Impl, name, params)                                 \
  static_assert(                                                                          \
      ::ncclnet::usesObjectModel_v<Impl> || ::ncclnet::detail::declares_##name##_v<Impl>, \
      #Impl " must declare: ncclResult_t " #name #params);
#define NCCLNET_DETAIL_CHECK_OPTIONAL_MEMBER(Impl, name, params)  \
  static_assert(::ncclnet::usesObjectModel_v<Impl> ||             \
                    !::ncclnet::detail::names_##name##_v<Impl> || \
                    ::ncclnet::detail::declares_##name##_v<Impl>, \
                #Impl " declares the optional " #name             \
                      " with another signature; it must be: ncclResult_t " #name #params);

// Checks `Impl` against the contract above, at namespace scope.
// NCCLNET_EXPORT_PLUGIN runs it; a plugin's own tests may too.
#define NCCLNET_CHECK_PLUGIN_CONTRACT(Impl)                                                       \
  static_assert(std::is_class_v<Impl>, #Impl " must be a class");                                 \
  static_assert(::ncclnet::detail::declares_kName_v<Impl>, #Impl                                  \
                " must declare: static constexpr const char* kName (the name NCCL_NET matches)"); \
  static_assert(::ncclnet::detail::declares_create_v<Impl>, #Impl                                 \
                " must declare: static ncclResult_t create(const ncclnet::InitArgs& "             \
                "args, std::unique_ptr<" #Impl ">* out)");                                        \
  NCCLNET_DETAIL_REQUIRED_MEMBERS(NCCLNET_DETAIL_REQUIRE_MEMBER, Impl)                            \
  NCCLNET_DETAIL_OPTIONAL_MEMBERS(NCCLNET_DETAIL_CHECK_OPTIONAL_MEMBER, Impl)                     \
  static_assert(                                                                                  \
      !::ncclnet::detail::names_params_v<Impl> || ::ncclnet::detail::declares_params_v<Impl>,     \
      #Impl                                                                                       \
      " declares the optional params with another signature; it must be: "                        \
      "const ncclnet::ParamTable& params() const");
