// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: one block's shared state
// while it plays a work, the bounded waits, and how a failure is recorded.
//
// Every wait gives up after the launch's timeout without progress, or as
// soon as the launch's stop word is set (another work failed, or the peer is
// being destroyed), so a kernel never hangs the GPU. Threads leave a slice
// together: any decision to stop is read from shared memory after a
// __syncthreads().
#pragma once

#include <climits>
#include <cstdint>

#include "device_memory_ops.cuh"
#include "kernel_abi.hpp"
#include "ncclnet/abi/net_device.h"

namespace ncclnet::transport::cuda_peer {

constexpr unsigned long long kNoMismatch = ULLONG_MAX;

struct BlockState {
  WorkDesc w;  // the work being played (copied from host-mapped memory)
  char* buff;  // this slice's step buffer, chosen by thread 0
  int halt;    // a thread gave up: every thread leaves the slice
  int skip;    // the launch was stopped before this work began
  int32_t failState;
  int32_t failWait;
  uint64_t failWant;
  uint64_t failSeen;
  uint64_t failLine;
  unsigned long long badPos;  // first wrong payload byte of the slice
  // UNPACK receive: the plugin's queue and bounce base, and the kernel's head.
  ncclNetUnpackMeta* unpackMeta;
  char* unpackBounce;
  uint64_t unpackHead;
};

// Where the current slice is, for status records.
struct SliceAt {
  uint64_t slice;
  uint64_t step;
  uint64_t offset;
  uint64_t bytes;
};

__device__ __forceinline__ bool stopRequested(const LaunchArgs& a) {
  return loadVolatile(a.stop) != kKeepGoing;
}

__device__ __forceinline__ void requestStop(const LaunchArgs& a, int32_t reason) {
  if (loadVolatile(a.stop) == kKeepGoing) storeVolatile(a.stop, reason);
  __threadfence_system();
}

// Called in a polling loop: true when this thread must give up, with the
// first thread's reason recorded in `s` (later ones see `halt` and leave).
struct Patience {
  uint64_t since = 0;
  uint32_t polls = 0;

  __device__ bool exhausted(const LaunchArgs& a, BlockState& s, int32_t wait, uint64_t want,
                            uint64_t seen, uint64_t line) {
    if ((++polls & 63) != 1) return false;  // look at the clock and stop word now and then
    uint64_t now = globalTimerNs();
    if (since == 0) since = now;
    if (*static_cast<volatile int*>(&s.halt)) return true;
    int32_t state = 0;
    if (stopRequested(a)) {
      state = kStopped;
    } else if (now - since > a.timeoutNs) {
      state = kTimedOut;
    } else {
      return false;
    }
    if (atomicCAS(&s.halt, 0, 1) == 0) {
      s.failState = state;
      s.failWait = wait;
      s.failWant = want;
      s.failSeen = seen;
      s.failLine = line;
    }
    return true;
  }
};

// Thread 0: waits until *counter + addend >= want (head credit: addend is
// kSteps; tail: 0), posting what it waits for into the work's status.
__device__ bool waitCounter(const LaunchArgs& a, BlockState& s, volatile WorkStatus* st,
                            const SliceAt& at, const uint64_t* counter, uint64_t addend,
                            uint64_t want, int32_t wait) {
  uint64_t seen = loadAcquireSys(counter);
  if (seen + addend >= want) return true;
  st->waitingFor = wait;
  st->slice = at.slice;
  st->step = at.step;
  st->offset = at.offset;
  st->want = want;
  st->seen = seen;
  __threadfence_system();  // a host reading progress sees it now
  Patience patience;
  for (;;) {
    seen = loadAcquireSys(counter);
    if (seen + addend >= want) {
      st->waitingFor = kWaitNothing;
      return true;
    }
    if (patience.exhausted(a, s, wait, want, seen, 0)) return false;
  }
}

// Thread 0, after the block agreed to stop: the work's final status.
__device__ void recordFailure(const LaunchArgs& a, const BlockState& s, volatile WorkStatus* st,
                              const SliceAt& at) {
  st->slice = at.slice;
  st->step = at.step;
  st->offset = at.offset;
  st->waitingFor = s.failWait;
  st->want = s.failWant;
  st->seen = s.failSeen;
  st->line = s.failLine;
  st->state = s.failState;
  if (s.failState == kTimedOut) requestStop(a, kStopOnFailure);
}

__device__ void recordMismatch(const LaunchArgs& a, volatile WorkStatus* st, const SliceAt& at,
                               uint64_t pos, uint32_t got, uint32_t expected) {
  st->slice = at.slice;
  st->step = at.step;
  st->offset = at.offset;
  st->waitingFor = kWaitNothing;
  st->badByte = at.offset + pos;
  st->got = got;
  st->expected = expected;
  st->state = kMismatch;
  requestStop(a, kStopOnFailure);
}

// Bytes [0, n) of a little-endian word, n in 0..8.
__device__ __forceinline__ uint64_t byteMask(uint64_t n) {
  return n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
}
// The first differing byte of two words whose XOR is `diff` (non-zero).
__device__ __forceinline__ uint64_t firstByte(uint64_t diff) {
  return static_cast<uint64_t>(__ffsll(static_cast<long long>(diff)) - 1) / 8;
}

}  // namespace ncclnet::transport::cuda_peer
