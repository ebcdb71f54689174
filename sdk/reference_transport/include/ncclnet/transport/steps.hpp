// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): step arithmetic shared by the proxy and
// the device side.
//
// Every connection counts steps from 0 for its whole life. An operation
// starts at `base` (the previous operation's end, rounded up to chunkSteps)
// and runs `nsteps` steps; step k of the operation uses step slot
// (base + k) % kSteps. Counters advance by sliceSteps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ncclnet/transport/constants.hpp"
#include "ncclnet/transport/host_device.hpp"

namespace ncclnet::transport {

NCCLNET_HD constexpr uint64_t roundUp(uint64_t value, uint64_t multiple) {
  return multiple == 0 ? value : (value + multiple - 1) / multiple * multiple;
}
NCCLNET_HD constexpr size_t divUp(size_t a, size_t b) {
  return (a + b - 1) / b;
}

// The slot of step `counter` of an operation starting at `base`.
NCCLNET_HD constexpr int slotOf(uint64_t base, uint64_t counter) {
  return static_cast<int>((base + counter) % kSteps);
}

// Payload bytes one slice of `sliceSteps` steps carries in a step buffer of
// `stepSize` bytes: all of it for SIMPLE, half for LL (flags interleave),
// 120 of every 128 for LL128.
size_t sliceCapacity(Protocol p, size_t stepSize, int sliceSteps);

// Bytes a payload occupies in the step buffer, which is also what the
// producer writes into connFifo.size: payload for SIMPLE, whole lines for
// LL (16 B per 8 payload bytes) and LL128 (128 B per 120).
NCCLNET_HD constexpr size_t encodedBytes(Protocol p, size_t payload) {
  return p == Protocol::LL      ? divUp(payload, kLLDataBytesPerLine) * kLLLineBytes
         : p == Protocol::LL128 ? divUp(payload, kLL128DataBytesPerLine) * kLL128LineBytes
                                : payload;
}

// Slices an operation of `nbytes` is cut into, each up to `capacity`
// payload bytes; at least one (a zero-byte operation still moves one empty
// step, as in NCCL).
NCCLNET_HD constexpr size_t sliceCount(size_t nbytes, size_t capacity) {
  return nbytes == 0 ? 1 : divUp(nbytes, capacity);
}
// Payload bytes of slice `slice`: full slices, then the remainder.
NCCLNET_HD constexpr size_t sliceBytesAt(size_t nbytes, size_t capacity, size_t slice) {
  return slice * capacity >= nbytes             ? 0
         : nbytes - slice * capacity < capacity ? nbytes - slice * capacity
                                                : capacity;
}

// How an operation of `nbytes` is cut (sliceCount, sliceBytesAt), as a
// list.
struct StepPlan {
  int nsteps = 0;                  // a multiple of sliceSteps
  std::vector<size_t> sliceBytes;  // payload bytes per slice
};
StepPlan planSteps(size_t nbytes, size_t capacity, int sliceSteps);

}  // namespace ncclnet::transport
