// SPDX-License-Identifier: Apache-2.0
// CollNet: the in-network reduction table (ncclCollNetPlugin_v12 or _v11)
// that NCCL_COLLNET_ENABLE=1 runs CollNetDirect, CollNetChain and
// multi-node NVLS on (docs/collnet.md). The table's members and limits,
// its devices against the net table's, the collective connect and a rank
// that declines it, reduceSupport, exact all-reduce of every claimed (type,
// operation), many operations in flight, and the all-gather and
// reduce-scatter windows. Data is host memory, as NCCL stages it without
// GPUDirect (coll_net.cc sendProxyConnect registers NCCL_PTR_HOST then).
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "harness/wire.hpp"
#include "ncclnet/abi/collnet_v10.h"
#include "ncclnet/abi/collnet_v8.h"
#include "ncclnet/abi/collnet_v9.h"
#include "scenario/collnet_session.hpp"
#include "scenario/plugin_log.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

// ---- element values --------------------------------------------------------
//
// Every value is a small integer that every type holds exactly (fp8 and
// bfloat16 included), and so is every partial result in any order of
// reduction: the exact result is the same whatever tree or order the
// plugin reduces in, so it is compared bit for bit.

constexpr int kNumTypes = ncclNumTypes;  // 12 in NCCL 2.28: fp8 included
constexpr int kNumOps = 4;               // sum, prod, max, min: what NCCL asks

const char* typeName(int type) {
  static const char* const names[kNumTypes] = {"int8",    "uint8",    "int32",   "uint32",
                                               "int64",   "uint64",   "float16", "float32",
                                               "float64", "bfloat16", "fp8e4m3", "fp8e5m2"};
  return type >= 0 && type < kNumTypes ? names[type] : "?";
}

const char* opName(int op) {
  static const char* const names[kNumOps] = {"sum", "prod", "max", "min"};
  return op >= 0 && op < kNumOps ? names[op] : "?";
}

