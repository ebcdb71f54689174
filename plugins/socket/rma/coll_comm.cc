// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the data calls of a collComm.
#include "coll_comm.hpp"

#include <cstring>

#include "ncclnet/abi/common.h"

namespace ncclnet::socket::rma {

CollComm::~CollComm() {
  if (engine_) engine_->close(closeTimeoutMs_);
}

ncclResult_t CollComm::start(std::vector<Fd> peers, int registrationWaitMs) {
  engine_ = std::make_unique<Engine>(std::move(peers), rank_, regions_, link_, registrationWaitMs,
                                     error_, log_);
  return engine_->start();
}

const Region* CollComm::handleOf(const char* fn, const char* what, void* handle) {
  const Region* region = regions_.local(handle);
  if (region == nullptr) {
    NCCLNET_WARN(log_, "%s: the %s handle %p is not a registration of this comm", fn, what, handle);
  }
  return region;
}

const Region* CollComm::localRange(const char* fn, const char* what, void* handle, uint64_t offset,
                                   size_t size) {
  const Region* region = handleOf(fn, what, handle);
  if (region == nullptr) return nullptr;
  if (offset > region->size || size > region->size - offset) {
    NCCLNET_WARN(log_, "%s: %zu bytes at %s offset %lu leave its registration of %zu bytes", fn,
                 size, what, static_cast<unsigned long>(offset), region->size);
    return nullptr;
  }
  return region;
}

bool CollComm::validTarget(const char* fn, uint32_t rank) {
  if (rank < static_cast<uint32_t>(nranks_)) return true;
  NCCLNET_WARN(log_, "%s: rank %u is not in this comm of %d ranks", fn, rank, nranks_);
  return false;
}

// The rank's own operations need no wire: NCCL 2.30.7 flushes the NIC to
// GPU path with a put to itself (rma_proxy_progress.cc
// ncclRmaProxyFlushNicGpuPath, which then spins on test alone),
// and a signal to itself must still add atomically with the engine's.
ncclResult_t CollComm::putSelf(const Region* src, uint64_t srcOff, size_t size, const Region* dst,
                               uint64_t dstOff, const Region* signalRegion,
                               const RmaSignal* signal) {
  if (size > 0 || dst != nullptr) {
    Access to = regions_.resolve(dst->id, dstOff, size);
    if (to.status != kOk) {
      NCCLNET_WARN(log_, "iput: %zu bytes at offset %lu of the rank's own registration: %s", size,
                   static_cast<unsigned long>(dstOff), statusText(to.status));
      return ncclInvalidUsage;
    }
    std::string why;
    if (size > 0 && !link_.copy(to.at, to.type, src->base + srcOff, src->type, size, &why)) {
      return error_.fail(log_, nullptr, Failure::kSystemCall, "iput to the rank itself: %s",
                         why.c_str());
    }
  }
  if (signal != nullptr) {
    Access word = regions_.resolve(signalRegion->id, signal->offset, sizeof(uint64_t));
    if (word.status != kOk || reinterpret_cast<uintptr_t>(word.at) % alignof(uint64_t) != 0) {
      NCCLNET_WARN(log_, "iputSignal: signal offset %lu of the rank's own registration: %s",
                   static_cast<unsigned long>(signal->offset), statusText(kBadSignal));
      return ncclInvalidUsage;
    }
    std::string why;
    if (!link_.add(word.at, word.type, signal->value, &why)) {
      return error_.fail(log_, nullptr, Failure::kSystemCall, "iputSignal to the rank itself: %s",
                         why.c_str());
    }
  }
  return ncclSuccess;
}

ncclResult_t CollComm::put(int context, uint64_t srcOff, void* srcMhandle, size_t size,
                           uint64_t dstOff, void* dstMhandle, uint32_t rank,
                           const RmaSignal* signal, void** request) {
  const char* fn = signal != nullptr ? "iputSignal" : "iput";
  if (!error_.ok()) return error_.code();
  if (!validTarget(fn, rank)) return ncclInvalidArgument;
  // A signal-only call has size 0 and NULL data handles (gin_host_proxy.cc
  // proxyGinProcessGfd); a put of 0 bytes may still name its regions.
  const Region* src = nullptr;
  const Region* dst = nullptr;
  if (size > 0 || srcMhandle != nullptr) {
    src = localRange(fn, "source", srcMhandle, srcOff, size);
    if (src == nullptr) return ncclInvalidArgument;
  }
  if (size > 0 || dstMhandle != nullptr) {
    dst = handleOf(fn, "destination", dstMhandle);
    if (dst == nullptr) return ncclInvalidArgument;
  }
  const Region* signalRegion = nullptr;
  if (signal != nullptr) {
    signalRegion = handleOf(fn, "signal", signal->mhandle);
    if (signalRegion == nullptr) return ncclInvalidArgument;
  }
  Request* req = requests_.make();
  if (static_cast<int>(rank) == rank_) {
    ncclResult_t res = putSelf(src, srcOff, size, dst, dstOff, signalRegion, signal);
    if (res != ncclSuccess) {
      requests_.free(req);
      return res;
    }
    req->complete();
    *request = req;
    return ncclSuccess;
  }
  Frame frame;
  frame.op = Op::kPut;
  frame.context = static_cast<uint16_t>(context);
  frame.region = dst != nullptr ? dst->id : kNoRegion;
  frame.offset = dstOff;
  frame.size = size;
  if (signal != nullptr) {
    frame.signalRegion = signalRegion->id;
    frame.signalOffset = signal->offset;
    frame.signalValue = signal->value;
  }
  const uint8_t* payload = src != nullptr ? src->base + srcOff : nullptr;
  Engine::Staged staged;
  if (size > 0 && src->type == NCCL_PTR_CUDA) {
    // GPU memory is read now, so the request completes as host memory's
    // does: once the copy is on its way.
    auto copy = std::make_shared<std::vector<uint8_t>>(size);
    std::string why;
    if (!link_.toHost(copy->data(), payload, size, &why)) {
      requests_.free(req);
      return error_.fail(log_, nullptr, Failure::kSystemCall, "%s: cannot read GPU memory: %s", fn,
                         why.c_str());
    }
    payload = copy->data();
    staged = std::move(copy);
  }
  ncclResult_t res =
      engine_->post(static_cast<int>(rank), frame, payload, size, req, std::move(staged));
  if (res != ncclSuccess) {
    requests_.free(req);
    return res;
  }
  *request = req;
  return ncclSuccess;
}

ncclResult_t CollComm::get(int context, uint64_t remoteOff, void* remoteMhandle, size_t size,
                           uint64_t localOff, void* localMhandle, uint32_t rank, void** request) {
  if (!error_.ok()) return error_.code();
  if (!validTarget("iget", rank)) return ncclInvalidArgument;
  const Region* local = localRange("iget", "local", localMhandle, localOff, size);
  if (local == nullptr) return ncclInvalidArgument;
  const Region* remote = handleOf("iget", "remote", remoteMhandle);
  if (remote == nullptr) return ncclInvalidArgument;
  Request* req = requests_.make();
  if (static_cast<int>(rank) == rank_) {
    Access from = regions_.resolve(remote->id, remoteOff, size);
    if (from.status != kOk) {
      NCCLNET_WARN(log_, "iget: %zu bytes at offset %lu of the rank's own registration: %s", size,
                   static_cast<unsigned long>(remoteOff), statusText(from.status));
      requests_.free(req);
      return ncclInvalidUsage;
    }
    std::string why;
    if (size > 0 &&
        !link_.copy(local->base + localOff, local->type, from.at, from.type, size, &why)) {
      requests_.free(req);
      return error_.fail(log_, nullptr, Failure::kSystemCall, "iget from the rank itself: %s",
                         why.c_str());
    }
    req->complete();
    *request = req;
    return ncclSuccess;
  }
  Frame frame;
  frame.op = Op::kGet;
  frame.context = static_cast<uint16_t>(context);
  frame.region = remote->id;
  frame.offset = remoteOff;
  frame.size = size;
  ncclResult_t res = engine_->postGet(static_cast<int>(rank), frame, local->base + localOff,
                                      local->type == NCCL_PTR_CUDA, req);
  if (res != ncclSuccess) {
    requests_.free(req);
    return res;
  }
  *request = req;
  return ncclSuccess;
}

ncclResult_t CollComm::flush(uint32_t rank, void** request) {
  if (!error_.ok()) return error_.code();
  if (!validTarget("iflush", rank)) return ncclInvalidArgument;
  // A get completes only once its bytes are in place (GPU memory: once
  // their copy finished), so a flush only waits for the gets still on the
  // wire.
  std::vector<uint64_t> targets = engine_->getTargets(static_cast<int>(rank));
  if (targets.empty()) {
    *request = nullptr;  // nothing to wait for
    return ncclSuccess;
  }
  Request* req = requests_.make();
  req->landedTargets = std::move(targets);
  *request = req;
  return ncclSuccess;
}

ncclResult_t CollComm::test(void* request, int* done) {
  *done = 0;
  if (!requests_.contains(request)) {
    NCCLNET_WARN(log_, "test: request %p is not a live request of this comm", request);
    return ncclInvalidArgument;
  }
  auto* req = static_cast<Request*>(request);
  int state = req->state.load(std::memory_order_acquire);
  if (state == Request::kPending && !req->landedTargets.empty() &&
      engine_->landed(req->landedTargets)) {
    state = Request::kDone;
  }
  if (state == Request::kDone) {
    *done = 1;
    requests_.free(req);
    return ncclSuccess;
  }
  // A failed comm fails every request still in flight (one WARN line was
  // logged when it failed); the request stays ours until closeColl.
  if (state == Request::kFailed || !error_.ok()) {
    return error_.ok() ? ncclRemoteError : error_.code();
  }
  return ncclSuccess;
}

}  // namespace ncclnet::socket::rma
