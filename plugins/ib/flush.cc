// SPDX-License-Identifier: Apache-2.0
// sdk-ib: iflush. An HCA may complete a receive while its writes into GPU
// memory are still on their way over PCIe. Like NCCL's IB transport, sdk-ib
// then reads one byte of the received buffer through a QP connected to
// itself: the read cannot pass the writes posted before it, so its
// completion means they have landed. Host memory needs none of this.
#include <cstring>

#include "comm.hpp"

namespace ncclnet::ib {

bool RecvComm::setupFlush(const Config& config, std::string* why) {
  const Port& port = ep.port();
  if (config.gdrFlushDisable || !(port.hca->ptrSupport & NCCL_PTR_CUDA)) return true;
  flushEp_ = std::make_unique<Endpoint>(ep.api(), port);
  flushEp_->watchWith(health_, "flush QP of the receive comm from " + peer);
  QpSizes sizes{static_cast<uint32_t>(kSlots), 1, 0};
  ConnInfo self;
  if (!flushEp_->create(1, sizes, why)) {
    *why = "flush QP: " + *why;
    return false;
  }
  flushEp_->describe(config, &self);
  if (!flushEp_->connect(config, self, 0, 0, why)) {
    *why = "flush QP: " + *why;
    return false;
  }
  flushSink_ = std::make_unique<LocalBuffer>(*port.hca, sizeof(uint64_t));
  if (!flushSink_->ok()) {
    *why = "cannot allocate and register the flush buffer";
    return false;
  }
  return true;
}

ncclResult_t RecvComm::iflush(int n, void** data, const int* sizes, MrHandle* const* mhandles,
                              Request** request) {
  *request = nullptr;
  if (status() != ncclSuccess) return status();
  if (flushEp_ == nullptr) return ncclSuccess;  // disabled, or no GPU memory on this port
  int last = -1;  // NCCL's choice: the last buffer that received something
  for (int i = 0; i < n; i++) {
    if (sizes[i] > 0 && mhandles[i] != nullptr && mhandles[i]->gpu) last = i;
  }
  if (last < 0) return ncclSuccess;  // host memory, or nothing received
  Request* req = flushPool_.acquire();
  if (req == nullptr) {
    // Not a NULL request: src/transport/net.cc recvProxyProgress takes one
    // as "nothing to flush" (result_policy.hpp, Failure::kExhausted).
    NCCLNET_WARN(log_, "iflush: %d flushes already pending on the connection from %s", kSlots,
                 peer.c_str());
    return resultOf(Failure::kExhausted);
  }
  req->isFlush = true;
  ibv_sge sge{reinterpret_cast<uintptr_t>(flushSink_->data()), 1, flushSink_->mr()->lkey};
  ibv_send_wr wr{};
  wr.wr_id = reinterpret_cast<uintptr_t>(req);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(data[last]);
  wr.wr.rdma.rkey = mhandles[last]->mr->rkey;
  ibv_send_wr* bad = nullptr;
  int rc = IbvApi::postSend(flushEp_->qp(0), &wr, &bad);
  if (rc != 0) {
    flushPool_.release(req);
    return fail(Failure::kSystemCall, "iflush: posting the flush read failed: %s", strerror(rc));
  }
  *request = req;
  return ncclSuccess;
}

ncclResult_t RecvComm::testFlush(Request& r, int* done) {
  constexpr int kBatch = 8;
  ibv_wc wcs[kBatch];
  for (;;) {
    int n = IbvApi::pollCq(flushEp_->cq(), kBatch, wcs);
    if (n < 0) {
      return fail(Failure::kSystemCall, "ibv_poll_cq failed (%d) on the flush QP", n);
    }
    for (int i = 0; i < n; i++) {
      auto* req = reinterpret_cast<Request*>(static_cast<uintptr_t>(wcs[i].wr_id));
      if (wcs[i].status != IBV_WC_SUCCESS) {
        // The first failure explains; the flushes that follow do not.
        if (status() == ncclSuccess) failLogged(explainFailure(wcs[i]), "a failed flush");
        req->error = status();
      }
      req->done = true;
    }
    if (n < kBatch) break;
  }
  if (!r.done) return status();
  *done = 1;
  ncclResult_t error = r.error;
  flushPool_.release(&r);
  return error;
}

}  // namespace ncclnet::ib
