// SPDX-License-Identifier: Apache-2.0
// sdk-ib: GPU memory. What an HCA can register (ptrSupport), and
// registration of NCCL_PTR_CUDA buffers and dma-bufs through the MR cache.
//
// The rule, per HCA (NCCL's IB transport decides the same two facts):
//   DMABUF  the verbs library has ibv_reg_dmabuf_mr, and NCCL's probe — a
//           registration with fd -1 — fails with an errno other than
//           EOPNOTSUPP or EPROTONOSUPPORT (EBADF: the kernel would import).
//   CUDA    a peer-memory client is loaded (nv_mem, nv_mem_nc or
//           nvidia_peermem, the files NCCL checks), or DMABUF holds.
// NCCL's own transport sets CUDA for peer memory only; sdk-ib also sets it
// for DMA-BUF alone, as the plugin contract lists DMABUF only together with
// CUDA, and makes that honest: regMr(NCCL_PTR_CUDA) that ibv_reg_mr cannot
// serve (no peer memory) exports the buffer's pages as a dma-buf through the
// CUDA driver (dlopen'd) and registers that instead.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <string>

#include "devices.hpp"
#include "mr_cache.hpp"

namespace ncclnet::ib {

// Whether a peer-memory client module is loaded; `sysRoot` prefixes the
// paths (tests).
bool peerMemoryLoaded(const std::string& sysRoot = "");
// NCCL's DMA-BUF probe on `pd`.
bool probeDmaBuf(const IbvApi& api, ibv_pd* pd);
// HOST | CUDA | DMABUF as the rule above gives them.
int ptrSupportFor(bool peerMemory, bool dmaBuf);

// An MR covering [data, data + size) in `hca`'s cache: host memory, GPU
// memory (type NCCL_PTR_CUDA) or, with `dmabuf`, a dma-buf. nullptr with
// *why on failure.
ibv_mr* registerMemory(Hca& hca, void* data, size_t size, int type, const DmaBufRange* dmabuf,
                       std::string* why);

}  // namespace ncclnet::ib
