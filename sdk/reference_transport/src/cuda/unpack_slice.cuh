// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the unpack step of NCCL's
// SIMPLE receive on a connection whose plugin is an UNPACK device. Before
// the slice is read, head advances and the block copies each entry of
// queue slot head % 16 (bounce_buf + src_off, len bytes) to the slice +
// dst_off, in NCCL's order (its waitPeer moves head before the unpack
// reads it); at the end of the work head goes back into the handle, where
// the next work starts from. Loads of the plugin's queue and pages are
// volatile (the CPU writes them), as NCCL's kernel makes them. Unlike that
// kernel, this one checks the count and every entry's bounds and reports
// a plugin that gets them wrong.
#pragma once

#include "block_state.cuh"
#include "ncclnet/abi/net_device.h"

namespace ncclnet::transport::cuda_peer {

// Thread 0, at the start of a work.
__device__ __forceinline__ void unpackBegin(BlockState& s) {
  auto* h = static_cast<ncclNetUnpackDeviceHandle*>(s.w.unpack);
  s.unpackMeta = reinterpret_cast<ncclNetUnpackMeta*>(
      loadVolatile(reinterpret_cast<const uint64_t*>(&h->meta)));
  s.unpackBounce =
      reinterpret_cast<char*>(loadVolatile(reinterpret_cast<const uint64_t*>(&h->bounce_buf)));
  s.unpackHead = loadVolatile(&h->head);
}

// Thread 0, at the end of a work that finished.
__device__ __forceinline__ void unpackEnd(const BlockState& s) {
  auto* h = static_cast<ncclNetUnpackDeviceHandle*>(s.w.unpack);
  storeVolatile(&h->head, s.unpackHead);
  __threadfence_system();
}

// Every thread; `buff` is where the slice's payload belongs. False (with
// the work's status recorded by thread 0) when the scatter list is wrong.
__device__ bool unpackSlice(const LaunchArgs& a, BlockState& s, volatile WorkStatus* st,
                            const SliceAt& at, char* buff) {
  const uint64_t slot = (s.unpackHead + 1) % NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH;
  const uint64_t count = loadVolatile(&s.unpackMeta->cnt[slot]);
  const ncclNetUnpackLoadMeta* entries = s.unpackMeta->mem[slot];
  bool countOk = count <= NCCL_NET_UNPACK_MAX_SLICE_PAGES;
  for (uint64_t e = 0; countOk && e < count; e++) {
    uint64_t word0, dstOff;
    loadVolatile16(&entries[e], &word0, &dstOff);
    const uint32_t srcOff = static_cast<uint32_t>(word0);
    const uint32_t len = static_cast<uint32_t>(word0 >> 32);
    if (dstOff > at.bytes || len > at.bytes - dstOff) {
      if (threadIdx.x == 0) {
        st->badByte = e;
        st->got = len;
        st->expected = static_cast<uint32_t>(dstOff);
      }
      countOk = false;
      break;
    }
    const char* from = s.unpackBounce + srcOff;
    char* to = buff + dstOff;
    if ((reinterpret_cast<uintptr_t>(from) | reinterpret_cast<uintptr_t>(to) | len) % 8 == 0) {
      for (uint32_t i = threadIdx.x; i < len / 8; i += blockDim.x)
        reinterpret_cast<uint64_t*>(to)[i] =
            loadVolatile(reinterpret_cast<const uint64_t*>(from) + i);
    } else {
      for (uint32_t i = threadIdx.x; i < len; i += blockDim.x) to[i] = loadVolatileByte(from + i);
    }
  }
  __syncthreads();  // the copies are in place before any thread checks the slice
  if (threadIdx.x == 0) {
    if (count > NCCL_NET_UNPACK_MAX_SLICE_PAGES) {
      st->badByte = count;
      st->state = kBadUnpackCount;
    } else if (!countOk) {
      st->state = kBadUnpackEntry;
    }
    if (!countOk) {
      st->slice = at.slice;
      st->step = at.step;
      st->offset = at.offset;
      requestStop(a, kStopOnFailure);
    } else {
      s.unpackHead++;
    }
  }
  return countOk;
}

}  // namespace ncclnet::transport::cuda_peer