size_t eltSize(int type) {
  static const size_t sizes[kNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return sizes[type];
}

bool isUnsigned(int type) {
  return type == ncclUint8 || type == ncclUint32 || type == ncclUint64;
}
bool isFp8(int type) {
  return type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
}

// Rank `rank`'s element `i` for (type, op); `salt` varies it per operation.
int64_t valueOf(int type, int op, int rank, size_t i, size_t salt = 0) {
  size_t k = i + salt;
  size_t r = static_cast<size_t>(rank);
  switch (op) {
    case ncclSum:
      // |sum| <= 3 x 8 ranks: exact in int8, bfloat16; fp8 gets +-1 (<= 8).
      if (isFp8(type)) return static_cast<int64_t>((r + k) % 3) - 1;
      if (isUnsigned(type)) return static_cast<int64_t>((r * 5 + k) % 4);
      return static_cast<int64_t>((r * 5 + k) % 7) - 3;
    case ncclProd:
      // At most one rank in four contributes 2: |product| <= 4 for 8 ranks.
      if ((r + k) % 4 == 0) return 2;
      if (!isUnsigned(type) && (r * 3 + k) % 5 == 0) return -1;
      return 1;
    default:  // max, min
      if (isFp8(type)) return static_cast<int64_t>((r * 7 + k * 3) % 5) - 2;
      if (isUnsigned(type)) return static_cast<int64_t>((r * 7 + k * 3) % 9);
      return static_cast<int64_t>((r * 7 + k * 3) % 9) - 4;
  }
}

int64_t reduceOf(int op, int64_t a, int64_t b) {
  switch (op) {
    case ncclSum: return a + b;
    case ncclProd: return a * b;
    case ncclMax: return std::max(a, b);
    default: return std::min(a, b);
  }
}

// IEEE-style bits of the small integer `v` with `expBits` and `manBits`
// (exact: |v| < 2^(manBits + 1)).
uint64_t floatBits(int64_t v, int expBits, int manBits) {
  if (v == 0) return 0;
  uint64_t sign = v < 0 ? 1 : 0;
  uint64_t m = static_cast<uint64_t>(v < 0 ? -v : v);
  int e = 63 - __builtin_clzll(m);
  uint64_t mantissa = (m - (uint64_t{1} << e)) << (manBits - e);
  uint64_t exponent = static_cast<uint64_t>(e + (1 << (expBits - 1)) - 1);
  return sign << (expBits + manBits) | exponent << manBits | mantissa;
}

// Element `v` of `type`, little-endian, into `out`.
void store(int type, int64_t v, uint8_t* out) {
  uint64_t bits = 0;
  switch (type) {
    case ncclFloat16: bits = floatBits(v, 5, 10); break;
    case ncclFloat32: {
      float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      bits = u;
      break;
    }
    case ncclFloat64: {
      double d = static_cast<double>(v);
      std::memcpy(&bits, &d, 8);
      break;
    }
    case ncclBfloat16: bits = floatBits(v, 8, 7); break;
    case ncclFloat8e4m3: bits = floatBits(v, 4, 3); break;
    case ncclFloat8e5m2: bits = floatBits(v, 5, 2); break;
    default: bits = static_cast<uint64_t>(v); break;  // two's complement, truncated
  }
  for (size_t b = 0; b < eltSize(type); b++) out[b] = static_cast<uint8_t>(bits >> (8 * b));
}

void fillValues(uint8_t* out, int type, int op, int rank, size_t count, size_t salt = 0) {
  size_t elt = eltSize(type);
  for (size_t i = 0; i < count; i++) store(type, valueOf(type, op, rank, i, salt), out + i * elt);
}

// The first element of `got` that is not the reduction over `nranks`, or
// count; `expected`/`seen` describe it.
size_t firstWrong(const uint8_t* got, int type, int op, int nranks, size_t count, size_t salt,
                  std::string* detail) {
  size_t elt = eltSize(type);
  uint8_t want[8];
  for (size_t i = 0; i < count; i++) {
    int64_t v = valueOf(type, op, 0, i, salt);
    for (int r = 1; r < nranks; r++) v = reduceOf(op, v, valueOf(type, op, r, i, salt));
    store(type, v, want);
    if (std::memcmp(want, got + i * elt, elt) == 0) continue;
    std::string w, g;
    for (size_t b = elt; b-- > 0;) {
      w += format("%02x", want[b]);
      g += format("%02x", got[i * elt + b]);
    }
    *detail = format("element %zu is 0x%s, expected 0x%s (%lld)", i, g.c_str(), w.c_str(),
                     static_cast<long long>(v));
    return i;
  }
  return count;
}

uint64_t fnv(const uint8_t* p, size_t n, uint64_t h = 1469598103934665603ull) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// ---- rule 80 ---------------------------------------------------------------

// The members NCCL calls: the adapters copy them (src/plugin/net/net_v11.cc
// returns the table as it is; net_v12.cc on 2.30 likewise) and
// coll_net.cc calls them without a NULL check. iallgather and
// ireducescatter are checked before use (graph/tuning.cc), iflush only on
// the GPUDirect path, regMrDmaBuf only with NCCL_PTR_DMABUF.
void tableComplete(Ctx& c) {
  Rule rule = Rule::CollNetTableComplete;
  const CollNetTable& table = collNetTableOf(c);
  const ncclCollNet_v12_t& t = table.calls;
  std::vector<std::pair<const char*, bool>> members = {
      {"init", t.init != nullptr},
      {"devices", t.devices != nullptr},
      {"getProperties", t.getProperties != nullptr},
      {"listen", t.listen != nullptr},
      {"connect", t.connect != nullptr},
      {"reduceSupport", t.reduceSupport != nullptr},
      {"regMr", t.regMr != nullptr},
      {"deregMr", t.deregMr != nullptr},
      {"iallreduce", t.iallreduce != nullptr},
      {"test", t.test != nullptr},
      {"closeColl", t.closeColl != nullptr},
      {"closeListen", t.closeListen != nullptr},
      {"finalize", t.finalize != nullptr}};
  for (const auto& [name, present] : members) {
    CONF_EXPECT(present, rule, "%s.%s is NULL; NCCL calls it", table.symbol, name);
  }
  CONF_EXPECT(t.name != nullptr && t.name[0] != '\0', rule, "%s.name is empty", table.symbol);
  c.note(format("%s (\"%s\")", table.symbol, t.name));
  c.comm();
  void* ctx = nullptr;
  CONF_OK(t.init(&ctx, kCollNetCommHash, pluginLogger()), rule, "CollNet init()");
  int ndev = 0;
  CONF_OK(t.devices(&ndev), rule, "CollNet devices()");
  // Zero devices only disables CollNet (src/plugin/net.cc): nothing to
  // judge beyond this point.
  if (ndev == 0) c.note("CollNet devices() reports no device: NCCL runs without CollNet");
  for (int d = 0; d < ndev; d++) {
    ncclNetProperties_v12_t p{};
    CONF_OK(t.getProperties(d, &p), rule, format("CollNet getProperties(%d)", d));
    // coll_net.cc sendProxySetup and recvProxySetup fail the connection
    // setup with ncclInternalError outside (0, NCCL_MAX_NET_SIZE_BYTES].
    CONF_EXPECT(p.maxCollBytes > 0 && p.maxCollBytes <= NCCL_MAX_NET_SIZE_BYTES, rule,
                "CollNet device %d has maxCollBytes %zu, outside (0, %llu]; NCCL's "
                "sendProxySetup refuses it",
                d, p.maxCollBytes, static_cast<unsigned long long>(NCCL_MAX_NET_SIZE_BYTES));
    // Without GPUDirect NCCL registers host staging buffers
    // (sendProxyConnect: regMr(..., useGdr ? NCCL_PTR_CUDA : NCCL_PTR_HOST)).
    CONF_EXPECT(p.ptrSupport & NCCL_PTR_HOST, rule,
                "CollNet device %d does not support host memory (ptrSupport 0x%x)", d,
                p.ptrSupport);
    // sendProxySetup takes DMA-BUF on the bit alone and sendProxyConnect
    // then calls regMrDmaBuf.
    if (p.ptrSupport & NCCL_PTR_DMABUF) {
      CONF_EXPECT(t.regMrDmaBuf != nullptr, rule,
                  "CollNet device %d offers NCCL_PTR_DMABUF and %s.regMrDmaBuf is NULL", d,
                  table.symbol);
    }
    // GPUDirect receives are flushed (coll_net.cc collNetRecvFlush).
    if (p.ptrSupport & NCCL_PTR_CUDA) {
      CONF_EXPECT(t.iflush != nullptr, rule,
                  "CollNet device %d offers NCCL_PTR_CUDA and %s.iflush is NULL", d, table.symbol);
    }
  }
  CONF_OK(t.finalize(ctx), rule, "CollNet finalize()");
}

// ---- rule 81 ---------------------------------------------------------------

bool sameText(const char* a, const char* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return std::strcmp(a, b) == 0;
}

// NCCL imports the CollNet devices into the topology first and the net
// table's after them, matched by pciPath and name into the same XML node
// and index (src/graph/topo.cc ncclTopoPopulateNics, called CollNet first
// "so that it has precedence"); xmlInitAttr* keeps the first value, so the
// CollNet side decides the NIC's speed, latency, port, guid and maxconn for
// every job, and a device of another name or path becomes another NIC.
void describesNetDevices(Ctx& c) {
  Rule rule = Rule::CollNetDescribesNetDevices;
  const CollNetTable& table = collNetTableOf(c);
  const ncclCollNet_v12_t& t = table.calls;
  int netDevices = c.devices();
  void* ctx = nullptr;
  CONF_OK(t.init(&ctx, kCollNetCommHash, pluginLogger()), rule, "CollNet init()");
  int ndev = 0;
  CONF_OK(t.devices(&ndev), rule, "CollNet devices()");
  CONF_EXPECT(ndev == netDevices, rule,
              "CollNet devices() reports %d devices, the net table %d: NCCL's topology matches "
              "them by index",
              ndev, netDevices);
  for (int d = 0; d < ndev; d++) {
    ncclNetProperties_v12_t p{};
    CONF_OK(t.getProperties(d, &p), rule, format("CollNet getProperties(%d)", d));
    const ncclNetProperties_v12_t& n = c.props(d);
    auto text = [](const char* s) { return s != nullptr ? s : "(null)"; };
    CONF_EXPECT(sameText(p.name, n.name), rule, "device %d: CollNet name \"%s\", net table \"%s\"",
                d, text(p.name), text(n.name));
    CONF_EXPECT(sameText(p.pciPath, n.pciPath), rule,
                "device %d: CollNet pciPath \"%s\", net table \"%s\"", d, text(p.pciPath),
                text(n.pciPath));
    CONF_EXPECT(p.guid == n.guid, rule, "device %d: CollNet guid 0x%llx, net table 0x%llx", d,
                static_cast<unsigned long long>(p.guid), static_cast<unsigned long long>(n.guid));
    CONF_EXPECT(p.speed == n.speed, rule, "device %d: CollNet speed %d, net table %d", d, p.speed,
                n.speed);
    CONF_EXPECT(p.port == n.port, rule, "device %d: CollNet port %d, net table %d", d, p.port,
                n.port);
    // The topology keeps latency as an integer (xmlInitAttrInt).
    CONF_EXPECT(static_cast<int>(p.latency) == static_cast<int>(n.latency), rule,
                "device %d: CollNet latency %g, net table %g", d, static_cast<double>(p.latency),
                static_cast<double>(n.latency));
    CONF_EXPECT(p.maxComms == n.maxComms, rule, "device %d: CollNet maxComms %d, net table %d", d,
                p.maxComms, n.maxComms);
    // The NIC's GPUDirect attribute comes from CollNet's ptrSupport too
    // (ncclTopoPopulateNics), and the net transport trusts it
    // (graph/paths.cc ncclTopoCheckGdr): a CollNet device claiming
    // GPUDirect the net table lacks makes NCCL register GPU memory with a
    // net table that refuses it.
    const int gdrBits = NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
    int collGdr = p.ptrSupport & gdrBits, netGdr = n.ptrSupport & gdrBits;
    CONF_EXPECT((collGdr & ~netGdr) == 0, rule,
                "device %d: CollNet ptrSupport 0x%x offers GPUDirect (0x%x) the net table's 0x%x "
                "does not: NCCL would register GPU memory with the net table",
                d, p.ptrSupport, collGdr & ~netGdr, n.ptrSupport);
    if ((netGdr & ~collGdr) != 0) {
      c.note(
          format("device %d: CollNet ptrSupport 0x%x lacks the net table's GPUDirect (0x%x): "
                 "NCCL takes the NIC as without GPUDirect for every job, point-to-point too",
                 d, p.ptrSupport, netGdr & ~collGdr));
    }
  }
  CONF_OK(t.finalize(ctx), rule, "CollNet finalize()");
}

// ---- rule 82 ---------------------------------------------------------------

// Every rank connects; the group then carries one all-reduce.
void connectCollective(Ctx& c) {
  Rule rule = Rule::CollNetConnectCollective;
  CollNetSession s(c, rule);
  constexpr size_t kCount = 1024;
  Buffer send(kCount * 4), recv(kCount * 4);
  fillValues(reinterpret_cast<uint8_t*>(send.data()), ncclInt32, ncclSum, c.rank(), kCount);
  void* ms = s.reg(send.data(), send.size(), rule);
  void* mr = s.reg(recv.data(), recv.size(), rule);
  std::string what = format("%zu int32 sum over %d ranks", kCount, c.nranks());
  s.wait(s.allReduce(send.data(), recv.data(), kCount, ncclInt32, ncclSum, ms, mr, what, rule),
         what, rule);
  std::string detail;
  size_t bad = firstWrong(reinterpret_cast<const uint8_t*>(recv.data()), ncclInt32, ncclSum,
                          c.nranks(), kCount, 0, &detail);
  CONF_EXPECT(bad == kCount, rule, "the first all-reduce of the group: %s", detail.c_str());
  c.barrier("done");
  s.teardown(rule);
}

// Rank 0 declines: it listens and shares its handle like every head, then
// never calls connect and closes its listen at once, as NCCL does after a
// connect that gave it no collComm (coll_net.cc sharedConnect: "Collnet
// connect is allowed to fail", closeListen on success). The others are
// blocked in a collective connect that cannot complete: each must come
// back with an error or no collComm within the wait limit. NCCL then
// agrees on the failure (transport.cc ncclTransportCollNetCheck) and falls
// back to point-to-point; a connect that never returns hangs the
// communicator's init instead.
void connectDeclined(Ctx& c) {
  Rule rule = Rule::CollNetConnectCollective;
  const CollNetTable& table = collNetTableOf(c);
  const ncclCollNet_v12_t& t = table.calls;
  c.comm();
  void* ctx = nullptr;
  CONF_OK(t.init(&ctx, kCollNetCommHash, pluginLogger()), rule, "CollNet init()");
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  CONF_OK(t.listen(ctx, 0, handle, &listenComm), rule, "CollNet listen(device 0)");
  std::vector<std::string> all = c.allgather("CollNet handles", std::string(handle, sizeof handle));
  std::string outcome;
  if (c.rank() == 0) {
    c.activity("CollNet: rank 0 declines (closeListen, no connect)");
    CONF_OK(t.closeListen(listenComm), rule, "CollNet closeListen() of the declining rank");
    outcome = "declined";
  } else {
    std::vector<void*> handles;
    for (std::string& h : all) handles.push_back(h.data());
    void* collComm = nullptr;
    c.activity(format("CollNet connect(%d ranks) while rank 0 declines", c.nranks()));
    double start = nowSeconds();
    ncclResult_t res = t.connect(handles.data(), c.nranks(), c.rank(), listenComm, &collComm);
    double took = nowSeconds() - start;
    CONF_EXPECT(res != ncclSuccess || collComm == nullptr, rule,
                "CollNet connect(%d ranks) returned a collComm although rank 0 never connected",
                c.nranks());
    CONF_EXPECT(took <= c.waitLimit(), rule,
                "CollNet connect(%d ranks) came back after %.1f s while rank 0 declined (limit "
                "%.1f s)",
                c.nranks(), took, c.waitLimit());
    outcome = res != ncclSuccess ? resultText(res) : std::string("no collComm");
    c.note(format("rank %d: connect returned %s after %.2f s", c.rank(), outcome.c_str(), took));
    // On success NCCL closes the listen (sharedConnect); after an error
    // it drops it without a call.
    if (res == ncclSuccess) CONF_OK(t.closeListen(listenComm), rule, "CollNet closeListen()");
  }
  c.allgather("CollNet connect outcomes", outcome);
  CONF_OK(t.finalize(ctx), rule, "CollNet finalize()");
}

// ---- rule 83 ---------------------------------------------------------------

// This rank's answer to every (type, op): "1" or "0" each.
std::string supportMatrix(const ncclCollNet_v12_t& t, Rule rule) {
  std::string mine;
  for (int type = 0; type < kNumTypes; type++) {
    for (int op = 0; op < kNumOps; op++) {
      int supported = 0;
      CONF_OK(t.reduceSupport(static_cast<ncclDataType_t>(type), static_cast<ncclRedOp_t>(op),
                              &supported),
              rule, format("CollNet reduceSupport(%s, %s)", typeName(type), opName(op)));
      mine += supported ? '1' : '0';
    }
  }
  return mine;
}

// What every rank claims: NCCL enables a (type, op) only when no head
// refuses it (coll_net.cc ncclCollNetSetup, collNetSupportMatrix).
std::vector<std::pair<int, int>> claimedByAll(const std::vector<std::string>& matrices) {
  std::vector<std::pair<int, int>> out;
  for (int type = 0; type < kNumTypes; type++) {
    for (int op = 0; op < kNumOps; op++) {
      bool all = true;
      for (const std::string& m : matrices) all = all && m[type * kNumOps + op] == '1';
      if (all) out.push_back({type, op});
    }
  }
  return out;
}

// NCCL asks every head for every type below ncclNumTypes and the four
// operations before ncclAvg once connected, fails the communicator's
// setup on an error, and all-gathers the answers (coll_net.cc
// ncclCollNetSetup, collNetSupportMatrix); a (type, op) one rank claims
// and another refuses is disabled, so an answer that differs by rank turns
// CollNet off for it where the plugin could do it, or, read by a
// communicator on other heads, on where it cannot.
void reduceSupportHonest(Ctx& c) {
  Rule rule = Rule::CollNetReduceSupportHonest;
  CollNetSession s(c, rule);
  std::vector<std::string> all =
      c.allgather("reduceSupport answers", supportMatrix(s.table(), rule));
  for (int r = 1; r < c.nranks(); r++) {
    for (size_t i = 0; i < all[0].size(); i++) {
      int type = static_cast<int>(i) / kNumOps, op = static_cast<int>(i) % kNumOps;
      CONF_EXPECT(all[static_cast<size_t>(r)][i] == all[0][i], rule,
                  "reduceSupport(%s, %s) answers %c on rank 0 and %c on rank %d", typeName(type),
                  opName(op), all[0][i], all[static_cast<size_t>(r)][i], r);
    }
  }
  size_t claimed = claimedByAll(all).size();
  c.note(format("%zu of %d (type, op) pairs claimed", claimed, kNumTypes * kNumOps));
  c.barrier("done");
  s.teardown(rule);
}

// ---- rule 84 ---------------------------------------------------------------

// The size test() reports is only traced by NCCL (coll_net.cc
// sendProxyProgress; collNetRecvFlush's test passes no size at all), so a
// different one is noted, not judged.
void noteSize(Ctx& c, int size, size_t expected, const std::string& what) {
  if (size >= 0 && static_cast<size_t>(size) == expected) return;
  c.count("collNetSizeNotReported");
  c.note(format("test(%s) reported size %d, the operation moved %zu B (NCCL only traces it)",
                what.c_str(), size, expected));
}

// Every claimed (type, op) at each count, out of place and in place
// (NCCL passes registered user buffers as they are, sendbuff == recvbuff
// for an in-place collective: coll_net.cc collNetRegIallreduce).
void allReduceMatrix(Ctx& c, const std::vector<size_t>& smallCounts) {
  Rule rule = Rule::CollNetAllReduceExact;
  CollNetSession s(c, rule);
  std::vector<std::pair<int, int>> pairs =
      claimedByAll(c.allgather("reduceSupport answers", supportMatrix(s.table(), rule)));
  if (pairs.empty()) skip("no (type, op) is claimed by every rank");
  // A large operation: as large as the plugin takes, within 4 MiB.
  size_t largeBytes = std::min<size_t>(s.props().maxCollBytes, size_t{4} << 20);
  constexpr size_t kTail = 64;  // bytes after the result that must stay
  Buffer send(largeBytes), recv(largeBytes + kTail);
  void* ms = s.reg(send.data(), send.size(), rule);
  void* mr = s.reg(recv.data(), recv.size(), rule);
  auto* sendBytes = reinterpret_cast<uint8_t*>(send.data());
  auto* recvBytes = reinterpret_cast<uint8_t*>(recv.data());
  uint64_t hash = 1469598103934665603ull;
  size_t ops = 0;
  for (auto [type, op] : pairs) {
    size_t elt = eltSize(type);
    std::vector<size_t> counts = smallCounts;
    counts.push_back(largeBytes / elt);
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        size_t bytes = count * elt;
        std::string what = format("%zu %s %s, %s", count, typeName(type), opName(op),
                                  inPlace ? "in place" : "out of place");
        recv.clear(0xEE, 0, bytes + kTail);
        uint8_t* src = inPlace ? recvBytes : sendBytes;
        fillValues(src, type, op, c.rank(), count, ops);
        void* request =
            s.allReduce(src, recvBytes, count, static_cast<ncclDataType_t>(type),
                        static_cast<ncclRedOp_t>(op), inPlace ? mr : ms, mr, what, rule);
        noteSize(c, s.wait(request, what, rule), bytes, what);
        std::string detail;
        size_t bad = firstWrong(recvBytes, type, op, c.nranks(), count, ops, &detail);
        CONF_EXPECT(bad == count, rule, "iallreduce(%s) over %d ranks: %s", what.c_str(),
                    c.nranks(), detail.c_str());
        size_t where = 0;
        CONF_EXPECT(recv.untouched(0xEE, bytes, kTail, &where), rule,
                    "iallreduce(%s) wrote past its %zu B result (byte %zu)", what.c_str(), bytes,
                    where);
        hash = fnv(recvBytes, bytes, hash);
        ops++;
      }
    }
  }
  long outside = 0;
  CONF_EXPECT(recv.guardsIntact(&outside), rule,
              "an iallreduce wrote outside its receive buffer (offset %ld)", outside);
  // Bitwise the same everywhere: NCCL's CollNet algorithms hand each
  // rank's copy to its node's GPUs, which must agree across nodes.
  std::vector<std::string> hashes =
      c.allgather("result hashes", format("%016llx", static_cast<unsigned long long>(hash)));
  for (int r = 1; r < c.nranks(); r++) {
    CONF_EXPECT(hashes[static_cast<size_t>(r)] == hashes[0], rule,
                "the all-reduce results of rank %d differ from rank 0's (hash %s, %s)", r,
                hashes[static_cast<size_t>(r)].c_str(), hashes[0].c_str());
  }
  c.note(format("%zu all-reduces of %zu (type, op) pairs, %llu NULL requests posted again", ops,
                pairs.size(), static_cast<unsigned long long>(s.nullRequests())));
  c.barrier("done");
  s.teardown(rule);
}

