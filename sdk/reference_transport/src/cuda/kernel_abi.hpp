// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: what the host side of the
// CUDA device peer hands its kernel and what the kernel reports back. Plain
// structs in host-mapped (pinned) memory, shared by the .cc and .cu sides.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ncclnet::transport::cuda_peer {

// Threads per block: one block plays one connection's works.
constexpr int kThreads = 256;

// A work's state, written by the kernel (kQueued until its block starts it).
enum WorkState : int32_t {
  kQueued = 0,
  kRunning = 1,
  kDone = 2,
  kMismatch = 3,  // a received byte differs from the pattern
  kTimedOut = 4,  // a wait saw no progress for the launch's timeout
  kStopped = 5,   // stopped by the launch's stop word (another work failed, or the peer stops)
  kBadUnpackCount = 6,  // an UNPACK queue slot holds more entries than the kernel reads
  kBadUnpackEntry = 7,  // an UNPACK entry copies past the slice's end
};

// What a work waits for (progress reports and failures).
enum WaitKind : int32_t {
  kWaitNothing = 0,
  kWaitHead = 1,        // send: head credit from the proxy
  kWaitTail = 2,        // recv SIMPLE: tail from the proxy
  kWaitLLFlags = 3,     // recv LL: a line's two flags
  kWaitLL128Flags = 4,  // recv LL128: a line's flag word
  kWaitPayload = 5,     // recv LL/LL128: flags in, payload not yet (until the tail passes)
  kWaitEarlierWork = 6  // a work queued behind another on the same connection
};

// The launch's stop word.
enum StopReason : int32_t { kKeepGoing = 0, kStopOnFailure = 1, kStopPeer = 2 };

// One work, resolved on the host: every address is a device address.
struct WorkDesc {
  uint64_t* head;       // SendMem::head
  uint64_t* tail;       // RecvMem::tail
  int64_t* fifoSize;    // RecvMem::connFifo[0].size; entry i is fifoStride bytes further
  int32_t* fifoOffset;  // RecvMem::connFifo[0].offset
  uint64_t fifoStride;
  char* buff;          // the protocol's buffer (the pool in offset mode)
  char* userBuffer;    // a registered user buffer (SIMPLE): payload there, not in buff
  void* unpack;        // UNPACK receive (SIMPLE): the plugin's ncclNetUnpackDeviceHandle
  uint64_t stepSize;   // bytes per step slot
  uint64_t startStep;  // roundUp(connection step, chunkSteps)
  uint64_t nbytes;
  uint64_t capacity;  // payload bytes per slice
  uint64_t seed;
  int32_t send;      // 1: produce into a send connection; 0: consume a receive connection
  int32_t protocol;  // index(Protocol)
  int32_t sliceSteps;
  int32_t offsetMode;  // SIMPLE step buffers at connFifo[slot].offset in the pool
  int32_t verify;      // DataMode::Verify
  int32_t work;        // index in the launch (status slot)
};

// Written by the kernel with volatile stores; read by the host once the
// launch's event completed (or live, for a progress report).
struct WorkStatus {
  int32_t state;
  int32_t waitingFor;  // WaitKind
  uint64_t slice;      // current slice, and how many there are
  uint64_t slices;
  uint64_t step;    // absolute step of the current slice
  uint64_t offset;  // payload offset of the current slice
  uint64_t want;    // what the wait needed (counter value or flag)
  uint64_t seen;    // what it last saw
  uint64_t line;    // LL/LL128: the line waited for
  uint64_t
      badByte;   // kMismatch: message byte; kBadUnpackCount: the count; kBadUnpackEntry: the entry
  uint32_t got;  // kBadUnpackEntry: the entry's length
  uint32_t expected;  // kBadUnpackEntry: its destination offset (low 32 bits)
};

struct LaunchArgs {
  const WorkDesc* works;      // grouped by connection, launch order within a group
  const int32_t* groupStart;  // block b runs works [groupStart[b], groupStart[b + 1])
  WorkStatus* status;         // indexed by WorkDesc::work
  int32_t* stop;              // StopReason
  uint64_t timeoutNs;         // a wait without progress for this long fails
};

// Launches the device works on `stream` as `blocks` blocks of kThreads.
cudaError_t launchDeviceWorks(const LaunchArgs& args, int blocks, cudaStream_t stream);
// How many blocks of the kernel fit on `device` at once (every block of a
// launch must be resident: they wait on each other through the proxy).
cudaError_t residentBlocks(int device, int* out);

}  // namespace ncclnet::transport::cuda_peer
