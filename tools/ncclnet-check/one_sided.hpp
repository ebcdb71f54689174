// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the one-sided tables the checker judges rather than only
// forwards: ncclRmaPlugin_v14 (what NCCL 2.30.7+ loads), ncclRmaPlugin_v13
// and ncclGinPlugin_v13 (2.30.7 without v14; 2.30.3's GIN proxy) and
// ncclGinPlugin_v11 (what NCCL 2.28 loads from the net plugin's library;
// GIN v12, 2.29.7's, passes through). Each is the checker's
// own table over the wrapped plugin's: the same name, a NULL member where
// the wrapped plugin's is NULL, every call forwarded and judged on the way
// (rma_ledger.hpp). The other GIN, RMA and CollNet versions pass through
// (forwarded_tables.cc).
//
// The checker's table exists exactly where the wrapped plugin's does, so
// NCCL picks the same version with and without the checker: it takes the
// first version it finds and never falls back after that table's init
// fails (src/plugin/rma.cc ncclRmaPluginLoad).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "checker.hpp"
#include "rma_ledger.hpp"

namespace ncclnet::check {

// Library constructor, after Checker::load: copies the wrapped plugin's
// tables into the checker's.
void fillOneSidedTables();

// Each table's file: fills the checker's table over the wrapped plugin's
// `inner` and returns it.
void* fillRmaV14Table(const void* inner);
void* fillGinV11Table(const void* inner);
void* fillRmaV13Table(const void* inner);  // v13_table.cc, both of the v13 layout
void* fillGinV13Table(const void* inner);

// For the indirect-function resolver of `symbol`: whether the checker wraps
// that version (`*wraps`), and then its table, or nullptr where the wrapped
// plugin has none.
void* wrappedTable(const char* symbol, bool* wraps);

// What the tables do around the calls they share (one_sided_table.hpp).
class OneSided {
 public:
  // `table`: the symbol ("ncclRmaPlugin_v14"); `prefix`: of its trace lines ("rma").
  OneSided(const char* table, const char* prefix);

  RmaLedger& ledger() { return ledger_; }
  Trace& trace() { return Checker::instance().trace(); }
  const char* prefix() const { return prefix_; }

  // init: starts the checker and, once, judges the table (rule 70): its
  // members NCCL calls without a NULL check (`missing`) and its name
  // against the library's other one-sided tables.
  ncclResult_t start(ncclDebugLogger_t logFn, const char* name,
                     const std::vector<const char*>& missing);
  // After connect, closeColl, regMrSym and deregMrSym: the trace line, and
  // the registrations of a closed collComm as one INFO line.
  void connected(void* collComm, void* listenComm, int nranks, int rank, int maxRecvs,
                 ncclResult_t res);
  void registered(void* collComm, void* mhandle, size_t size, int type, uint64_t flags,
                  const char* call, ncclResult_t res);
  void deregistered(void* collComm, void* mhandle, ncclResult_t res);
  // Before iputSignal on `owner` (a context, or GIN v11's collComm).
  RmaLedger::Post beforeSignal(void* owner, int context, uint32_t rank, size_t size,
                               void* srcMhandle, void* dstMhandle, void* signalMhandle);
  // Before closeColl (the plugin may reuse the address once it returns).
  uint64_t closing(void* collComm);
  void closed(uint64_t collId, ncclResult_t res);

 private:
  const char* table_;
  const char* prefix_;
  RmaLedger ledger_;
  std::mutex judgedMutex_;
  bool judged_ = false;
};

}  // namespace ncclnet::check
