// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: consuming one slice from a
// receive connection, as NCCL's receive primitives do, checking every byte:
//
//   SIMPLE    thread 0 waits tail >= step + sliceSteps; on an UNPACK
//             connection the block copies the slice's bounce pages into
//             place (unpack_slice.cuh); then every thread checks its words
//             (volatile loads)
//   LL        every thread polls its 16-byte lines until both flags are
//             llFlag(step) (NCCL's kernels do not wait for the tail)
//   LL128     every thread polls its lines' flag words for ll128Flag(step),
//             then reads the 15 payload words
//   then      thread 0 fences and publishes head = step + sliceSteps
//
// A line whose flags are in but whose payload is not (a plugin copying with
// another store order than a NIC's) is polled again until the proxy's tail
// passed the step; only then is a wrong byte a mismatch. The first wrong
// byte of the slice is reported (smallest offset over all threads).
#pragma once

#include "block_state.cuh"
#include "ncclnet/transport/lines.hpp"
#include "ncclnet/transport/pattern.hpp"
#include "ncclnet/transport/steps.hpp"
#include "unpack_slice.cuh"

namespace ncclnet::transport::cuda_peer {

__device__ __forceinline__ void noteMismatch(BlockState& s, uint64_t pos) {
  atomicMin(&s.badPos, static_cast<unsigned long long>(pos));
}

// The payload byte at `pos` of a slice as it sits in the step buffer.
__device__ uint8_t payloadByte(Protocol protocol, const char* buff, uint64_t pos) {
  switch (protocol) {
    case Protocol::LL: {
      // Bytes 0-3 of a line's payload are data1, 4-7 are data2.
      uint64_t line = pos / kLLDataBytesPerLine, k = pos % kLLDataBytesPerLine;
      return loadVolatileByte(buff + line * kLLLineBytes + (k < 4 ? k : 8 + k - 4));
    }
    case Protocol::LL128: {
      uint64_t line = pos / kLL128DataBytesPerLine, within = pos % kLL128DataBytesPerLine;
      return loadVolatileByte(buff + line * kLL128LineBytes + within);
    }
    case Protocol::Simple: break;
  }
  return loadVolatileByte(buff + pos);
}

__device__ void checkSimple(BlockState& s, const char* buff, uint64_t n, uint64_t offset) {
  const uint64_t seed = s.w.seed;
  uint64_t words = reinterpret_cast<uintptr_t>(buff) % 8 == 0 ? n / 8 : 0;
  for (uint64_t g = threadIdx.x; g < words; g += blockDim.x) {
    uint64_t diff = loadVolatile(reinterpret_cast<const uint64_t*>(buff) + g) ^
                    patternBytesAt(seed, offset + 8 * g);
    if (diff != 0) noteMismatch(s, 8 * g + firstByte(diff));
  }
  for (uint64_t i = words * 8 + threadIdx.x; i < n; i += blockDim.x) {
    if (loadVolatileByte(buff + i) != patternByte(seed, offset + i)) noteMismatch(s, i);
  }
}

// True once the proxy's tail passed this slice: its bytes are all in place.
__device__ __forceinline__ bool tailPassed(const WorkDesc& w, const SliceAt& at) {
  return loadAcquireSys(w.tail) >= at.step + w.sliceSteps;
}

__device__ void pollLL(const LaunchArgs& a, BlockState& s, const char* buff, const SliceAt& at) {
  const WorkDesc& w = s.w;
  const uint32_t flag = llFlag(at.step);
  uint64_t lines = divUp(at.bytes, kLLDataBytesPerLine);
  for (uint64_t l = threadIdx.x; l < lines; l += blockDim.x) {
    Patience patience;
    int32_t wait = kWaitLLFlags;
    for (;;) {
      uint64_t first, second;
      loadVolatile16(buff + l * kLLLineBytes, &first, &second);
      if (llWordFlag(first) == flag && llWordFlag(second) == flag) {
        if (!w.verify) break;
        uint64_t pos = l * kLLDataBytesPerLine;
        uint64_t diff = (llLineData(first, second) ^ patternBytesAt(w.seed, at.offset + pos)) &
                        byteMask(at.bytes - pos);
        if (diff == 0) break;
        if (tailPassed(w, at)) {
          noteMismatch(s, pos + firstByte(diff));
          break;
        }
        wait = kWaitPayload;
      }
      uint32_t seenFlag = llWordFlag(first) != flag ? llWordFlag(first) : llWordFlag(second);
      if (patience.exhausted(a, s, wait, flag, seenFlag, l)) return;
    }
  }
}

__device__ void pollLL128(const LaunchArgs& a, BlockState& s, const char* buff, const SliceAt& at) {
  const WorkDesc& w = s.w;
  const uint64_t flag = ll128Flag(at.step);
  uint64_t lines = divUp(at.bytes, kLL128DataBytesPerLine);
  for (uint64_t l = threadIdx.x; l < lines; l += blockDim.x) {
    const char* line = buff + l * kLL128LineBytes;
    Patience patience;
    int32_t wait = kWaitLL128Flags;
    for (;;) {
      uint64_t seen = loadVolatile(reinterpret_cast<const uint64_t*>(line + kLL128FlagWord * 8));
      if (seen == flag) {
        if (!w.verify) break;
        fenceAcquireSys();  // payload loads after the flag load
        uint64_t bad = kNoMismatch;
        for (uint64_t k = 0; k < kLL128DataWords && bad == kNoMismatch; k++) {
          uint64_t pos = l * kLL128DataBytesPerLine + k * 8;
          if (pos >= at.bytes) break;
          uint64_t diff = (loadVolatile(reinterpret_cast<const uint64_t*>(line + k * 8)) ^
                           patternBytesAt(w.seed, at.offset + pos)) &
                          byteMask(at.bytes - pos);
          if (diff != 0) bad = pos + firstByte(diff);
        }
        if (bad == kNoMismatch) break;
        if (tailPassed(w, at)) {
          noteMismatch(s, bad);
          break;
        }
        wait = kWaitPayload;
      }
      if (patience.exhausted(a, s, wait, flag, seen, l)) return;
    }
  }
}

// False when the block stops (status recorded by thread 0).
__device__ bool recvSlice(const LaunchArgs& a, BlockState& s, volatile WorkStatus* st,
                          const SliceAt& at) {
  const WorkDesc& w = s.w;
  const Protocol protocol = static_cast<Protocol>(w.protocol);
  const int slot = static_cast<int>(at.step % kSteps);
  if (threadIdx.x == 0) {
    s.badPos = kNoMismatch;
    bool arrived = protocol != Protocol::Simple ||
                   waitCounter(a, s, st, at, w.tail, 0, at.step + w.sliceSteps, kWaitTail);
    if (arrived) {
      char* buff = w.buff + static_cast<uint64_t>(slot) * w.stepSize;
      if (w.userBuffer != nullptr) {
        buff = w.userBuffer + at.offset;  // the network wrote straight into it
      } else if (w.offsetMode) {
        buff = w.buff + loadVolatile(reinterpret_cast<const int32_t*>(
                            reinterpret_cast<const char*>(w.fifoOffset) + slot * w.fifoStride));
      }
      s.buff = buff;
    }
  }
  __syncthreads();
  if (s.halt) {
    if (threadIdx.x == 0) recordFailure(a, s, st, at);
    return false;
  }
  if (w.unpack != nullptr && !unpackSlice(a, s, st, at, s.buff)) return false;
  const char* buff = s.buff;
  switch (protocol) {
    case Protocol::Simple:
      if (w.verify) checkSimple(s, buff, at.bytes, at.offset);
      break;
    case Protocol::LL: pollLL(a, s, buff, at); break;
    case Protocol::LL128: pollLL128(a, s, buff, at); break;
  }
  __syncthreads();
  bool ok = !s.halt && s.badPos == kNoMismatch;
  if (threadIdx.x == 0) {
    if (s.halt) {
      recordFailure(a, s, st, at);
    } else if (s.badPos != kNoMismatch) {
      uint64_t pos = s.badPos;
      recordMismatch(a, st, at, pos, payloadByte(protocol, buff, pos),
                     patternByte(w.seed, at.offset + pos));
    } else {
      // Every read of the slice is done: the proxy may reuse the buffer.
      __threadfence_system();
      storeReleaseSys(w.head, at.step + w.sliceSteps);
    }
  }
  __syncthreads();  // the next slice's shared state is thread 0's again
  return ok;
}

}  // namespace ncclnet::transport::cuda_peer