void allReduceExact(Ctx& c) {
  allReduceMatrix(c, {1, 7, 1000});
}

void allReduceThreeRanks(Ctx& c) {
  allReduceMatrix(c, {1, 1000});
}

// ---- rule 85 ---------------------------------------------------------------

// NCCL keeps up to NCCL_STEPS operations in flight per channel, and the
// channels share one collComm (coll_net.cc sharedConnect, sendProxyProgress
// posting into sub->requests[buffSlot] before testing earlier slots); a
// NULL request sends it round its progress loop to post the same
// operation again. 32 operations are posted before any is tested, then
// tested newest first.
void manyInFlight(Ctx& c) {
  Rule rule = Rule::CollNetManyInFlight;
  constexpr int kOps = 32;
  CollNetSession s(c, rule);
  std::vector<size_t> counts;
  for (int k = 0; k < kOps; k++) counts.push_back(k % 4 == 3 ? 65536 : 1000 + 17 * k);
  std::vector<Buffer> sends, recvs;
  std::vector<void*> sendMh, recvMh, requests;
  for (int k = 0; k < kOps; k++) {
    size_t bytes = counts[static_cast<size_t>(k)] * 4;
    sends.emplace_back(bytes);
    recvs.emplace_back(bytes);
    fillValues(reinterpret_cast<uint8_t*>(sends.back().data()), ncclInt32, ncclSum, c.rank(),
               counts[static_cast<size_t>(k)], static_cast<size_t>(k));
    recvs.back().clear(0xEE);
    sendMh.push_back(s.reg(sends.back().data(), bytes, rule));
    recvMh.push_back(s.reg(recvs.back().data(), bytes, rule));
  }
  c.barrier("registered");
  for (int k = 0; k < kOps; k++) {
    size_t i = static_cast<size_t>(k);
    requests.push_back(
        s.allReduce(sends[i].data(), recvs[i].data(), counts[i], ncclInt32, ncclSum, sendMh[i],
                    recvMh[i], format("operation %d of %d, %zu int32", k, kOps, counts[i]), rule));
  }
  for (int k = kOps - 1; k >= 0; k--) {
    size_t i = static_cast<size_t>(k);
    std::string what = format("operation %d of %d", k, kOps);
    noteSize(c, s.wait(requests[i], what, rule), counts[i] * 4, what);
    std::string detail;
    size_t bad = firstWrong(reinterpret_cast<const uint8_t*>(recvs[i].data()), ncclInt32, ncclSum,
                            c.nranks(), counts[i], i, &detail);
    CONF_EXPECT(bad == counts[i], rule,
                "operation %d of %d in flight (%zu int32 sum), completed: %s", k, kOps, counts[i],
                detail.c_str());
  }
  c.note(format("%d operations in flight; %llu NULL requests posted again", kOps,
                static_cast<unsigned long long>(s.nullRequests())));
  c.barrier("done");
  s.teardown(rule);
}

