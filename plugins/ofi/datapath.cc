// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the data path (see comm.hpp): tagged sends and (grouped)
// receives, flushes, and test().
#include <climits>
#include <cstring>
#include <string>

#include "comm.hpp"
#include "remote.hpp"

namespace ncclnet::ofi {

// ---- requests ---------------------------------------------------------------

void Request::onCompletion(int index, const fi_cq_tagged_entry& entry) {
  if (!isSend && !isFlush) sizes[index] = static_cast<int>(entry.len);
  opDone[index] = true;
  finished++;
  comm->pending--;
  comm->remote()->progressed();
}

void Request::onError(int index, const fi_cq_err_entry& entry, const std::string& text) {
  opDone[index] = true;
  finished++;
  comm->pending--;
  // shm in libfabric 1.17 reports negative codes here; the spec says positive.
  int err = entry.err < 0 ? -entry.err : entry.err;
  if (err == FI_ECANCELED && cancelled) return;  // our own cancel after an error
  // A cancel we did not ask for is the provider's when the connection under
  // it dropped (tcp;ofi_rxm: FI_ECANCELED, the socket's errno as prov_errno):
  // judged by that errno, so a peer gone mid-receive is declared gone.
  if (err == FI_ECANCELED && entry.prov_errno != 0 &&
      resultFor(entry.prov_errno) == ncclRemoteError) {
    err = entry.prov_errno < 0 ? -entry.prov_errno : entry.prov_errno;
  }
  if (error == ncclSuccess) error = resultFor(err);
  const Logger& log = comm->endpoint().log();
  if (comm->gone()) {
    // Remote::declareGone said it once for every request of the peer.
    NCCLNET_INFO(log, NCCL_NET, "operation to a gone peer failed: %s", text.c_str());
    return;
  }
  const TagLayout& layout = comm->endpoint().tags();
  ncclResult_t result = resultFor(err);
  if (result == ncclRemoteError && comm->remote() != nullptr) {
    // The provider says the peer went away: every comm of it fails now,
    // its later requests at once, rather than each waiting for the watchdog.
    comm->remote()->declareGone(std::string(isSend ? "a send" : "a receive") + " failed: " + text);
    error = result;
    return;
  }
  if (err == FI_ETRUNC) {
    // olen is what did not fit; tcp;ofi_rxm 1.17 reports 0 for messages
    // that went by rendezvous, so the send size is then unknown here.
    std::string sent = entry.olen > 0
                           ? "a " + std::to_string(capacity[index] + entry.olen) + "-byte send"
                           : "a send of unknown size (more than the buffer)";
    NCCLNET_WARN(log,
                 "message truncated: %s arrived for a %zu-byte receive buffer "
                 "(NCCL tag %d, connection %u); the receive size must be at least the send size",
                 sent.c_str(), capacity[index], ncclTags[index], layout.connIdOf(tags[index]));
  } else {
    NCCLNET_WARN(log, "%s %d of %d on %s failed: %s (NCCL tag %d, connection %u) -> %s",
                 isFlush  ? "flush"
                 : isSend ? "send"
                          : "receive",
                 index + 1, n, comm->endpoint().nic().name.c_str(), text.c_str(), ncclTags[index],
                 layout.connIdOf(tags[index]),
                 result == ncclRemoteError ? "ncclRemoteError" : "ncclSystemError");
  }
  if (error == ncclSuccess) error = result;
}

ncclResult_t testRequest(Comm* comm, Request* request, int* done, int* sizes) {
  Endpoint& endpoint = comm->endpoint();
  // A request whose completions an earlier call already read is done
  // without a provider call: one fi_cq_read often brings a whole window's
  // completions, and on tcp;ofi_rxm each read costs a poll() and a read()
  // of the provider's wake-up pipe, plus a write() to it at the next send.
  // Skipping it lets the sends that follow go out back to back.
  bool alreadyDone = request->done() && request->error == ncclSuccess;
  // Progress first: on manual-progress providers nothing moves otherwise
  // (unless the endpoint's own thread drives it).
  bool driven = endpoint.config().progressThread;
  ncclResult_t res = alreadyDone || driven ? ncclSuccess : endpoint.progress();
  if (res != ncclSuccess) return res;
  if (comm->kind() == Comm::Kind::Recv && request->error == ncclSuccess &&
      request->posted < request->n) {
    auto* recv = static_cast<RecvComm*>(comm);
    if (request->isFlush) {
      recv->postFlush(request);
    } else {
      recv->postRemaining(request);
    }
  }
  if (!request->done() && request->error == ncclSuccess && comm->gone()) {
    request->error = resultOf(Failure::kPeerGone);  // Remote::declareGone logged why
  }
  if (request->error != ncclSuccess && !request->cancelled) {
    // One buffer failed: the request fails as a whole, and the buffers still
    // posted are taken back so it can finish in bounded time.
    request->cancelled = true;
    for (int i = 0; i < request->posted; i++) {
      if (!request->opDone[i]) endpoint.cancel(&request->ops[i]);
    }
    res = endpoint.progress();
    if (res != ncclSuccess) return res;
  }
  // A request of a gone peer is done now: what the provider still holds
  // may never come back.
  *done = request->done() || (request->error != ncclSuccess && comm->gone());
  if (!*done) return ncclSuccess;
  if (sizes != nullptr && !request->isFlush) {
    for (int i = 0; i < request->n; i++) sizes[i] = request->sizes[i];
  }
  return request->error;
}

void releaseRequest(Comm* comm, Request* request) {
  // The provider still holds some of its operations (the peer is gone): the
  // slot stays taken, so a late completion finds the request it names.
  bool held = request->finished < request->posted;
  if (comm->kind() == Comm::Kind::Send) {
    if (!held) static_cast<SendComm*>(comm)->requests().release(request);
    return;
  }
  auto* recv = static_cast<RecvComm*>(comm);
  if (!request->isFlush) {
    auto& live = recv->inFlight_;
    for (size_t i = 0; i < live.size(); i++) {
      if (live[i] == request) {
        live[i] = live.back();
        live.pop_back();
        break;
      }
    }
  }
  if (!held) recv->requests().release(request);
}

// ---- send ---------------------------------------------------------------------

ncclResult_t SendComm::isend(void* data, size_t size, int tag, void* mhandle, void** request) {
  Endpoint& ep = endpoint();
  *request = nullptr;
  if (gone()) return goneError("isend");
  if (!ep.tags().fitsTag(tag)) {
    NCCLNET_WARN(ep.log(), "isend: NCCL tag %d does not fit the provider's %d tag bits", tag,
                 ep.tags().tagBits());
    return ncclInvalidUsage;
  }
  void* desc = nullptr;
  if (!ep.descriptorFor(mhandle, data, size, &desc)) {
    NCCLNET_WARN(ep.log(), "isend: mhandle %p does not cover %zu bytes at %p", mhandle, size, data);
    return ncclInvalidArgument;
  }
  Request* r = requests_.acquire();
  if (r == nullptr) return ep.progress();  // all in flight: NULL request, try again
  uint64_t wire = ep.tags().data(connId_, tag, sequences_.peek(tag));
  r->ops[0].sink = r;
  r->ops[0].index = 0;
  ssize_t rc = ep.send(data, size, desc, peer_, wire, &r->ops[0]);
  refused = rc == -FI_EAGAIN;
  if (rc != 0) {
    requests_.release(r);
    if (rc == -FI_EAGAIN) return ep.progress();  // provider queue full: NULL request
    NCCLNET_WARN(ep.log(), "isend of %zu bytes (NCCL tag %d) failed: %s", size, tag,
                 fiError(static_cast<int>(rc)).c_str());
    return resultFor(static_cast<int>(rc));
  }
  sequences_.advance(tag);
  r->comm = this;
  r->isSend = true;
  r->n = 1;
  r->posted = 1;
  r->sizes[0] = static_cast<int>(size);
  r->capacity[0] = size;
  r->tags[0] = wire;
  r->ncclTags[0] = tag;
  pending++;
  *request = r;
  return ncclSuccess;
}

// ---- receive --------------------------------------------------------------------

RecvComm::RecvComm(Endpoint* endpoint, Remote* peer, uint32_t connId)
    : Comm(Kind::Recv, endpoint, peer), peer_(peer->addr()), connId_(connId) {}

RecvComm::~RecvComm() {
  endpoint().releaseControl(flushControl_);
}

void RecvComm::postRemaining(Request* r) {
  while (r->posted < r->n) {
    int i = r->posted;
    ssize_t rc =
        endpoint().recv(r->data[i], r->capacity[i], r->desc[i], peer_, r->tags[i], &r->ops[i]);
    if (rc == -FI_EAGAIN) return;  // test() posts the rest
    if (rc != 0) {
      NCCLNET_WARN(endpoint().log(), "irecv: posting buffer %d of %d failed: %s", i + 1, r->n,
                   fiError(static_cast<int>(rc)).c_str());
      r->error = resultFor(static_cast<int>(rc));
      return;
    }
    r->posted++;
    pending++;
  }
}

ncclResult_t RecvComm::irecv(int n, void** data, size_t* sizes, int* tags, void** mhandles,
                             void** request) {
  Endpoint& ep = endpoint();
  *request = nullptr;
  if (gone()) return goneError("irecv");
  if (n < 1 || n > kMaxRecvs) {
    NCCLNET_WARN(ep.log(), "irecv: n=%d outside 1..%d (maxRecvs)", n, kMaxRecvs);
    return ncclInvalidArgument;
  }
  void* desc[kMaxRecvs];
  for (int i = 0; i < n; i++) {
    if (!ep.tags().fitsTag(tags[i])) {
      NCCLNET_WARN(ep.log(), "irecv: NCCL tag %d does not fit the provider's %d tag bits", tags[i],
                   ep.tags().tagBits());
      return ncclInvalidUsage;
    }
    if (!ep.descriptorFor(mhandles ? mhandles[i] : nullptr, data[i], sizes[i], &desc[i])) {
      NCCLNET_WARN(ep.log(), "irecv: mhandle %p does not cover %zu bytes at %p",
                   mhandles ? mhandles[i] : nullptr, sizes[i], data[i]);
      return ncclInvalidArgument;
    }
  }
  if (inFlight_.size() >= NCCL_NET_MAX_REQUESTS) return ep.progress();
  Request* r = requests_.acquire();
  if (r == nullptr) return ep.progress();
  r->comm = this;
  r->n = n;
  for (int i = 0; i < n; i++) {
    // Sequence numbers are taken in call order; a tag that appears twice in
    // one group takes two consecutive numbers. They are committed below,
    // once the request exists.
    uint32_t earlier = 0;
    for (int j = 0; j < i; j++) earlier += tags[j] == tags[i] ? 1 : 0;
    r->data[i] = data[i];
    r->capacity[i] = sizes[i];
    r->desc[i] = desc[i];
    r->ncclTags[i] = tags[i];
    r->tags[i] = ep.tags().data(connId_, tags[i], sequences_.peek(tags[i]) + earlier);
    r->ops[i].sink = r;
    r->ops[i].index = i;
  }
  postRemaining(r);
  refused = r->posted == 0 && r->error == ncclSuccess;
  if (r->posted == 0) {
    ncclResult_t error = r->error;
    requests_.release(r);
    if (error != ncclSuccess) return error;
    return ep.progress();  // nothing accepted: NULL request, NCCL retries
  }
  // At least one buffer is posted: the request exists, and test() posts the
  // rest. Each buffer's tag is unique, so late posting cannot reorder.
  for (int i = 0; i < n; i++) sequences_.advance(tags[i]);
  inFlight_.push_back(r);
  *request = r;
  return ncclSuccess;
}

ncclResult_t RecvComm::iflush(int n, void** data, int* sizes, void** mhandles, void** request) {
  Endpoint& ep = endpoint();
  *request = nullptr;
  // Host memory needs no flush; neither does a receive of 0 bytes. GPU
  // memory is flushed by reading one byte of the first non-empty buffer
  // back through the NIC: the read completes only after the NIC's earlier
  // PCIe writes to that buffer have landed.
  int target = -1;
  for (int i = 0; i < n && target < 0; i++) {
    if (sizes[i] > 0 && mhandles != nullptr && ep.isGpuRegistration(mhandles[i])) target = i;
  }
  if (target < 0) return ncclSuccess;
  void* desc = nullptr;
  if (flushControl_ == nullptr) {
    ncclResult_t res =
        ep.controlDescriptor(&flushScratch_, sizeof(flushScratch_), &desc, &flushControl_);
    if (res != ncclSuccess) return res;
  } else {
    ep.descriptorFor(flushControl_, &flushScratch_, sizeof(flushScratch_), &desc);
  }
  // Not a NULL request when no slot is free: src/transport/net.cc
  // recvProxyProgress takes a NULL flush request as "nothing to flush" and
  // would let the GPU read before the data landed. NCCL keeps at most
  // NCCL_STEPS operations in flight per comm, well within the pool.
  Request* r = requests_.acquire();
  if (r == nullptr) {
    NCCLNET_WARN(ep.log(), "iflush: all %zu requests of the receive comm are in flight",
                 requests_.capacity());
    return resultOf(Failure::kExhausted);
  }
  r->comm = this;
  r->isFlush = true;
  r->n = 1;
  r->ops[0].sink = r;
  r->ops[0].index = 0;
  r->data[0] = data[target];
  r->desc[0] = desc;
  r->flushMhandle = mhandles[target];
  postFlush(r);
  if (r->posted == 0 && r->error != ncclSuccess) {
    ncclResult_t error = r->error;
    requests_.release(r);
    return error;
  }
  // Posted, or refused for now (-FI_EAGAIN): the request exists either way
  // and test() posts the read, since a NULL request would mean "nothing to
  // flush" to NCCL.
  *request = r;
  return ncclSuccess;
}

void RecvComm::postFlush(Request* r) {
  ssize_t rc =
      endpoint().readSelf(&flushScratch_, 1, r->desc[0], r->data[0], r->flushMhandle, &r->ops[0]);
  if (rc == -FI_EAGAIN) return;  // test() tries again
  if (rc != 0) {
    NCCLNET_WARN(endpoint().log(), "iflush: fi_read failed: %s",
                 fiError(static_cast<int>(rc)).c_str());
    r->error = resultFor(static_cast<int>(rc));
    return;
  }
  r->posted = 1;
  pending++;
}

void RecvComm::cancelAll() {
  // Only receives can be taken back; a flush read finishes on its own.
  for (Request* r : inFlight_) {
    r->cancelled = true;
    for (int i = 0; i < r->posted; i++) {
      if (!r->opDone[i]) endpoint().cancel(&r->ops[i]);
    }
  }
}

}  // namespace ncclnet::ofi
