// SPDX-License-Identifier: Apache-2.0
// softverbs: requester and responder sides of an RC queue pair.
#include "engine.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "device.hpp"

namespace softverbs {
namespace {

ibv_wc completion(const Qp* qp, uint64_t wrId, ibv_wc_status status, ibv_wc_opcode opcode,
                  uint32_t byteLen) {
  ibv_wc wc;
  std::memset(&wc, 0, sizeof(wc));
  wc.wr_id = wrId;
  wc.status = status;
  wc.opcode = opcode;
  wc.byte_len = byteLen;
  wc.qp_num = qp->qp.qp_num;
  wc.src_qp = qp->remoteQpn;
  return wc;
}

// The requester's view of one finished WR: a CQE when it was signalled or
// failed (an error always completes, signalled or not).
void completeSend(Qp* qp, const SendWqe& w, ibv_wc_status status) {
  if (status == IBV_WC_SUCCESS && !w.signaled) return;
  qp->sendCq->push(completion(qp, w.wrId, status, w.opcode, w.byteLen));
}

// A WR that failed its local checks when posted completes once it reaches
// the head of the send queue, so completions stay in posting order.
void settleLocalFailures(Qp* qp) {
  if (!qp->sq.empty() && qp->sq.front().localError != IBV_WC_SUCCESS) {
    failHead(qp, qp->sq.front().localError);
  }
}

void reply(Device& device, uint32_t peer, const PacketHeader& request, Op op, ibv_wc_status status,
           std::vector<char> payload = {}) {
  OutPacket out;
  out.header.op = op;
  out.header.status = static_cast<uint16_t>(status);
  out.header.dstQpn = request.srcQpn;
  out.header.srcQpn = request.dstQpn;
  out.header.pkey = request.pkey;
  out.header.seq = request.seq;
  out.header.length = payload.size();
  out.payload = std::move(payload);
  device.transmit(peer, std::move(out));  // an unreachable requester learns nothing
}

// Responder-side error (class C in the IB spec): NAK the requester, and the
// responder QP itself goes to the error state. When no receive WQE of the
// responder completed with the error (RDMA WRITE and READ consume none), the
// responder learns of it only through an affiliated async event, raised
// before its outstanding WRs are flushed: access violations are
// IBV_EVENT_QP_ACCESS_ERR, invalid requests IBV_EVENT_QP_REQ_ERR, anything
// else (a failed copy into GPU memory) IBV_EVENT_QP_FATAL.
void responderError(Device& device, Qp* qp, uint32_t peer, const PacketHeader& h,
                    ibv_wc_status status, bool reportedByCqe = false) {
  reply(device, peer, h, h.op == Op::kReadReq ? Op::kReadResp : Op::kAck, status);
  if (!reportedByCqe) {
    raiseQpEvent(qp, status == IBV_WC_REM_ACCESS_ERR    ? IBV_EVENT_QP_ACCESS_ERR
                     : status == IBV_WC_REM_INV_REQ_ERR ? IBV_EVENT_QP_REQ_ERR
                                                        : IBV_EVENT_QP_FATAL);
  }
  enterError(qp);
}

// The IB spec's P_Key check: same partition (low 15 bits), and not both
// limited members (bit 15 clear). A request that fails it is dropped.
bool pkeysMatch(uint16_t a, uint16_t b) {
  return (a & 0x7fff) == (b & 0x7fff) && ((a | b) & 0x8000) != 0;
}

// The MR that `rkey` names, if it lets a peer of `qp` touch [addr, addr+len)
// with `access`.
Mr* remoteTarget(Device& device, Qp* qp, uint32_t rkey, uint64_t addr, uint64_t length,
                 unsigned access) {
  if ((qp->access & access) == 0) return nullptr;
  Mr* mr = device.findMr(rkey);
  if (mr == nullptr || mr->pd != qp->pd || (mr->access & access) == 0) return nullptr;
  if (mr->mr.rkey != rkey || !mr->covers(addr, length)) return nullptr;
  return mr;
}

bool localSgeOk(Device& device, Qp* qp, const ibv_sge& sge, unsigned access) {
  if (sge.length == 0) return true;
  Mr* mr = device.findMr(sge.lkey);
  return mr != nullptr && mr->pd == qp->pd && mr->mr.lkey == sge.lkey &&
         (access == 0 || (mr->access & access) != 0) && mr->covers(sge.addr, sge.length);
}

// One line on stderr the first time a CUDA copy fails: the completion
// status alone would not say that the GPU, not the peer, was the problem.
void reportCopyFailure(const char* what) {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) std::fprintf(stderr, "softverbs: CUDA copy failed: %s\n", what);
}

// Places `bytes` at `dst` inside `mr`: device memory through CUDA, host
// memory in ascending address order. False when the CUDA copy failed.
bool land(const Mr& mr, void* dst, const void* src, size_t bytes) {
  if (!mr.gpu) {
    placeAscending(dst, src, bytes);
    return true;
  }
  if (mr.gpu->write(dst, src, bytes)) return true;
  reportCopyFailure("host to device");
  return false;
}

// Copies `data` over the scatter list. While device memory is registered,
// each sge's MR is looked up again: it may be device memory, or gone (a
// deregistered MR is a protection error, as on an HCA).
ibv_wc_status scatter(Device& device, const std::vector<ibv_sge>& sges,
                      const std::vector<char>& data) {
  const bool lookUp = GpuMemory::anyRegistered();
  size_t offset = 0;
  for (const ibv_sge& sge : sges) {
    if (offset == data.size()) break;
    size_t n = std::min<size_t>(sge.length, data.size() - offset);
    auto* dst = reinterpret_cast<void*>(sge.addr);
    if (n == 0) continue;
    if (!lookUp) {
      placeAscending(dst, data.data() + offset, n);
    } else {
      const Mr* mr = device.findMr(sge.lkey);
      if (mr == nullptr || !land(*mr, dst, data.data() + offset, n)) return IBV_WC_LOC_PROT_ERR;
    }
    offset += n;
  }
  return offset == data.size() ? IBV_WC_SUCCESS : IBV_WC_LOC_LEN_ERR;
}

// Reads one sge's bytes for the wire into `out`. Device memory is read
// through CUDA. Inline data is read by the CPU at post time, as every
// provider does, so it must be host memory: EINVAL otherwise.
int gather(Device& device, const ibv_sge& sge, bool inlined, char* out, ibv_wc_status* status) {
  const auto* src = reinterpret_cast<const void*>(sge.addr);
  if (sge.length == 0) return 0;  // an empty payload has no buffer to copy into
  if (GpuMemory::anyRegistered()) {
    if (inlined && GpuMemory::isDevice(src)) {
      std::fprintf(stderr,
                   "softverbs: inline data at %p is GPU memory; post it without "
                   "IBV_SEND_INLINE\n",
                   src);
      return EINVAL;
    }
    const Mr* mr = inlined ? nullptr : device.findMr(sge.lkey);
    if (mr != nullptr && mr->gpu) {
      if (!mr->gpu->read(out, src, sge.length)) {
        reportCopyFailure("device to host");
        *status = IBV_WC_LOC_PROT_ERR;
      }
      return 0;
    }
  }
  std::memcpy(out, src, sge.length);
  return 0;
}

uint64_t capacityOf(const std::vector<ibv_sge>& sges) {
  uint64_t total = 0;
  for (const ibv_sge& sge : sges) total += sge.length;
  return total;
}

// Executes one request as the responder. False when it needs a receive and
// none is posted: the caller holds it (and everything after it) until one is.
bool execute(Device& device, Qp* qp, uint32_t peer, Inbound& in) {
  const PacketHeader& h = in.header;
  switch (h.op) {
    case Op::kWrite:
    case Op::kWriteImm: {
      if (h.op == Op::kWriteImm && qp->rq.empty()) return false;
      if (h.length > 0) {
        Mr* target = remoteTarget(device, qp, h.rkey, h.raddr, h.length, IBV_ACCESS_REMOTE_WRITE);
        if (target == nullptr) {
          responderError(device, qp, peer, h, IBV_WC_REM_ACCESS_ERR);
          return true;
        }
        if (!land(*target, reinterpret_cast<void*>(h.raddr), in.payload.data(), h.length)) {
          responderError(device, qp, peer, h, IBV_WC_REM_OP_ERR);
          return true;
        }
      }
      if (h.op == Op::kWriteImm) {
        RecvWqe r = std::move(qp->rq.front());
        qp->rq.pop_front();
        ibv_wc wc = completion(qp, r.wrId, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
                               static_cast<uint32_t>(h.length));
        wc.imm_data = h.imm;
        wc.wc_flags = IBV_WC_WITH_IMM;
        qp->recvCq->push(wc);
      }
      reply(device, peer, h, Op::kAck, IBV_WC_SUCCESS);
      return true;
    }
    case Op::kSend: {
      if (qp->rq.empty()) return false;
      RecvWqe r = std::move(qp->rq.front());
      qp->rq.pop_front();
      for (const ibv_sge& sge : r.sges) {
        if (!localSgeOk(device, qp, sge, IBV_ACCESS_LOCAL_WRITE)) {
          qp->recvCq->push(completion(qp, r.wrId, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0));
          responderError(device, qp, peer, h, IBV_WC_REM_OP_ERR, true);
          return true;
        }
      }
      if (h.length > capacityOf(r.sges)) {
        qp->recvCq->push(completion(qp, r.wrId, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0));
        responderError(device, qp, peer, h, IBV_WC_REM_INV_REQ_ERR, true);
        return true;
      }
      if (scatter(device, r.sges, in.payload) != IBV_WC_SUCCESS) {
        qp->recvCq->push(completion(qp, r.wrId, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0));
        responderError(device, qp, peer, h, IBV_WC_REM_OP_ERR, true);
        return true;
      }
      ibv_wc wc =
          completion(qp, r.wrId, IBV_WC_SUCCESS, IBV_WC_RECV, static_cast<uint32_t>(h.length));
      if (h.hasImm) {
        wc.imm_data = h.imm;
        wc.wc_flags = IBV_WC_WITH_IMM;
      }
      qp->recvCq->push(wc);
      reply(device, peer, h, Op::kAck, IBV_WC_SUCCESS);
      return true;
    }
    case Op::kReadReq: {
      // The length is the requester's word: the MR must cover it before
      // anything is allocated for it.
      Mr* source = nullptr;
      if (h.length > 0) {
        source = remoteTarget(device, qp, h.rkey, h.raddr, h.length, IBV_ACCESS_REMOTE_READ);
        if (source == nullptr) {
          responderError(device, qp, peer, h, IBV_WC_REM_ACCESS_ERR);
          return true;
        }
      }
      std::vector<char> data(h.length);
      if (h.length > 0) {
        const auto* from = reinterpret_cast<const void*>(h.raddr);
        if (!source->gpu) {
          std::memcpy(data.data(), from, h.length);
        } else if (!source->gpu->read(data.data(), from, h.length)) {
          reportCopyFailure("device to host");
          responderError(device, qp, peer, h, IBV_WC_REM_OP_ERR);
          return true;
        }
      }
      reply(device, peer, h, Op::kReadResp, IBV_WC_SUCCESS, std::move(data));
      return true;
    }
    default: responderError(device, qp, peer, h, IBV_WC_REM_INV_REQ_ERR); return true;
  }
}

// Runs held requests, oldest first, while receives are available.
void runHeld(Device& device, Qp* qp) {
  while (!qp->held.empty() && (qp->qp.state == IBV_QPS_RTR || qp->qp.state == IBV_QPS_RTS)) {
    if (!execute(device, qp, qp->remoteDevice, qp->held.front())) return;
    if (!qp->held.empty()) qp->held.pop_front();  // enterError may have cleared it
  }
}

// The requester side: the responder's verdict on the oldest WR.
void onResponse(Qp* qp, Inbound& in) {
  const PacketHeader& h = in.header;
  if (qp->qp.state != IBV_QPS_RTS && qp->qp.state != IBV_QPS_SQD) return;  // flushed already
  if (qp->sq.empty() || qp->sq.front().seq != h.seq) return;
  auto status = static_cast<ibv_wc_status>(h.status);
  if (status != IBV_WC_SUCCESS) {
    failHead(qp, status);
    return;
  }
  SendWqe w = std::move(qp->sq.front());
  if (h.op == Op::kReadResp) {
    ibv_wc_status placed = scatter(*qp->device, w.readTargets, in.payload);
    if (placed != IBV_WC_SUCCESS) {
      failHead(qp, placed);
      return;
    }
  }
  qp->sq.pop_front();
  completeSend(qp, w, IBV_WC_SUCCESS);
  settleLocalFailures(qp);
}

struct WireOp {
  Op op;
  ibv_wc_opcode completion;
};

bool wireOpFor(ibv_wr_opcode opcode, WireOp* out) {
  switch (opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM: *out = {Op::kSend, IBV_WC_SEND}; return true;
    case IBV_WR_RDMA_WRITE: *out = {Op::kWrite, IBV_WC_RDMA_WRITE}; return true;
    case IBV_WR_RDMA_WRITE_WITH_IMM: *out = {Op::kWriteImm, IBV_WC_RDMA_WRITE}; return true;
    case IBV_WR_RDMA_READ: *out = {Op::kReadReq, IBV_WC_RDMA_READ}; return true;
    default: return false;
  }
}

}  // namespace

