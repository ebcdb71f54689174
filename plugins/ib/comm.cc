// SPDX-License-Identifier: Apache-2.0
// sdk-ib: what send and receive comms share — owned buffers and the
// translation of failed completions.
#include "comm.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ncclnet::ib {
namespace {

struct Hint {
  ncclResult_t result;
  const char* text;
};

Hint hintFor(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_REM_ACCESS_ERR:
      return {ncclRemoteError,
              "the peer refused an RDMA access (rkey or bounds): was a buffer deregistered or "
              "freed while in use?"};
    case IBV_WC_REM_INV_REQ_ERR:
      return {ncclRemoteError, "the peer found the request invalid (length or opcode)"};
    case IBV_WC_REM_OP_ERR: return {ncclRemoteError, "the peer could not complete the operation"};
    case IBV_WC_RETRY_EXC_ERR:
      return {ncclRemoteError,
              "no answer from the peer: it may have exited, or the path is wrong (GID choice "
              "NCCL_IB_GID_INDEX/NCCL_IB_ROCE_VERSION_NUM, P_Key NCCL_IB_PKEY, MTU, routing); "
              "NCCL_IB_TIMEOUT waits longer"};
    case IBV_WC_RNR_RETRY_EXC_ERR: return {ncclRemoteError, "the peer had no receive posted"};
    case IBV_WC_LOC_PROT_ERR:
      return {ncclSystemError, "a local buffer is outside its memory registration"};
    case IBV_WC_LOC_LEN_ERR:
      return {ncclSystemError, "a message was longer than the posted receive"};
    case IBV_WC_WR_FLUSH_ERR:
      return {ncclSystemError, "flushed after an earlier error on this connection"};
    default: return {ncclSystemError, "see the HCA's documentation for this status"};
  }
}

}  // namespace

LocalBuffer::LocalBuffer(Hca& hca, size_t size) : hca_(hca) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t bytes = (size + page - 1) / page * page;
  data_ = std::aligned_alloc(page, bytes);
  if (data_ == nullptr) return;
  std::memset(data_, 0, bytes);
  mr_ = hca_.api.regMr(hca_.pd, data_, bytes, MrCache::kAccess);
}

LocalBuffer::~LocalBuffer() {
  if (mr_ != nullptr) hca_.api.deregMr(mr_);
  std::free(data_);
}

bool CommBase::peerClosed() {
  if (!oob.valid()) return false;
  auto now = std::chrono::steady_clock::now();
  if (now < nextLivenessCheck_) return false;
  nextLivenessCheck_ = now + std::chrono::milliseconds(kLivenessCheckMs);
  char byte;
  ssize_t n = ::recv(oob.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return false;
  if (n == 0) return true;
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

ncclResult_t CommBase::fail(Failure failure, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  ncclResult_t res = health_->vfail(log_, nullptr, failure, fmt, args);
  va_end(args);
  return res;
}

ncclResult_t CommBase::explainFailure(const ibv_wc& wc) {
  if (wc.status == IBV_WC_WR_FLUSH_ERR) {
    // The QP is in the error state. An async event may say why: handle the
    // events already delivered before deciding that nothing did.
    if (AsyncWatcher* events = ep.port().hca->events.get()) events->pollNow();
    ncclResult_t eventResult = health_->code();
    if (eventResult != ncclSuccess) return eventResult;  // its line is logged
  }
  return completionError(wc);
}

ncclResult_t CommBase::completionError(const ibv_wc& wc) {
  Hint hint = hintFor(wc.status);
  NCCLNET_WARN(log_,
               "completion from peer %s on %s port %d failed: status=%s(%d) opcode=%d len=%u "
               "vendor_err=%u qp=%u. Hint: %s",
               peer.c_str(), ep.port().hca->name.c_str(), ep.port().port,
               ep.api().statusString(wc.status), static_cast<int>(wc.status),
               static_cast<int>(wc.opcode), wc.byte_len, wc.vendor_err, wc.qp_num, hint.text);
  return hint.result;
}

}  // namespace ncclnet::ib
