// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the receive state machine (NCCL's
// recvProxyProgress). Subs sharing a recvComm form groups of at most
// maxRecvs and are posted as one grouped irecv. Each pass runs the first of
// these stages that moves anything, over every group:
//   post      irecv one step for every sub of a group (shared: pool slots)
//   receive   the irecv finished: (SIMPLE over GDR) iflush
//   transmit  the flush finished: publish tail to the device
//   done      the device consumed the step (head): irecvConsumed, free slot
#include <algorithm>
#include <cstring>

#include "ncclnet/transport/steps.hpp"
#include "proxy_progress.hpp"

namespace ncclnet::transport::detail {

namespace {

// Reorders subs so those sharing a recvComm are adjacent, in groups of at
// most maxRecvs (first come, first grouped; order otherwise kept).
void formGroups(ProxyOpState& op) {
  std::vector<SubProgress> ordered;
  std::vector<bool> taken(op.subs.size(), false);
  for (size_t s = 0; s < op.subs.size(); s++) {
    if (taken[s]) continue;
    RecvGroup g{.first = static_cast<int>(ordered.size()), .count = 0};
    void* comm = op.subs[s].conn->netComm;
    int maxRecvs = std::max(1, op.subs[s].conn->maxRecvs);
    for (size_t t = s; t < op.subs.size() && g.count < maxRecvs; t++) {
      if (taken[t] || op.subs[t].conn->netComm != comm) continue;
      taken[t] = true;
      op.subs[t].group = static_cast<int>(op.groups.size());
      ordered.push_back(op.subs[t]);
      g.count++;
    }
    op.groups.push_back(g);
  }
  op.subs = std::move(ordered);
}

void start(ProxyOpState& op) {
  formGroups(op);
  for (SubProgress& sub : op.subs) {
    sub.base = roundUp(sub.conn->step, op.chunkSteps);
    sub.conn->step = sub.base + sub.nsteps;
    sub.done = 0;
  }
  op.maxDepth = std::min(kSteps, kSharedSteps / static_cast<int>(op.subs.size()));
  op.started = true;
}

// The buffer and size sub `s` receives group step `k` into.
void recvBuffer(TransportState& core, ProxyOpState& op, int s, int k, void** ptr, size_t* size) {
  SubProgress& sub = op.subs[s];
  ConnectionState& c = *sub.conn;
  int slot = slotOf(sub.base, k);
  if (sub.userBuffer != nullptr) {
    size_t at = static_cast<size_t>(k) * core.config.maxNetSize;
    *ptr = sub.userBuffer + at;
    *size = std::min(core.config.maxNetSize, sub.userBytes - std::min(at, sub.userBytes));
    return;
  }
  if (op.protocol == Protocol::Simple && c.shared) {
    int sharedSlot = (k % op.maxDepth) * static_cast<int>(op.subs.size()) + s;
    size_t offset = c.pool->offset(core.config.p2pChunkSize, c.spec.channelId, sharedSlot);
    // Read by the device after the tail that follows, which is a release.
    c.recvMem->connFifo[slot].offset.store(static_cast<int32_t>(offset), std::memory_order_relaxed);
    *ptr = c.buffers[index(Protocol::Simple)] + offset;
    *size = core.config.p2pChunkSize;
    return;
  }
  size_t stepSize = c.stepSize(op.protocol);
  *ptr = c.buffers[index(op.protocol)] + static_cast<size_t>(slot) * stepSize;
  *size = stepSize * op.sliceSteps;
}

// A registered receive buffer may be written only once the device said so:
// it signals with the connFifo size of the operation's first step, since
// the buffer may still be in use by the kernel that ran before.
bool userBufferReady(SubProgress& sub) {
  if (!sub.userReady) {
    const ConnFifoEntry& e = sub.conn->recvMem->connFifo[slotOf(sub.base, 0)];
    sub.userReady = e.size.load(std::memory_order_acquire) != kFifoEmpty;
  }
  return sub.userReady;
}

ncclResult_t postGroup(TransportState& core, ProxyOpState& op, RecvGroup& g, bool* progressed) {
  int k = g.posted;
  void* ptrs[kMaxSubs];
  size_t sizes[kMaxSubs];
  int tags[kMaxSubs];
  void* mhandles[kMaxSubs];
  void* phandles[kMaxSubs];
  uint64_t members = 0;
  int n = 0;
  for (int i = 0; i < g.count; i++) {
    SubProgress& sub = op.subs[g.first + i];
    if (k >= sub.nsteps) continue;
    if (k >= sub.done + op.maxDepth) return ncclSuccess;  // one sub is full: post none
    if (sub.userBuffer != nullptr && !userBufferReady(sub)) return ncclSuccess;
    recvBuffer(core, op, g.first + i, k, &ptrs[n], &sizes[n]);
    tags[n] = sub.conn->spec.tpRemoteRank;
    mhandles[n] = sub.userBuffer ? sub.userMhandle : sub.conn->mhandles[index(op.protocol)];
    phandles[n] = &sub.phandles[k % kSteps];
    members |= uint64_t{1} << i;
    n++;
  }
  if (n == 0) return ncclSuccess;
  ConnectionState& first = *op.subs[g.first].conn;
  void** request = &g.requests[k % kSteps];
  // LL/LL128 receivers learn of arrival from the flags, so a lone receive
  // may tell the plugin it need not report completion (the plugin must
  // still overwrite *request).
  bool optional = core.config.optionalRecvCompletion && n == 1 && op.protocol != Protocol::Simple;
  *request = optional ? reinterpret_cast<void*>(kOptionalRecvCompletion) : nullptr;
  RT_CHECK(core.log,
           core.net.irecv(first.netComm, n, ptrs, sizes, tags, mhandles, phandles, request));
  if (*request == nullptr) return ncclSuccess;  // the plugin is full: retry next pass
  g.members[k % kSteps] = members;
  g.consumed[k % kSteps] = *request;
  g.consumedCount[k % kSteps] = n;
  g.posted += op.sliceSteps;
  *progressed = true;
  return ncclSuccess;
}

// A receive needs a flush when its buffer is in device memory (GDR) and the
// platform says so (or NCCL_NET_FORCE_FLUSH); only SIMPLE, only if bytes came.
bool needsFlush(TransportState& core, const ConnectionState& c) {
  return c.spec.useGdr && (c.spec.needFlush || core.config.forceFlush);
}

ncclResult_t receiveGroup(TransportState& core, ProxyOpState& op, RecvGroup& g, bool* progressed) {
  if (g.posted <= g.received) return ncclSuccess;
  int k = g.received;
  int finished = 0;
  int sizes[kMaxSubs];
  std::memset(sizes, 0, sizeof(sizes));
  RT_CHECK(core.log, core.net.test(g.requests[k % kSteps], &finished, sizes));
  if (!finished) return ncclSuccess;
  g.requests[k % kSteps] = nullptr;
  void* ptrs[kMaxSubs];
  void* mhandles[kMaxSubs];
  int n = 0;
  int64_t total = 0;
  bool flush = false;
  for (int i = 0; i < g.count; i++) {
    if (!(g.members[k % kSteps] & (uint64_t{1} << i))) continue;
    SubProgress& sub = op.subs[g.first + i];
    ConnectionState& c = *sub.conn;
    int slot = slotOf(sub.base, k);
    c.recvMem->connFifo[slot].size.store(kFifoEmpty, std::memory_order_relaxed);
    sub.transSize = sizes[n];
    total += sizes[n];
    flush = flush || needsFlush(core, c);
    if (sub.userBuffer != nullptr) {
      ptrs[n] = sub.userBuffer + static_cast<size_t>(k) * core.config.maxNetSize;
      mhandles[n] = sub.userMhandle;
    } else {
      ptrs[n] =
          (op.protocol == Protocol::Simple && c.shared)
              ? c.buffers[index(Protocol::Simple)] +
                    c.recvMem->connFifo[slot].offset.load(std::memory_order_relaxed)
              : c.buffers[index(op.protocol)] + static_cast<size_t>(slot) * c.stepSize(op.protocol);
      mhandles[n] = c.mhandles[index(op.protocol)];
    }
    n++;
  }
  g.received += op.sliceSteps;
  *progressed = true;
  if (total > 0 && op.protocol == Protocol::Simple && flush) {
    ConnectionState& first = *op.subs[g.first].conn;
    // The flush request waits in the same slot; transmit tests it.
    RT_CHECK(core.log,
             core.net.iflush(first.netComm, n, ptrs, sizes, mhandles, &g.requests[k % kSteps]));
  }
  return ncclSuccess;
}

ncclResult_t transmitGroup(TransportState& core, ProxyOpState& op, RecvGroup& g, bool* progressed) {
  if (g.received <= g.transmitted) return ncclSuccess;
  int k = g.transmitted;
  int finished = 1;  // no flush request: nothing to wait for
  void* flushRequest = g.requests[k % kSteps];
  if (flushRequest != nullptr) RT_CHECK(core.log, core.net.test(flushRequest, &finished, nullptr));
  if (!finished) return ncclSuccess;
  g.requests[k % kSteps] = nullptr;
  g.transmitted += op.sliceSteps;
  for (int i = 0; i < g.count; i++) {
    SubProgress& sub = op.subs[g.first + i];
    if (k >= sub.nsteps) continue;
    // Release: the received (and flushed) bytes before the tail.
    sub.conn->recvMem->tail.store(sub.base + g.transmitted, std::memory_order_release);
  }
  *progressed = true;
  return ncclSuccess;
}

ncclResult_t finishSteps(TransportState& core, ProxyOpState& op, RecvGroup& g, bool* progressed) {
  for (int i = 0; i < g.count; i++) {
    SubProgress& sub = op.subs[g.first + i];
    if (sub.done == sub.nsteps) continue;
    uint64_t head = sub.conn->sendMem->head.load(std::memory_order_acquire);
    // LL/LL128 devices may acknowledge a step before it was even received:
    // never run ahead of what was handed to them.
    while (head > sub.base + sub.done && g.transmitted > sub.done) {
      int k = sub.done;
      // NCCL calls irecvConsumed when the first sub of the group has
      // consumed the step; we do the same, whichever sub that is.
      if (g.consumed[k % kSteps] != nullptr) {
        if (core.net.provides(host::Optional::IrecvConsumed)) {
          RT_CHECK(core.log,
                   core.net.irecvConsumed(op.subs[g.first].conn->netComm,
                                          g.consumedCount[k % kSteps], g.consumed[k % kSteps]));
        }
        g.consumed[k % kSteps] = nullptr;
      }
      sub.done += op.sliceSteps;
      *progressed = true;
      if (sub.done == sub.nsteps) {
        op.finished++;
        break;
      }
    }
  }
  return ncclSuccess;
}

using Stage = ncclResult_t (*)(TransportState&, ProxyOpState&, RecvGroup&, bool*);

}  // namespace

ncclResult_t recvProgress(TransportState& core, ProxyOpState& op, bool* progressed) {
  if (!op.started) start(op);
  // Like NCCL, a pass stops after the first stage that moved anything, so
  // new receives are posted before older ones are tested.
  const Stage stages[] = {postGroup, receiveGroup, transmitGroup, finishSteps};
  for (Stage stage : stages) {
    bool moved = false;
    for (RecvGroup& g : op.groups) RT_CHECK(core.log, stage(core, op, g, &moved));
    if (moved) {
      *progressed = true;
      return ncclSuccess;
    }
  }
  return ncclSuccess;
}

}  // namespace ncclnet::transport::detail
