// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: producing one slice into a
// send connection, as NCCL's send primitives do:
//
//   thread 0   wait head + kSteps >= step + sliceSteps      (credit)
//              shared: buffer = pool + connFifo[slot].offset
//              registered user buffer: buffer = user buffer + payload offset
//              connFifo[slot].size = encoded bytes
//   all        SIMPLE: payload; fence; tail = step + sliceSteps
//              LL:     16-byte lines {data, flag} with flag llFlag(step)
//              LL128:  payload words; fence; flag words; fence; tail
//
// The fences are __threadfence_system() by every writer, then a barrier,
// then the publishing thread fences again before its store: whoever sees the
// tail (or an LL128 flag) also sees everything written before it.
#pragma once

#include "block_state.cuh"
#include "ncclnet/transport/lines.hpp"
#include "ncclnet/transport/pattern.hpp"
#include "ncclnet/transport/steps.hpp"

namespace ncclnet::transport::cuda_peer {

// Every writer's stores, then one thread's publication, are ordered.
__device__ __forceinline__ void publishBarrier() {
  __threadfence_system();
  __syncthreads();
  __threadfence_system();
}

__device__ void writeSimple(const BlockState& s, char* buff, uint64_t n, uint64_t offset) {
  const uint64_t seed = s.w.seed;
  if (reinterpret_cast<uintptr_t>(buff) % 8 == 0) {
    uint64_t words = n / 8;
    for (uint64_t g = threadIdx.x; g < words; g += blockDim.x) {
      reinterpret_cast<uint64_t*>(buff)[g] = patternBytesAt(seed, offset + 8 * g);
    }
    for (uint64_t i = words * 8 + threadIdx.x; i < n; i += blockDim.x) {
      buff[i] = static_cast<char>(patternByte(seed, offset + i));
    }
  } else {
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) {
      buff[i] = static_cast<char>(patternByte(seed, offset + i));
    }
  }
}

__device__ void writeLL(const BlockState& s, char* buff, uint64_t n, uint64_t offset,
                        uint32_t flag) {
  uint64_t lines = divUp(n, kLLDataBytesPerLine);
  for (uint64_t l = threadIdx.x; l < lines; l += blockDim.x) {
    uint64_t at = l * kLLDataBytesPerLine;
    uint64_t data = s.w.verify ? patternBytesAt(s.w.seed, offset + at) & byteMask(n - at) : 0;
    storeVolatile16(buff + l * kLLLineBytes, llFirstWord(data, flag), llSecondWord(data, flag));
  }
}

// 15 payload words per 128-byte line: data word d (over the whole slice)
// carries payload bytes [8d, 8d + 8) and sits at line d / 15, word d % 15.
__device__ void writeLL128Payload(const BlockState& s, char* buff, uint64_t n, uint64_t offset) {
  uint64_t words = divUp(n, kLL128DataBytesPerLine) * kLL128DataWords;
  for (uint64_t d = threadIdx.x; d < words; d += blockDim.x) {
    uint64_t at = d * 8;
    uint64_t v = 0;
    if (s.w.verify && at < n) v = patternBytesAt(s.w.seed, offset + at) & byteMask(n - at);
    char* word = buff + d / kLL128DataWords * kLL128LineBytes + d % kLL128DataWords * 8;
    storeVolatile(reinterpret_cast<uint64_t*>(word), v);
  }
}

__device__ void writeLL128Flags(char* buff, uint64_t n, uint64_t flag) {
  uint64_t lines = divUp(n, kLL128DataBytesPerLine);
  for (uint64_t l = threadIdx.x; l < lines; l += blockDim.x) {
    storeVolatile(reinterpret_cast<uint64_t*>(buff + l * kLL128LineBytes + kLL128FlagWord * 8),
                  flag);
  }
}

// False when the block stops (status recorded by thread 0).
__device__ bool sendSlice(const LaunchArgs& a, BlockState& s, volatile WorkStatus* st,
                          const SliceAt& at) {
  const WorkDesc& w = s.w;
  const Protocol protocol = static_cast<Protocol>(w.protocol);
  const int slot = static_cast<int>(at.step % kSteps);
  if (threadIdx.x == 0) {
    if (waitCounter(a, s, st, at, w.head, kSteps, at.step + w.sliceSteps, kWaitHead)) {
      char* buff = w.buff + static_cast<uint64_t>(slot) * w.stepSize;
      if (w.userBuffer != nullptr) {
        // The application's data sits in its registered buffer (the pattern
        // stands in for it); the proxy sends straight from there.
        buff = w.userBuffer + at.offset;
      } else if (w.offsetMode) {
        // Written by the proxy before the head it published (acquired above).
        buff = w.buff + loadVolatile(reinterpret_cast<const int32_t*>(
                            reinterpret_cast<const char*>(w.fifoOffset) + slot * w.fifoStride));
      }
      s.buff = buff;
      // Like the kernel: the size first, then the payload, then the signal.
      storeVolatile(
          reinterpret_cast<int64_t*>(reinterpret_cast<char*>(w.fifoSize) + slot * w.fifoStride),
          static_cast<int64_t>(encodedBytes(protocol, at.bytes)));
      __threadfence_system();
    }
  }
  __syncthreads();
  if (s.halt) {
    if (threadIdx.x == 0) recordFailure(a, s, st, at);
    return false;
  }
  char* buff = s.buff;
  switch (protocol) {
    case Protocol::Simple:
      if (w.verify) writeSimple(s, buff, at.bytes, at.offset);
      publishBarrier();
      if (threadIdx.x == 0) storeReleaseSys(w.tail, at.step + w.sliceSteps);
      break;
    case Protocol::LL:
      // No tail: the proxy polls the flags.
      writeLL(s, buff, at.bytes, at.offset, llFlag(at.step));
      break;
    case Protocol::LL128:
      writeLL128Payload(s, buff, at.bytes, at.offset);
      publishBarrier();
      writeLL128Flags(buff, at.bytes, ll128Flag(at.step));
      publishBarrier();
      if (threadIdx.x == 0) storeReleaseSys(w.tail, at.step + w.sliceSteps);
      break;
  }
  __syncthreads();  // the next credit wait starts after every store of this slice
  return true;
}

}  // namespace ncclnet::transport::cuda_peer
