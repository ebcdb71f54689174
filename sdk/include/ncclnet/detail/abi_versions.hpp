// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: what differs between the ABI versions v6..v12, one row per
// version, and the refusals NCCL's compat layer applies at the edge of each
// table. The export tables and ncclnet-check's tables (both shaped by
// net_table.hpp), and the host import view (ncclnet/host/imported_net.hpp)
// take every limit and every slot decision from here, so the three cannot
// disagree on what a version accepts; the agreement test
// (tools/ncclnet-check/tests/abi_edge_test.cc) feeds edge values through
// all three for every row. They read a row as kAbi<V> and its C types as
// AbiTypes<V>, so a test may add a row of its own by specializing both
// (sdk/tests/abi_row_roundtrip_test.cc); docs/architecture.md lists what a
// real new version touches.
//
// NCCL source of each row: src/plugin/net/net_v<N>.cc (2.28, 2.30), the
// shim that adapts a v<N> plugin to NCCL's core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ncclnet/abi/net.h"
#include "ncclnet/c/abi_limits.h"

#pragma GCC visibility push(hidden)

namespace ncclnet {

// Largest n a grouped receive carries through any NCCL (NCCL_PROXY_MAX_SUBS).
constexpr int kMaxGroupedRecvs = NCCLNET_MAX_GROUPED_RECVS;

namespace detail {

constexpr int kOldestAbi = NCCLNET_ABI_OLDEST;
constexpr int kNewestAbi = NCCLNET_ABI_NEWEST;

struct AbiVersion {
  int version;
  // NCCL 2.<minor> is the first release that loads this version (its
  // ncclNetPluginLoad probes ncclNetPlugin_v<version>).
  int firstNcclMinor;
  // isend/irecv carry int sizes (v6..v8). NCCL's ncclNet_isend and
  // ncclNet_irecv (net_v6.cc .. net_v8.cc) refuse a size above
  // maxMessageSize; v9+ pass size_t through unchecked (net_v9.cc).
  bool intMessageSizes;
  size_t maxMessageSize;
  // regMr carries an int size (v6, v7): ncclNet_regMr (net_v6.cc, net_v7.cc)
  // refuses `size >= 1UL << 31`. v8 made it size_t and passes it through.
  bool intRegMrSize;
  size_t maxRegMrSize;
  // irecv's n must lie in 1..kMaxGroupedRecvs: the int-size shims copy the
  // sizes into an array of NCCL_PROXY_MAX_SUBS entries (ncclNet_irecv).
  bool boundsRecvCount;
  // Members and arguments, in the order the versions added them.
  bool deviceHandles;  // v7: device handles of connect/accept, getDeviceMr, irecvConsumed
  bool makeVDevice;    // v9: makeVDevice (net_v9.cc ncclNet_makeVDevice)
  bool profiler;       // v10: init takes the profiler callback, isend/irecv phandles
  bool connectConfig;  // v10 only: connect takes the traffic class (net_v10.cc ncclNet_connect)
  bool perCommInit;    // v11: init per communicator with a ctx, finalize, setNetAttr
};

namespace abi_rows {
constexpr size_t kUnbounded = SIZE_MAX;
constexpr size_t kIntMessage = NCCLNET_INT_MESSAGE_SIZE_MAX;
constexpr size_t kIntRegMr = NCCLNET_INT_REGMR_SIZE_MAX;
}  // namespace abi_rows

// clang-format off
inline constexpr AbiVersion kAbiVersions[] = {
  // v NCCL intMsg maxMessageSize          intReg maxRegMrSize            boundN devH   vdev   prof   cfg    perComm
  { 6, 13, true,  abi_rows::kIntMessage,  true,  abi_rows::kIntRegMr,    true,  false, false, false, false, false},
  { 7, 19, true,  abi_rows::kIntMessage,  true,  abi_rows::kIntRegMr,    true,  true,  false, false, false, false},
  { 8, 20, true,  abi_rows::kIntMessage,  false, abi_rows::kUnbounded,   true,  true,  false, false, false, false},
  { 9, 24, false, abi_rows::kUnbounded,   false, abi_rows::kUnbounded,   false, true,  true,  false, false, false},
  {10, 26, false, abi_rows::kUnbounded,   false, abi_rows::kUnbounded,   false, true,  true,  true,  true,  false},
  {11, 28, false, abi_rows::kUnbounded,   false, abi_rows::kUnbounded,   false, true,  true,  true,  false, true },
  {12, 30, false, abi_rows::kUnbounded,   false, abi_rows::kUnbounded,   false, true,  true,  true,  false, true },
};
// clang-format on

constexpr int kAbiVersionCount = kNewestAbi - kOldestAbi + 1;
static_assert(sizeof(kAbiVersions) / sizeof(kAbiVersions[0]) == kAbiVersionCount);

constexpr const AbiVersion& abiVersion(int version) {
  return kAbiVersions[version - kOldestAbi];
}
template <int V>
inline constexpr AbiVersion kAbi = kAbiVersions[V - kOldestAbi];

// The newest version NCCL 2.<minor> loads (it loads every older one too).
constexpr int newestAbiOfNccl(int minor) {
  int newest = 0;
  for (const AbiVersion& abi : kAbiVersions) {
    if (abi.firstNcclMinor <= minor) newest = abi.version;
  }
  return newest;
}

// Calls f(std::integral_constant<int, V>{}) for the row V == version and
// returns what f returns; R{} for a version outside the table.
template <class R, int V = kOldestAbi, class F>
R withAbiVersion(int version, F&& f) {
  if constexpr (V > kNewestAbi) {
    return R{};
  } else {
    if (version == V) return f(std::integral_constant<int, V>{});
    return withAbiVersion<R, V + 1>(version, std::forward<F>(f));
  }
}

// The C types of each version.
template <int V>
struct AbiTypes;
template <>
struct AbiTypes<6> {
  using Net = ncclNet_v6_t;
  using Props = ncclNetProperties_v6_t;
};
template <>
struct AbiTypes<7> {
  using Net = ncclNet_v7_t;
  using Props = ncclNetProperties_v7_t;
};
template <>
struct AbiTypes<8> {
  using Net = ncclNet_v8_t;
  using Props = ncclNetProperties_v8_t;
};
template <>
struct AbiTypes<9> {
  using Net = ncclNet_v9_t;
  using Props = ncclNetProperties_v9_t;
  using VProps = ncclNetVDeviceProps_v9_t;
};
template <>
struct AbiTypes<10> {
  using Net = ncclNet_v10_t;
  using Props = ncclNetProperties_v10_t;
  using VProps = ncclNetVDeviceProps_v10_t;
};
template <>
struct AbiTypes<11> {
  using Net = ncclNet_v11_t;
  using Props = ncclNetProperties_v11_t;
  using VProps = ncclNetVDeviceProps_v11_t;
};
template <>
struct AbiTypes<12> {
  using Net = ncclNet_v12_t;
  using Props = ncclNetProperties_v12_t;
  using VProps = ncclNetVDeviceProps_v12_t;
};

// Each row is checked against the ABI headers: a row that says int sizes
// where the header says size_t (or the reverse) does not compile.
template <size_t I, class F>
struct ArgOf;
template <size_t I, class R, class... A>
struct ArgOf<I, R (*)(A...)> {
  using type = std::tuple_element_t<I, std::tuple<A...>>;
};
template <int V>
constexpr bool rowMatchesHeaders() {
  using Net = typename AbiTypes<V>::Net;
  constexpr AbiVersion abi = kAbi<V>;
  return abi.version == V &&
         std::is_same_v<typename ArgOf<2, decltype(Net::isend)>::type, int> ==
             abi.intMessageSizes &&
         std::is_same_v<typename ArgOf<3, decltype(Net::irecv)>::type, int*> ==
             abi.intMessageSizes &&
         std::is_same_v<typename ArgOf<2, decltype(Net::regMr)>::type, int> == abi.intRegMrSize &&
         abi.boundsRecvCount == abi.intMessageSizes &&
         (abi.maxMessageSize == abi_rows::kIntMessage) == abi.intMessageSizes &&
         (abi.maxRegMrSize == abi_rows::kIntRegMr) == abi.intRegMrSize;
}
// Rows in version order, each first loaded by a later NCCL than the last.
constexpr bool rowsAscend() {
  for (int i = 1; i < kAbiVersionCount; i++) {
    if (kAbiVersions[i].version != kAbiVersions[i - 1].version + 1) return false;
    if (kAbiVersions[i].firstNcclMinor <= kAbiVersions[i - 1].firstNcclMinor) return false;
  }
  return kAbiVersions[0].version == kOldestAbi;
}
static_assert(rowsAscend());

// NCCLNET_ABI_FOR_EACH_VERSION (abi/net.h) lists exactly the rows.
#define NCCLNET_DETAIL_LISTED_VERSION(unused, N) N,
inline constexpr int kListedAbiVersions[] = {
    NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_DETAIL_LISTED_VERSION, ~)};
#undef NCCLNET_DETAIL_LISTED_VERSION
constexpr bool listMatchesRows() {
  if (sizeof(kListedAbiVersions) / sizeof(int) != kAbiVersionCount) return false;
  for (int i = 0; i < kAbiVersionCount; i++) {
    if (kListedAbiVersions[i] != kAbiVersions[i].version) return false;
  }
  return kAbiVersions[kAbiVersionCount - 1].version == kNewestAbi;
}
static_assert(listMatchesRows());
template <int... I>
constexpr bool everyRowMatchesHeaders(std::integer_sequence<int, I...>) {
  return (rowMatchesHeaders<kOldestAbi + I>() && ...);
}
static_assert(everyRowMatchesHeaders(std::make_integer_sequence<int, kAbiVersionCount>{}));

// ---- the refusals ---------------------------------------------------------
// Each returns nullptr when NCCL would pass the call on, otherwise why not,
// for the one log line the refusing side writes. A refused call returns
// ncclInternalError, as NCCL's compat layer does.

// A size_t isend/irecv size, as NCCL's core hands it to the table.
constexpr const char* refuseMessageSize(const AbiVersion& abi, size_t size) {
  return size > abi.maxMessageSize
             ? "size above MAX_NET_SIZE, the largest message NCCL gives an int-size table"
             : nullptr;
}
// A size_t regMr size, as NCCL's core hands it to the table.
constexpr const char* refuseRegMrSize(const AbiVersion& abi, size_t size) {
  return size > abi.maxRegMrSize ? "size does not fit regMr's int size of this ABI version"
                                 : nullptr;
}
// An int size arriving at an int-size table. NCCL narrows a size it has
// bounded, so a negative value (or one above the bound) is a caller bug.
constexpr const char* refuseIntSize(int size, size_t max) {
  if (size < 0) return "negative size";
  return static_cast<size_t>(size) > max ? "size above what NCCL passes to this ABI version"
                                         : nullptr;
}
constexpr const char* refuseRecvCount(const AbiVersion& abi, int n) {
  return abi.boundsRecvCount && (n < 1 || n > kMaxGroupedRecvs) ? "n outside 1..NCCL_PROXY_MAX_SUBS"
                                                                : nullptr;
}

// An int-size irecv's sizes for the size_t interface (export side, checker):
// `out` holds kMaxGroupedRecvs entries.
inline const char* widenRecvSizes(const AbiVersion& abi, int n, const int* in, size_t* out) {
  if (const char* why = refuseRecvCount(abi, n)) return why;
  if (in == nullptr) return "sizes is NULL";
  for (int i = 0; i < n; i++) {
    if (const char* why = refuseIntSize(in[i], abi.maxMessageSize)) return why;
    out[i] = static_cast<size_t>(in[i]);
  }
  return nullptr;
}

// size_t irecv sizes for an int-size table (import side): `out` holds
// kMaxGroupedRecvs entries.
inline const char* narrowRecvSizes(const AbiVersion& abi, int n, const size_t* in, int* out) {
  if (const char* why = refuseRecvCount(abi, n)) return why;
  if (in == nullptr) return "sizes is NULL";
  for (int i = 0; i < n; i++) {
    if (const char* why = refuseMessageSize(abi, in[i])) return why;
    out[i] = static_cast<int>(in[i]);
  }
  return nullptr;
}

}  // namespace detail
}  // namespace ncclnet

#pragma GCC visibility pop
