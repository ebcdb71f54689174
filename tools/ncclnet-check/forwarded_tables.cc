// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the wrapped plugin's GIN, RMA and CollNet tables, found
// where the wrapped plugin has them, so that a plugin run under the checker
// keeps them: passed through unchanged, or judged (one_sided.hpp).
//
// NCCL looks for these tables in the library it loaded as the net plugin,
// which is this one (docs/gin-rma.md): CollNet in src/plugin/net.cc
// ncclNetPluginLoad, GIN v11 in src/plugin/net/net_v11.cc (2.28), GIN and
// RMA through the net library's entry of src/plugin/gin.cc and rma.cc
// (2.29.7+). It takes the newest version whose symbol dlsym finds and never
// falls back to an older one when that table's init fails (rma.cc
// ncclRmaPluginLoad), and RMA v13 falls back to ncclGinPlugin_v13 only when
// ncclRmaPlugin_v13 is not found (rma/rma_v13.cc). So dlsym must find here
// exactly the tables the wrapped plugin has. A data symbol cannot be absent
// at run time; an indirect-function symbol (STT_GNU_IFUNC) can: dlsym returns
// what its resolver returns, at lookup time, after this library's
// constructor has loaded the wrapped plugin. The resolver returns the
// wrapped plugin's own table, or nullptr; for the versions the checker
// judges (one_sided.hpp), the checker's own table over it, or nullptr.
#include "checker.hpp"
#include "ncclnet/abi/collnet.h"
#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"
#include "one_sided.hpp"

namespace {
using Resolved = void (*)();
Resolved innerTable(const char* symbol) {
  bool wraps = false;
  void* own = ncclnet::check::wrappedTable(symbol, &wraps);
  return reinterpret_cast<Resolved>(
      wraps ? own : ncclnet::check::Checker::instance().innerSymbol(symbol));
}
}  // namespace

#define NCCLNET_CHECK_FORWARD(table, N)                                 \
  extern "C" Resolved ncclnetCheckResolve_##table##N() {                \
    return innerTable(#table "_v" #N);                                  \
  }                                                                     \
  extern "C" __attribute__((visibility("default"))) void table##_v##N() \
      __attribute__((ifunc("ncclnetCheckResolve_" #table #N)));

NCCLNET_GIN_FOR_EACH_VERSION(NCCLNET_CHECK_FORWARD, ncclGinPlugin)
NCCLNET_RMA_FOR_EACH_VERSION(NCCLNET_CHECK_FORWARD, ncclRmaPlugin)
NCCLNET_COLLNET_FOR_EACH_VERSION(NCCLNET_CHECK_FORWARD, ncclCollNetPlugin)