// ---- rule 86 ---------------------------------------------------------------

// Byte `pos` of rank `rank`'s all-gather block.
uint8_t gatherByte(int rank, size_t pos) {
  return static_cast<uint8_t>(rank * 101 + pos * 7 + (pos >> 8) * 13 + 1);
}

struct Window {
  const char* name;
  size_t offset, bytes;
};

// The windows every rank posts (the same on all: they are collectives),
// in blocks of `b` bytes: each lies differently against each rank's block.
// Offsets and sizes are whole int32 elements, as NCCL's chunks are whole
// elements of the collective's type.
std::vector<Window> windowsOf(size_t b, int nranks) {
  size_t all = b * static_cast<size_t>(nranks);
  auto e = [](size_t bytes) { return bytes / 4 * 4; };
  return {{"the whole", 0, all},
          {"inside block 1", b + e(b / 4), e(b / 2)},
          {"across the boundary of blocks 0 and 1", e(b / 2), b},
          {"across the boundary of blocks 1 and 2", b + e(b / 2), b},
          {"from block 2 on", 2 * b, all - 2 * b},
          {"blocks 0 and 1, up to the middle of 1", 0, b + e(b / 2)},
          {"smaller than a block, in block 0", e(b / 8), e(b / 16)}};
}

// What NCCL passes as this rank's own pointer: its block advanced by the
// window's offset into it when the window starts inside its block, the
// block's start otherwise (coll_net.cc collNetRegIallgather, sendbuff;
// collNetRegIreducescatter, recvbuff).
size_t ownOffset(const Window& w, size_t b, int rank) {
  return w.offset / b == static_cast<size_t>(rank) ? w.offset % b : 0;
}

