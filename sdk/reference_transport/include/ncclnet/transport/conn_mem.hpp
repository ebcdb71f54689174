// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the control words shared by the proxy
// and the device side of one connection (NCCL's ncclSendMem/ncclRecvMem).
//
// Who writes what, per connection direction:
//
//   send connection (device produces, proxy sends)
//     head             proxy  -> device  credits: device may fill steps < head + kSteps
//     tail             device -> proxy   steps < tail are complete in the buffer (SIMPLE, LL128)
//     connFifo.size    device -> proxy   bytes in this step; proxy resets to kFifoEmpty
//     connFifo.offset  proxy  -> device  shared mode: where this step's buffer is in the pool
//
//   recv connection (proxy receives, device consumes)
//     tail             proxy  -> device  steps < tail have arrived (and are flushed)
//     head             device -> proxy   steps < head are consumed; proxy may reuse the slot
//     connFifo.offset  proxy  -> device  shared mode: where this step's buffer is in the pool
//     connFifo.size    proxy resets to kFifoEmpty when the step's receive completes
//
// Memory ordering (NCCL uses volatile plus fences; we name the orders):
//   * Every publication of a counter (head, tail) is a release store, and
//     every read of one is an acquire load. So whatever a side wrote before
//     publishing (payload, connFifo entries) is visible to the other side
//     once it sees the new counter value.
//   * The proxy resets connFifo[slot].size to kFifoEmpty *before* it
//     publishes the head that lets the device reuse the slot (the release on
//     head orders the reset first), so the device never sees a stale size.
//   * LL/LL128 payload is published without a counter: the flag shares an
//     8-byte word with the data (LL) or ends the 128-byte line (LL128). The
//     producer writes flag words with release stores; the consumer reads them
//     with acquire loads.
// The words are lock-free std::atomic of the same size as NCCL's plain
// integers, so a GPU peer can map the same memory and use volatile or
// ld.acquire/st.release on it.
#pragma once

#include <atomic>
#include <cstdint>

#include "ncclnet/transport/constants.hpp"

namespace ncclnet::transport {

constexpr int64_t kFifoEmpty = -1;     // connFifo.size: no step published in this slot
constexpr int32_t kFifoNoOffset = -1;  // connFifo.offset: no shared buffer assigned
enum class FifoMode : int32_t { Normal = 0, Offset = 1 };  // NCCL_MODE_NORMAL / _OFFSET

struct ConnFifoEntry {
  std::atomic<int32_t> mode{static_cast<int32_t>(FifoMode::Normal)};
  std::atomic<int32_t> offset{kFifoNoOffset};
  std::atomic<int64_t> size{kFifoEmpty};
  std::atomic<uint64_t> ptr{0};  // registered-buffer mode (not used by the CPU peer)
};

// Each lives on its own cache lines: head and tail are written by different
// agents and polled hard.
struct alignas(128) SendMem {
  std::atomic<uint64_t> head{0};
};

struct alignas(128) RecvMem {
  std::atomic<uint64_t> tail{0};
  alignas(64) ConnFifoEntry connFifo[kSteps];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "control words must be lock-free");
static_assert(std::atomic<int64_t>::is_always_lock_free, "control words must be lock-free");
static_assert(sizeof(std::atomic<uint64_t>) == 8, "a GPU peer maps these as plain 64-bit words");

}  // namespace ncclnet::transport