void enterError(Qp* qp) {
  qp->qp.state = IBV_QPS_ERR;
  qp->sendHeld = false;
  while (!qp->sq.empty()) {
    completeSend(qp, qp->sq.front(), IBV_WC_WR_FLUSH_ERR);
    qp->sq.pop_front();
  }
  while (!qp->rq.empty()) {
    qp->recvCq->push(completion(qp, qp->rq.front().wrId, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0));
    qp->rq.pop_front();
  }
  qp->held.clear();
}

void failHead(Qp* qp, ibv_wc_status status) {
  if (!qp->sq.empty()) {
    completeSend(qp, qp->sq.front(), status);
    qp->sq.pop_front();
  }
  enterError(qp);
}

void resetQueues(Qp* qp) {
  qp->sq.clear();
  qp->rq.clear();
  qp->held.clear();
  qp->sendHeld = false;
}

void handleInbound(Device& device, uint32_t peer, Inbound&& in) {
  const PacketHeader& h = in.header;
  Qp* qp = device.findQp(h.dstQpn);
  bool fromPeer = qp != nullptr && qp->remoteDevice == peer && qp->remoteQpn == h.srcQpn;
  if (h.op == Op::kAck || h.op == Op::kReadResp) {
    if (fromPeer) onResponse(qp, in);
    return;
  }
  if (!fromPeer || !pkeysMatch(h.pkey, qp->pkey) ||
      (qp->qp.state != IBV_QPS_RTR && qp->qp.state != IBV_QPS_RTS)) {
    // Real hardware drops the packet and the requester retries until
    // retry_cnt runs out; answering at once has the same outcome, sooner.
    reply(device, peer, h, h.op == Op::kReadReq ? Op::kReadResp : Op::kAck, IBV_WC_RETRY_EXC_ERR);
    return;
  }
  if (!qp->held.empty() || !execute(device, qp, peer, in)) qp->held.push_back(std::move(in));
}