// The part of rank's block inside the window, relative to the block.
std::pair<size_t, size_t> ownPart(const Window& w, size_t b, int rank) {
  size_t begin = std::max(w.offset, b * static_cast<size_t>(rank));
  size_t end = std::min(w.offset + w.bytes, b * static_cast<size_t>(rank + 1));
  if (end <= begin) return {0, 0};
  return {begin - b * static_cast<size_t>(rank), end - begin};
}

void windows(Ctx& c) {
  Rule rule = Rule::CollNetWindows;
  CollNetSession s(c, rule);
  const ncclCollNet_v12_t& t = s.table();
  if (t.iallgather == nullptr || t.ireducescatter == nullptr)
    skip(
        "iallgather or ireducescatter is NULL in ncclCollNetPlugin_v%d, which NCCL allows "
        "there: its tuner then keeps all-gather and reduce-scatter off CollNet "
        "(graph/tuning.cc)",
        s.version());
  constexpr size_t kBlock = 65536 + 24;  // int32 elements; not a power of two
  constexpr size_t kTail = 64;
  const int me = c.rank(), n = c.nranks();
  const size_t all = kBlock * static_cast<size_t>(n);
  Buffer block(kBlock), whole(all + kTail), contribution(all), mine(kBlock + kTail);
  auto* blockBytes = reinterpret_cast<uint8_t*>(block.data());
  for (size_t i = 0; i < kBlock; i++) blockBytes[i] = gatherByte(me, i);
  fillValues(reinterpret_cast<uint8_t*>(contribution.data()), ncclInt32, ncclSum, me, all / 4);
  void* mBlock = s.reg(block.data(), block.size(), rule);
  void* mWhole = s.reg(whole.data(), whole.size(), rule);
  void* mContribution = s.reg(contribution.data(), contribution.size(), rule);
  void* mMine = s.reg(mine.data(), mine.size(), rule);
  auto* wholeBytes = reinterpret_cast<uint8_t*>(whole.data());
  auto* mineBytes = reinterpret_cast<uint8_t*>(mine.data());
  for (const Window& w : windowsOf(kBlock, n)) {
    if (w.offset + w.bytes > all || w.bytes == 0) continue;
    // All-gather: the window of the concatenated blocks lands in the part.
    std::string what =
        format("window %s, [%zu, %zu) of %zu B", w.name, w.offset, w.offset + w.bytes, all);
    whole.clear(0xEE, 0, w.bytes + kTail);
    ncclNetSGE_v12_t part{mWhole, whole.data(), w.bytes};
    void* request = s.allGather(blockBytes + ownOffset(w, kBlock, me), &part, 1, kBlock, w.offset,
                                w.bytes, mBlock, what, rule);
    noteSize(c, s.wait(request, "iallgather(" + what + ")", rule), w.bytes,
             "iallgather(" + what + ")");
    for (size_t j = 0; j < w.bytes; j++) {
      size_t at = w.offset + j;
      uint8_t want = gatherByte(static_cast<int>(at / kBlock), at % kBlock);
      CONF_EXPECT(wholeBytes[j] == want, rule,
                  "iallgather(%s): byte %zu of the window (byte %zu of rank %zu's block) is "
                  "0x%02x, expected 0x%02x",
                  what.c_str(), j, at % kBlock, at / kBlock, wholeBytes[j], want);
    }
    size_t where = 0;
    CONF_EXPECT(whole.untouched(0xEE, w.bytes, kTail, &where), rule,
                "iallgather(%s) wrote past the window's end (byte %zu)", what.c_str(), where);

    // Reduce-scatter: the window of every rank's contribution is summed;
    // this rank receives the part of its own block inside the window.
    mine.clear(0xEE);
    ncclNetSGE_v12_t sendPart{mContribution, contribution.data() + w.offset, w.bytes};
    size_t own = ownOffset(w, kBlock, me);
    request = s.reduceScatter(&sendPart, 1, mineBytes + own, kBlock, w.offset, w.bytes, ncclInt32,
                              ncclSum, mMine, what, rule);
    auto [partAt, partBytes] = ownPart(w, kBlock, me);
    noteSize(c, s.wait(request, "ireducescatter(" + what + ")", rule), partBytes,
             "ireducescatter(" + what + ")");
    if (partBytes > 0) {
      // Element e of the whole is element e of every contribution.
      size_t firstElt = (kBlock * static_cast<size_t>(me) + partAt) / 4;
      std::string detail;
      std::vector<uint8_t> got(mineBytes + partAt, mineBytes + partAt + partBytes);
      // firstWrong counts from element 0 of the values: shift by salt.
      size_t bad = firstWrong(got.data(), ncclInt32, ncclSum, n, partBytes / 4, firstElt, &detail);
      CONF_EXPECT(bad == partBytes / 4, rule,
                  "ireducescatter(%s): rank %d's part [%zu, %zu) of its block: %s", what.c_str(),
                  me, partAt, partAt + partBytes, detail.c_str());
    }
    CONF_EXPECT(mine.untouched(0xEE, 0, partAt, &where), rule,
                "ireducescatter(%s) wrote byte %zu of rank %d's block, before the window",
                what.c_str(), where, me);
    CONF_EXPECT(
        mine.untouched(0xEE, partAt + partBytes, kBlock + kTail - partAt - partBytes, &where), rule,
        "ireducescatter(%s) wrote byte %zu of rank %d's block, past the window", what.c_str(),
        where, me);
  }
  long outside = 0;
  CONF_EXPECT(whole.guardsIntact(&outside) && mine.guardsIntact(&outside), rule,
              "a window operation wrote outside its buffer (offset %ld)", outside);
  c.barrier("done");
  s.teardown(rule);
}

