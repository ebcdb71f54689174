// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: connection setup over the fabric itself (see comm.hpp). A listen
// posts a receive for connect messages tagged with its listen id; connect
// sends one, carrying the connector's address and connection id, and is
// done when the provider has taken it; accept is done when one arrived.
#include <cstddef>
#include <cstring>

#include "comm.hpp"

namespace ncclnet::ofi {

// ---- any comm -----------------------------------------------------------------

Comm::Comm(Kind kind, Endpoint* endpoint, Remote* remote)
    : kind_(kind),
      endpoint_(endpoint),
      remote_(remote),
      deathsAtStart_(remote != nullptr ? remote->deaths() : 0) {
  if (remote_ != nullptr) remote_->attach(this);
}

Comm::~Comm() {
  if (remote_ != nullptr) remote_->detach(this);
}

ncclResult_t Comm::goneError(const char* call) {
  if (error_.record(resultOf(Failure::kPeerGone), "peer " + remote_->name() + " is gone")) {
    NCCLNET_INFO(endpoint_->log(), NCCL_NET, "%s: peer %s was declared gone earlier", call,
                 remote_->name().c_str());
  }
  return error_.code();
}

// ---- listen -------------------------------------------------------------------

ListenComm::ListenComm(Endpoint* endpoint, uint64_t listenId)
    : Comm(Kind::Listen, endpoint, nullptr), listenId_(listenId) {
  op_.sink = this;
}

ListenComm::~ListenComm() {
  endpoint().releaseControl(control_);
}

ncclResult_t ListenComm::post() {
  if (posted_ || received_ || error_ != ncclSuccess) return ncclSuccess;
  void* desc = nullptr;
  if (control_ == nullptr) {
    ncclResult_t res = endpoint().controlDescriptor(&buffer_, sizeof(buffer_), &desc, &control_);
    if (res != ncclSuccess) return res;
  } else {
    endpoint().descriptorFor(control_, &buffer_, sizeof(buffer_), &desc);
  }
  ssize_t rc = endpoint().recv(&buffer_, sizeof(buffer_), desc, FI_ADDR_UNSPEC,
                               endpoint().tags().connect(listenId_), &op_);
  if (rc == -FI_EAGAIN) return ncclSuccess;  // accept() tries again
  if (rc != 0) {
    NCCLNET_WARN(endpoint().log(), "listen: posting the connect receive failed: %s",
                 fiError(static_cast<int>(rc)).c_str());
    return resultFor(static_cast<int>(rc));
  }
  posted_ = true;
  pending++;
  return ncclSuccess;
}

const ConnectMessage* ListenComm::message(ncclResult_t* error) {
  *error = error_;
  if (!received_) return nullptr;
  return &buffer_;
}

void ListenComm::cancelAll() {
  if (posted_) endpoint().cancel(&op_);
}

// Anyone who reaches the endpoint can send to a listen's tag: what is not
// a connect message is dropped with a rate-limited WARN, and the next
// accept posts the receive again for the real peer.
std::string ListenComm::strayReason(size_t bytes) const {
  constexpr size_t kHeader = offsetof(ConnectMessage, address);
  WireVerdict stamp = kConnectStamp.check(&buffer_, bytes);
  if (stamp == WireVerdict::kTruncated || stamp == WireVerdict::kNotOurs) {
    return kConnectStamp.explain(stamp, &buffer_, bytes);
  }
  if (bytes < kHeader) return "shorter than a connect message's header";
  if (buffer_.addressLength == 0 || buffer_.addressLength > kMaxAddress) {
    return "its address length is out of range";
  }
  if (bytes < kHeader + buffer_.addressLength) return "shorter than the address it announces";
  return {};
}

void ListenComm::dropStray(const char* why, size_t bytes) {
  NCCLNET_WARN_LIMITED(endpoint().log(), strays_,
                       "listen %llu: dropped a %zu-byte message to its connect tag: %s",
                       static_cast<unsigned long long>(listenId_), bytes, why);
}

void ListenComm::onCompletion(int, const fi_cq_tagged_entry& entry) {
  pending--;
  posted_ = false;
  std::string why = strayReason(entry.len);
  if (!why.empty()) {
    dropStray(why.c_str(), entry.len);
    return;
  }
  // A well-formed message of another version is dropped like any stray
  // (contract rule 55: nothing a stray sends may fail accept, and a listen
  // id is guessable, so a stale job of an older build can send one). Its
  // WARN names both versions, which is what a mixed-version job needs.
  WireVerdict stamp = kConnectStamp.check(&buffer_, entry.len);
  if (stamp == WireVerdict::kWrongVersion) {
    dropStray(kConnectStamp.explain(stamp, &buffer_, entry.len).c_str(), entry.len);
    return;
  }
  received_ = true;
}

void ListenComm::onError(int, const fi_cq_err_entry& entry, const std::string& text) {
  pending--;
  posted_ = false;
  if (entry.err == FI_ECANCELED || entry.err == -FI_ECANCELED) return;  // closeListen
  if (entry.err == FI_ETRUNC || entry.err == -FI_ETRUNC) {
    dropStray("longer than any connect message", entry.len + entry.olen);
    return;
  }
  NCCLNET_WARN(endpoint().log(), "listen %llu: receiving a connect message failed: %s",
               static_cast<unsigned long long>(listenId_), text.c_str());
  error_ = resultFor(entry.err);
}

// ---- send ---------------------------------------------------------------------

SendComm::SendComm(Endpoint* endpoint, Remote* peer, uint32_t connId, uint64_t listenId)
    : Comm(Kind::Send, endpoint, peer), peer_(peer->addr()), connId_(connId), listenId_(listenId) {
  connectOp_.sink = this;
  const std::vector<uint8_t>& address = endpoint->address();
  message_.magic = kConnectMagic;
  message_.version = kConnectVersion;
  message_.addressLength = static_cast<uint16_t>(address.size());
  message_.connId = connId;
  std::memcpy(message_.address, address.data(), address.size());
}

SendComm::~SendComm() {
  endpoint().releaseControl(control_);
  endpoint().freeConnId(connId_);
}

ncclResult_t SendComm::postConnect() {
  if (connectPosted_) return ncclSuccess;
  void* desc = nullptr;
  if (control_ == nullptr) {
    ncclResult_t res = endpoint().controlDescriptor(&message_, sizeof(message_), &desc, &control_);
    if (res != ncclSuccess) return res;
  } else {
    endpoint().descriptorFor(control_, &message_, sizeof(message_), &desc);
  }
  // rxm answers -FI_EAGAIN until its connection to the peer is up: connect()
  // is simply called again.
  ssize_t rc = endpoint().send(&message_, sizeof(message_), desc, peer_,
                               endpoint().tags().connect(listenId_), &connectOp_);
  refused = rc == -FI_EAGAIN;
  if (rc == -FI_EAGAIN) return ncclSuccess;
  if (rc != 0) {
    NCCLNET_WARN(endpoint().log(), "connect: sending the connect message failed: %s",
                 fiError(static_cast<int>(rc)).c_str());
    return resultFor(static_cast<int>(rc));
  }
  connectPosted_ = true;
  pending++;
  return ncclSuccess;
}

bool SendComm::connectFailed(ncclResult_t* error) const {
  if (!connectDone_ && gone()) {
    // The listener's process went away while the connect message waited.
    *error = ncclRemoteError;
    return true;
  }
  *error = connectError_;
  return connectDone_ && connectError_ != ncclSuccess;
}

void SendComm::onCompletion(int, const fi_cq_tagged_entry&) {
  pending--;
  remote()->progressed();
  connectDone_ = true;
}

void SendComm::onError(int, const fi_cq_err_entry& entry, const std::string& text) {
  pending--;
  connectDone_ = true;
  connectError_ = resultFor(entry.err);
  if (connectError_ == ncclInvalidUsage) connectError_ = ncclRemoteError;
  NCCLNET_WARN(endpoint().log(), "connect to listen %llu failed: %s",
               static_cast<unsigned long long>(listenId_), text.c_str());
}

}  // namespace ncclnet::ofi
