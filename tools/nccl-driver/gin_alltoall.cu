// SPDX-License-Identifier: Apache-2.0
// The GIN all-to-all's kernel and its device communicator.
#include <nccl_device.h>

#include <cstring>

#include "gin_alltoall.hpp"

namespace nccldriver {

namespace {

constexpr int kThreads = 256;
constexpr ncclGinSignal_t kArrived = 0;  // counts the puts that landed here

// One block. Rank r writes chunk p of its send window to rank p's receive
// window at chunk r, each put adding 1 to rank p's signal once its bytes
// are there; a rank is done when its signal has grown by nRanks.
//
// The signal's starting value is read before the barrier: no peer can put
// to this rank for this launch before every rank has arrived at it, and by
// then this rank has read its count, whatever the previous launch left.
__global__ void ginAllToAllKernel(ncclWindow_t send, ncclWindow_t recv, size_t chunkBytes,
                                  ncclDevComm devComm) {
  ncclGin gin{devComm, 0};
  uint64_t before = gin.readSignal(kArrived);
  ncclGinBarrierSession<ncclCoopCta> barrier{ncclCoopCta(), gin, ncclTeamWorld(devComm),
                                             devComm.railGinBarrier, 0};
  barrier.sync(ncclCoopCta(), cuda::memory_order_relaxed, ncclGinFenceLevel::Relaxed);
  for (int peer = threadIdx.x; peer < devComm.nRanks; peer += blockDim.x) {
    gin.put(ncclTeamWorld(devComm), peer, recv, size_t(devComm.rank) * chunkBytes, send,
            size_t(peer) * chunkBytes, chunkBytes, ncclGin_SignalInc{kArrived});
  }
  gin.waitSignal(ncclCoopCta(), kArrived, before + devComm.nRanks);
  // The sources may be reused once this launch ends.
  gin.flush(ncclCoopCta());
}

}  // namespace

class GinAllToAll {
 public:
  ncclWindow_t send = nullptr;
  ncclWindow_t recv = nullptr;
  ncclDevComm devComm{};
  bool devCommMade = false;
};

GinAllToAll* ginSetup(ncclComm_t comm, void* send, void* recv, size_t bytes, std::string* why) {
  auto* gin = new GinAllToAll;
  auto fail = [&](const char* what, ncclResult_t r) -> GinAllToAll* {
    *why = std::string(what) + ": " + ncclGetErrorString(r) + ": " + ncclGetLastError(comm);
    ginTeardown(comm, gin);
    return nullptr;
  };
  ncclResult_t r = ncclCommWindowRegister(comm, send, bytes, &gin->send, NCCL_WIN_COLL_SYMMETRIC);
  if (r != ncclSuccess) return fail("ncclCommWindowRegister (send)", r);
  r = ncclCommWindowRegister(comm, recv, bytes, &gin->recv, NCCL_WIN_COLL_SYMMETRIC);
  if (r != ncclSuccess) return fail("ncclCommWindowRegister (recv)", r);
  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof(reqs));
  reqs.railGinBarrierCount = 1;  // the kernel's one block
  reqs.ginSignalCount = 1;
  r = ncclDevCommCreate(comm, &reqs, &gin->devComm);
  if (r != ncclSuccess) return fail("ncclDevCommCreate (GIN)", r);
  gin->devCommMade = true;
  return gin;
}

cudaError_t ginLaunch(GinAllToAll* gin, size_t chunkBytes, cudaStream_t stream) {
  ginAllToAllKernel<<<1, kThreads, 0, stream>>>(gin->send, gin->recv, chunkBytes, gin->devComm);
  return cudaGetLastError();
}

ncclResult_t ginTeardown(ncclComm_t comm, GinAllToAll* gin) {
  if (gin == nullptr) return ncclSuccess;
  ncclResult_t first = ncclSuccess;
  auto keep = [&](ncclResult_t r) {
    if (first == ncclSuccess) first = r;
  };
  if (comm != nullptr) {
    if (gin->devCommMade) keep(ncclDevCommDestroy(comm, &gin->devComm));
    if (gin->recv != nullptr) keep(ncclCommWindowDeregister(comm, gin->recv));
    if (gin->send != nullptr) keep(ncclCommWindowDeregister(comm, gin->send));
  }
  delete gin;
  return first;
}

}  // namespace nccldriver