// ---- rule 87 ---------------------------------------------------------------

template <class Table>
void gatherScatterPresent(Ctx& c, const char* symbol, bool* found) {
  const auto* t = static_cast<const Table*>(c.plugin().symbol(symbol));
  if (t == nullptr) return;
  *found = true;
  CONF_EXPECT(t->iallgather != nullptr && t->ireducescatter != nullptr,
              Rule::CollNetGatherScatterNotNull,
              "%s.%s is NULL: NCCL wraps this table and calls the member through its wrapper "
              "whatever it holds, and its tuner takes the wrapper as support",
              symbol, t->iallgather == nullptr ? "iallgather" : "ireducescatter");
}

// NCCL 2.28.9 wraps tables v8 to v10 (src/plugin/net/net_v8.cc ...
// net_v10.cc, ncclCollNet_init: iallgather and ireducescatter always point
// at the adapter, which calls the plugin's), and 2.30.7 wraps v11 too
// (net_v11.cc); graph/tuning.cc then sees non-NULL members and routes
// all-gather and reduce-scatter over CollNet, into a NULL call.
void gatherScatterNotNull(Ctx& c) {
  bool found = false;
  gatherScatterPresent<ncclCollNet_v8_t>(c, "ncclCollNetPlugin_v8", &found);
  gatherScatterPresent<ncclCollNet_v9_t>(c, "ncclCollNetPlugin_v9", &found);
  gatherScatterPresent<ncclCollNet_v10_t>(c, "ncclCollNetPlugin_v10", &found);
  gatherScatterPresent<ncclCollNet_v11_t>(c, "ncclCollNetPlugin_v11", &found);
  if (!found) skip("the library exports none of ncclCollNetPlugin_v8 ... _v11");
}

}  // namespace

