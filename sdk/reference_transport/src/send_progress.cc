// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the send state machine (NCCL's
// sendProxyProgress). Per sub, at most one of these per pass, in order:
//   post      give the device a step (shared: with its pool offset)
//   transmit  the device filled a step: isend it
//   complete  the isend finished: free the slot, return credit
#include <algorithm>
#include <cassert>

#include "ncclnet/transport/steps.hpp"
#include "proxy_progress.hpp"

namespace ncclnet::transport::detail {

namespace {

void start(ProxyOpState& op) {
  for (SubProgress& sub : op.subs) {
    sub.base = roundUp(sub.conn->step, op.chunkSteps);
    sub.conn->step = sub.base + sub.nsteps;
    sub.posted = sub.transmitted = sub.done = 0;
  }
  op.maxDepth = std::min(kSteps, kSharedSteps / static_cast<int>(op.subs.size()));
  op.started = true;
}

bool post(TransportState& core, ProxyOpState& op, int s) {
  SubProgress& sub = op.subs[s];
  if (sub.posted >= sub.nsteps || sub.posted >= sub.done + op.maxDepth) return false;
  ConnectionState& c = *sub.conn;
  if (!c.shared || sub.userBuffer != nullptr) {
    // Dedicated buffers: the device already holds credit for every free
    // slot; nothing to publish. A registered buffer needs no pool slot, but
    // a shared connection's device still waits for the credit.
    sub.posted += op.sliceSteps;
    if (c.shared) c.sendMem->head.store(sub.base + sub.posted - kSteps, std::memory_order_release);
    return true;
  }
  int slot = slotOf(sub.base, sub.posted);
  int sharedSlot = (sub.posted % op.maxDepth) * static_cast<int>(op.subs.size()) + s;
  size_t offset = c.pool->offset(core.config.p2pChunkSize, c.spec.channelId, sharedSlot);
  c.recvMem->connFifo[slot].offset.store(static_cast<int32_t>(offset), std::memory_order_relaxed);
  sub.posted += op.sliceSteps;
  // Release: the offset is visible before the credit that lets the device use it.
  c.sendMem->head.store(sub.base + sub.posted - kSteps, std::memory_order_release);
  return true;
}

ncclResult_t transmit(TransportState& core, ProxyOpState& op, int s, bool* progressed) {
  SubProgress& sub = op.subs[s];
  if (sub.transmitted >= sub.posted || sub.transmitted >= sub.done + kSteps) return ncclSuccess;
  ConnectionState& c = *sub.conn;
  int slot = slotOf(sub.base, sub.transmitted);
  uint64_t step = sub.base + sub.transmitted;
  int64_t size = c.recvMem->connFifo[slot].size.load(std::memory_order_acquire);
  if (size == kFifoEmpty) return ncclSuccess;
  // LL publishes by flags only; SIMPLE and LL128 also advance tail.
  if (op.protocol != Protocol::LL && c.recvMem->tail.load(std::memory_order_acquire) <= step) {
    return ncclSuccess;
  }
  char* buff;
  void* mhandle;
  if (sub.userBuffer != nullptr) {
    buff = sub.userBuffer + static_cast<size_t>(sub.transmitted) * core.config.maxNetSize;
    mhandle = sub.userMhandle;
  } else {
    buff = stepBuffer(c, op.protocol, slot);
    mhandle = c.mhandles[index(op.protocol)];
    if (!stepReady(c, op.protocol, buff, size, step)) return ncclSuccess;
  }
  void** request = &sub.requests[slot];
  RT_CHECK(core.log, core.net.isend(c.netComm, buff, static_cast<size_t>(size), c.spec.tpRank,
                                    mhandle, &sub.phandles[slot], request));
  if (*request == nullptr) return ncclSuccess;  // the plugin is full: retry next pass
  sub.transSize = size;
  sub.transmitted += op.sliceSteps;
  *progressed = true;
  return ncclSuccess;
}

ncclResult_t complete(TransportState& core, ProxyOpState& op, int s, bool* progressed) {
  SubProgress& sub = op.subs[s];
  if (sub.done >= sub.transmitted) return ncclSuccess;
  ConnectionState& c = *sub.conn;
  int slot = slotOf(sub.base, sub.done);
  int finished = 0;
  int size = 0;
  RT_CHECK(core.log, core.net.test(sub.requests[slot], &finished, &size));
  if (!finished) return ncclSuccess;
  sub.requests[slot] = nullptr;
  // The size is reset before the head below lets the device reuse the slot.
  c.recvMem->connFifo[slot].size.store(kFifoEmpty, std::memory_order_relaxed);
  sub.done += op.sliceSteps;
  if (!c.shared) c.sendMem->head.store(sub.base + sub.done, std::memory_order_release);
  if (sub.done == sub.nsteps) op.finished++;
  *progressed = true;
  return ncclSuccess;
}

}  // namespace

ncclResult_t sendProgress(TransportState& core, ProxyOpState& op, bool* progressed) {
  if (!op.started) start(op);
  for (int s = 0; s < static_cast<int>(op.subs.size()); s++) {
    SubProgress& sub = op.subs[s];
    if (sub.done == sub.nsteps) continue;
    if (post(core, op, s)) {
      *progressed = true;
      continue;
    }
    bool sent = false;
    RT_CHECK(core.log, transmit(core, op, s, &sent));
    if (sent) {
      *progressed = true;
      continue;
    }
    RT_CHECK(core.log, complete(core, op, s, progressed));
    assert(sub.done <= sub.transmitted && sub.transmitted <= sub.posted &&
           sub.posted <= sub.nsteps && "send counters out of order");
  }
  return ncclSuccess;
}

}  // namespace ncclnet::transport::detail
