// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: what the wrapped one-sided tables share: the start, rule
// 70's one-time judgement of the table, and the trace of the collective
// setup calls (connect, the symmetric registrations, close).
#include "one_sided.hpp"

#include <cstring>

#include "ncclnet/log.hpp"

namespace ncclnet::check {

namespace {

// Every one-sided table NCCL selects by name (NCCL_GIN_PLUGIN,
// NCCL_RMA_PLUGIN; src/plugin/gin.cc, rma.cc): one class, one name. Each
// starts with its name.
const char* const kOneSidedTables[] = {"ncclRmaPlugin_v14", "ncclRmaPlugin_v13",
                                       "ncclGinPlugin_v13", "ncclGinPlugin_v12",
                                       "ncclGinPlugin_v11"};

unsigned long long id(uint64_t value) {
  return static_cast<unsigned long long>(value);
}

// The versions the checker wraps, and its table of each (nullptr where the
// wrapped plugin has none). Written once, by the library constructor,
// before any lookup.
struct Wrapped {
  const char* symbol;
  void* (*fill)(const void* inner);
  void* table;
};
Wrapped wrapped[] = {{"ncclRmaPlugin_v14", fillRmaV14Table, nullptr},
                     {"ncclRmaPlugin_v13", fillRmaV13Table, nullptr},
                     {"ncclGinPlugin_v13", fillGinV13Table, nullptr},
                     {"ncclGinPlugin_v11", fillGinV11Table, nullptr}};

}  // namespace

void fillOneSidedTables() {
  for (Wrapped& w : wrapped) {
    const void* inner = Checker::instance().innerSymbol(w.symbol);
    w.table = inner != nullptr ? w.fill(inner) : nullptr;
  }
}

void* wrappedTable(const char* symbol, bool* wraps) {
  for (const Wrapped& w : wrapped) {
    if (std::strcmp(w.symbol, symbol) != 0) continue;
    *wraps = true;
    return w.table;
  }
  *wraps = false;
  return nullptr;
}

OneSided::OneSided(const char* table, const char* prefix)
    : table_(table), prefix_(prefix), ledger_(Checker::instance().reporter(), table) {}

ncclResult_t OneSided::start(ncclDebugLogger_t logFn, const char* name,
                             const std::vector<const char*>& missing) {
  ncclResult_t res = Checker::instance().startFor(logFn);
  if (res != ncclSuccess) return res;
  {
    std::lock_guard<std::mutex> lock(judgedMutex_);
    if (judged_) return ncclSuccess;
    judged_ = true;
  }
  ledger_.checkMembers(missing);
  std::vector<std::pair<const char*, const char*>> others;
  for (const char* symbol : kOneSidedTables) {
    if (std::strcmp(symbol, table_) == 0) continue;
    const auto* table = static_cast<const char* const*>(Checker::instance().innerSymbol(symbol));
    if (table != nullptr) others.emplace_back(symbol, *table);
  }
  ledger_.checkName(name, others);
  return ncclSuccess;
}

void OneSided::connected(void* collComm, void* listenComm, int nranks, int rank, int maxRecvs,
                         ncclResult_t res) {
  uint64_t collId = 0;
  if (res == ncclSuccess && collComm != nullptr) {
    collId = ledger_.addColl(collComm, listenComm, nranks, rank, maxRecvs);
  }
  trace().line("%s.connect cc=%llu nranks=%d rank=%d rc=%d", prefix_, id(collId), nranks, rank,
               static_cast<int>(res));
}

void OneSided::registered(void* collComm, void* mhandle, size_t size, int type, uint64_t flags,
                          const char* call, ncclResult_t res) {
  uint64_t mrId = 0;
  if (res == ncclSuccess) mrId = ledger_.addMr(collComm, mhandle, size, type, flags);
  trace().line("%s.%s cc=%llu m=%llu size=%zu type=%d flags=%llx rc=%d", prefix_, call,
               id(ledger_.collId(collComm)), id(mrId), size, type, id(flags),
               static_cast<int>(res));
}

void OneSided::deregistered(void* collComm, void* mhandle, ncclResult_t res) {
  uint64_t mrId = res == ncclSuccess ? ledger_.dropMr(collComm, mhandle) : 0;
  trace().line("%s.deregMrSym cc=%llu m=%llu rc=%d", prefix_, id(ledger_.collId(collComm)),
               id(mrId), static_cast<int>(res));
}

RmaLedger::Post OneSided::beforeSignal(void* owner, int context, uint32_t rank, size_t size,
                                       void* srcMhandle, void* dstMhandle, void* signalMhandle) {
  // A signal without a payload passes NULL source and destination handles
  // (size 0): only the signal's registration is then judged.
  if (size == 0) return ledger_.beforeOp(owner, context, rank, {signalMhandle});
  return ledger_.beforeOp(owner, context, rank, {srcMhandle, dstMhandle, signalMhandle});
}

uint64_t OneSided::closing(void* collComm) {
  std::string registrations;
  uint64_t collId = ledger_.closeColl(collComm, &registrations);
  // One rank sees only its own order; the line lets the ranks' logs be
  // compared (rule 71: the same registrations in the same order).
  if (collId != 0) {
    NCCLNET_INFO(Checker::instance().reporter().logger(), NCCL_NET, "ncclnet-check: %s",
                 registrations.c_str());
  }
  return collId;
}

void OneSided::closed(uint64_t collId, ncclResult_t res) {
  trace().line("%s.closeColl cc=%llu rc=%d", prefix_, id(collId), static_cast<int>(res));
}

}  // namespace ncclnet::check