void addCollNetScenarios(std::vector<Scenario>& out) {
  auto add = [&](const char* name, Rule rule, int ranks, void (*run)(Ctx&), const char* summary,
                 double minDeadline = 0) {
    Scenario s = collNetScenario(name, rule, ranks, run, summary);
    s.minDeadlineSec = minDeadline;
    out.push_back(s);
  };
  add("TableComplete", Rule::CollNetTableComplete, 1, tableComplete,
      "the members NCCL calls, maxCollBytes in (0, 1 TiB], host memory, regMrDmaBuf with DMABUF, "
      "iflush with CUDA");
  add("DescribesNetDevices", Rule::CollNetDescribesNetDevices, 1, describesNetDevices,
      "as many devices as the net table, each with its name, pciPath, guid, speed, port, latency "
      "and maxComms");
  add("ConnectCollective", Rule::CollNetConnectCollective, 2, connectCollective,
      "2 ranks connect and carry one all-reduce");
  add("ConnectFourRanks", Rule::CollNetConnectCollective, 4, connectCollective,
      "4 ranks connect and carry one all-reduce", 30);
  // A plugin may bound a connect that cannot complete by its own timeout
  // (sdk-socket: NCCLNET_SOCKET_CONNECT_TIMEOUT_MS, 30 s by default); the
  // wait limit here is half the deadline, 45 s at least.
  add("ConnectDeclined", Rule::CollNetConnectCollective, 3, connectDeclined,
      "rank 0 shares its handle, never connects and closes its listen: the others get an error "
      "or no collComm within the wait limit",
      90);
  add("ReduceSupportHonest", Rule::CollNetReduceSupportHonest, 2, reduceSupportHonest,
      "reduceSupport of 12 types x sum, prod, max, min: no error, the same on every rank");
  // Up to 320 operations of up to 4 MiB, checked element by element.
  add("AllReduceExact", Rule::CollNetAllReduceExact, 2, allReduceExact,
      "every claimed (type, op) at 1, 7, 1000 and 4 MiB, in and out of place: the exact "
      "reduction, bitwise equal on every rank",
      120);
  add("AllReduceThreeRanks", Rule::CollNetAllReduceExact, 3, allReduceThreeRanks,
      "every claimed (type, op) at 1, 1000 and 4 MiB over 3 ranks, in and out of place", 120);
  add("ManyInFlight", Rule::CollNetManyInFlight, 2, manyInFlight,
      "32 all-reduces posted before any test(), completed newest first, each exact; NULL "
      "requests posted again",
      30);
  add("Windows", Rule::CollNetWindows, 3, windows,
      "iallgather and ireducescatter windows: whole, inside a block, across block boundaries, "
      "after a block, smaller than a block",
      30);
  add("GatherScatterNotNull", Rule::CollNetGatherScatterNotNull, 1, gatherScatterNotNull,
      "ncclCollNetPlugin_v8 ... _v11 have non-NULL iallgather and ireducescatter");
}

}  // namespace conformance
