// SPDX-License-Identifier: Apache-2.0
// The GIN all-to-all: NCCL's device API moving every byte with GPU-initiated
// puts (ncclGin::put with a signal) instead of NCCL's collectives. On a
// job whose ranks are on different hosts (each rank its own NCCL_HOSTID),
// NCCL 2.28 activates GIN for the device communicator and takes the GIN
// table of the net plugin's library (src/gin/gin_host.cc
// ncclGinConnectOnce); every put then goes through that plugin's
// ncclGinPlugin_v11 table, driven by NCCL's GIN proxy thread.
//
// Built only with nvcc and NCCL's device headers (NCCL_DRIVER_HAVE_GIN).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>

namespace nccldriver {

class GinAllToAll;

// Registers `send` and `recv` (each `bytes` long, from ncclMemAlloc) as
// symmetric windows and creates the device communicator with GIN: every
// rank calls it, in the same order. Null and *why when NCCL refuses.
GinAllToAll* ginSetup(ncclComm_t comm, void* send, void* recv, size_t bytes, std::string* why);
// Queues one all-to-all of `chunkBytes` per peer on `stream`.
cudaError_t ginLaunch(GinAllToAll* gin, size_t chunkBytes, cudaStream_t stream);
// The device communicator and the windows go (before the communicator);
// with a null `comm` (aborted already) only the host side goes.
ncclResult_t ginTeardown(ncclComm_t comm, GinAllToAll* gin);

}  // namespace nccldriver
