// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the CUDA device peer's
// kernel. One block per connection of a launch plays that connection's works
// one after another, in launch order (as a stream runs NCCL's kernels on one
// connection); different connections run concurrently.
#include "kernel_abi.hpp"
#include "recv_slice.cuh"
#include "send_slice.cuh"

namespace ncclnet::transport::cuda_peer {

namespace {

// False when the block stopped (its status is recorded).
__device__ bool runWork(const LaunchArgs& a, BlockState& s, volatile WorkStatus* st) {
  const WorkDesc& w = s.w;
  const uint64_t slices = sliceCount(w.nbytes, w.capacity);
  uint64_t step = w.startStep;
  if (threadIdx.x == 0) {
    st->slices = slices;
    st->state = kRunning;
    // The receiving kernel returns the credits a round-up skipped, and says
    // a registered user buffer is free for the network from now on.
    if (!w.send) {
      __threadfence_system();
      storeReleaseSys(w.head, step);
      if (w.userBuffer != nullptr) {
        storeVolatile(reinterpret_cast<int64_t*>(reinterpret_cast<char*>(w.fifoSize) +
                                                 step % kSteps * w.fifoStride),
                      int64_t{0});
        __threadfence_system();
      }
      if (w.unpack != nullptr) unpackBegin(s);
    }
  }
  __syncthreads();  // thread 0's unpack state is every thread's
  for (uint64_t slice = 0; slice < slices; slice++, step += w.sliceSteps) {
    SliceAt at{.slice = slice,
               .step = step,
               .offset = slice * w.capacity,
               .bytes = sliceBytesAt(w.nbytes, w.capacity, slice)};
    bool ok = w.send ? sendSlice(a, s, st, at) : recvSlice(a, s, st, at);
    if (!ok) return false;
  }
  if (threadIdx.x == 0) {
    if (w.unpack != nullptr) unpackEnd(s);
    st->slice = slices;
    st->step = step;
    st->offset = w.nbytes;
    st->waitingFor = kWaitNothing;
    st->state = kDone;
  }
  return true;
}

__global__ void __launch_bounds__(kThreads) deviceWorks(LaunchArgs a) {
  __shared__ BlockState s;
  const int first = a.groupStart[blockIdx.x];
  const int end = a.groupStart[blockIdx.x + 1];
  for (int i = first; i < end; i++) {
    if (threadIdx.x == 0) {
      s.w = a.works[i];
      s.halt = 0;
      s.badPos = kNoMismatch;
      s.skip = stopRequested(a);  // decided once, for every thread
    }
    __syncthreads();
    volatile WorkStatus* st = &a.status[s.w.work];
    bool ok = !s.skip && runWork(a, s, st);
    __syncthreads();
    if (ok) continue;
    // This connection cannot go on: the works not started say why.
    if (threadIdx.x == 0) {
      for (int j = i; j < end; j++) {
        volatile WorkStatus* q = &a.status[a.works[j].work];
        if (q->state == kQueued) {
          q->waitingFor = j == i ? kWaitNothing : kWaitEarlierWork;
          q->state = kStopped;
        }
      }
    }
    break;
  }
}

}  // namespace

cudaError_t launchDeviceWorks(const LaunchArgs& args, int blocks, cudaStream_t stream) {
  (void)cudaGetLastError();  // only this launch's error is reported below
  deviceWorks<<<blocks, kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t residentBlocks(int device, int* out) {
  int perSm = 0, sms = 0;
  cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, deviceWorks, kThreads, 0);
  if (err != cudaSuccess) return err;
  err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  *out = perSm * sms;
  return cudaSuccess;
}

}  // namespace ncclnet::transport::cuda_peer