int postSend(Qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr) {
  Device& device = *qp->device;
  std::lock_guard<std::mutex> lock(device.mutex);
  ibv_qp_state state = qp->qp.state;
  if (state != IBV_QPS_RTS && state != IBV_QPS_ERR && state != IBV_QPS_SQD) {
    *badWr = wr;
    return EINVAL;  // nothing may be sent before RTS
  }
  bool linkDown = false;
  for (; wr != nullptr; wr = wr->next) {
    WireOp op;
    if (!wireOpFor(wr->opcode, &op) || wr->num_sge < 0 ||
        static_cast<uint32_t>(wr->num_sge) > qp->cap.max_send_sge) {
      *badWr = wr;
      return EINVAL;
    }
    if (qp->sq.size() >= qp->cap.max_send_wr) {
      *badWr = wr;
      return ENOMEM;
    }
    uint64_t total = 0;
    for (int i = 0; i < wr->num_sge; i++) total += wr->sg_list[i].length;
    bool inlined = (wr->send_flags & IBV_SEND_INLINE) && op.op != Op::kReadReq;
    if (inlined && total > qp->cap.max_inline_data) {
      *badWr = wr;
      return EINVAL;
    }
    SendWqe w;
    w.wrId = wr->wr_id;
    w.seq = qp->nextSeq++;
    w.opcode = op.completion;
    w.signaled = qp->signalAll || (wr->send_flags & IBV_SEND_SIGNALED);
    w.byteLen = static_cast<uint32_t>(total);
    if (state == IBV_QPS_ERR) {  // posting in the error state flushes at once
      completeSend(qp, w, IBV_WC_WR_FLUSH_ERR);
      continue;
    }
    OutPacket out;
    out.header.op = op.op;
    out.header.dstQpn = qp->remoteQpn;
    out.header.srcQpn = qp->qp.qp_num;
    out.header.pkey = qp->pkey;
    out.header.seq = w.seq;
    out.header.raddr = wr->wr.rdma.remote_addr;
    out.header.rkey = wr->wr.rdma.rkey;
    out.header.hasImm =
        wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    out.header.imm = wr->imm_data;
    out.header.length = total;
    unsigned access = op.op == Op::kReadReq ? IBV_ACCESS_LOCAL_WRITE : 0;
    for (int i = 0; i < wr->num_sge && w.localError == IBV_WC_SUCCESS; i++) {
      if (!inlined && !localSgeOk(device, qp, wr->sg_list[i], access)) {
        w.localError = IBV_WC_LOC_PROT_ERR;
      }
    }
    if (op.op == Op::kReadReq) {
      w.readTargets.assign(wr->sg_list, wr->sg_list + wr->num_sge);
    } else if (w.localError == IBV_WC_SUCCESS) {
      // The payload is gathered now; the HCA reads it later, but the caller
      // may not touch the buffers before the completion either way.
      out.payload.resize(total);
      size_t offset = 0;
      for (int i = 0; i < wr->num_sge; i++) {
        const ibv_sge& sge = wr->sg_list[i];
        int rc = gather(device, sge, inlined, out.payload.data() + offset, &w.localError);
        if (rc != 0) {
          *badWr = wr;
          return rc;
        }
        offset += sge.length;
      }
    }
    bool failed = w.localError != IBV_WC_SUCCESS;
    qp->sq.push_back(std::move(w));
    if (failed) {
      qp->sendHeld = true;  // later WRs wait: they will be flushed
    } else if (!qp->sendHeld && !device.transmit(qp->remoteDevice, std::move(out))) {
      linkDown = true;
    }
  }
  if (linkDown) failHead(qp, IBV_WC_RETRY_EXC_ERR);
  settleLocalFailures(qp);
  return 0;
}

int postRecv(Qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr) {
  Device& device = *qp->device;
  std::lock_guard<std::mutex> lock(device.mutex);
  if (qp->qp.state == IBV_QPS_RESET) {
    *badWr = wr;
    return EINVAL;
  }
  for (; wr != nullptr; wr = wr->next) {
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > qp->cap.max_recv_sge) {
      *badWr = wr;
      return EINVAL;
    }
    if (qp->qp.state == IBV_QPS_ERR) {
      qp->recvCq->push(completion(qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0));
      continue;
    }
    if (qp->rq.size() >= qp->cap.max_recv_wr) {
      *badWr = wr;
      return ENOMEM;
    }
    RecvWqe r;
    r.wrId = wr->wr_id;
    r.sges.assign(wr->sg_list, wr->sg_list + wr->num_sge);
    qp->rq.push_back(std::move(r));
  }
  runHeld(device, qp);
  return 0;
}

}  // namespace softverbs
