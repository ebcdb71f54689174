// SPDX-License-Identifier: Apache-2.0
//
// Glue that turns NCCL's internal IB transport (src/transport/net_ib.cc at NCCL
// 2.28) into a standalone net plugin, the "NCCL IB subject". Our own code, as
// socket_subject.cc (read it first); build.sh compiles it with NCCL's net_ib.cc,
// its verbs and mlx5 wrappers (misc/ibvwrap.cc, ibvsymbols.cc, mlx5dvwrap.cc,
// mlx5dvsymbols.cc: libibverbs and libmlx5 are dlopen'ed at init, never linked)
// and the files the Socket subject needs.
//
// Exported: NCCL_NET_PLUGIN_SYMBOL of NCCL's nccl_net.h (ncclNetPlugin_v11 at
// 2.28), a copy of `ncclNet_t ncclNetIb` renamed "nccl-ib"
// ("IB" is ambiguous with NCCL's internal transport, our rule 2).
#include "nccl.h"
#include "nccl_net.h"
#include "gin/gin_host.h"

// Defined by NCCL in src/transport/net_ib.cc.
extern ncclNet_t ncclNetIb;

extern "C" __attribute__((visibility("default"))) ncclNet_t NCCL_NET_PLUGIN_SYMBOL;
ncclNet_t NCCL_NET_PLUGIN_SYMBOL;

namespace {
__attribute__((constructor)) void copyNcclIbTable() {
  NCCL_NET_PLUGIN_SYMBOL = ncclNetIb;
  NCCL_NET_PLUGIN_SYMBOL.name = "nccl-ib";
}
}  // namespace

// net_ib.cc also defines NCCL's GIN tables (ncclGinIbGdaki, ncclGinIbProxy: the
// device-initiated network API, a different table from ncclNet_t). Their GDAKI
// backend lives in src/transport/gdaki (DOCA, CUDA); nothing of the net table
// calls it, so these stand-ins only refuse.
ncclResult_t ncclGinGdakiCreateContext(void*, int, int, void**, ncclNetDeviceHandle_v11_t**) {
  return ncclInternalError;
}
ncclResult_t ncclGinGdakiDestroyContext(void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiRegMrSym(void*, void*, size_t, int, void**, void**) { return ncclInternalError; }
ncclResult_t ncclGinGdakiDeregMrSym(void*, void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiProgress(void*) { return ncclInternalError; }
ncclResult_t ncclGinGdakiQueryLastError(void*, bool*) { return ncclInternalError; }
