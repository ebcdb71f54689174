// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: pinging the peers that comms wait on (see remote.hpp).
#include "remote.hpp"

#include <algorithm>
#include <cstring>

#include "comm.hpp"

namespace ncclnet::ofi {

Remote::Remote(Endpoint* endpoint, fi_addr_t addr, uint64_t id, std::string name, bool self)
    : endpoint_(endpoint), addr_(addr), id_(id), name_(std::move(name)), self_(self) {
  for (int i = 0; i < 2; i++) {
    ops_[i].sink = this;
    ops_[i].index = i;
  }
}

Remote::~Remote() {
  endpoint_->releaseControl(static_cast<MrCache::Entry*>(pingControl_));
  endpoint_->releaseControl(static_cast<MrCache::Entry*>(pongControl_));
}

void Remote::detach(Comm* comm) {
  auto it = std::find(comms_.begin(), comms_.end(), comm);
  if (it != comms_.end()) {
    *it = comms_.back();
    comms_.pop_back();
  }
}

bool Remote::busy() const {
  for (const Comm* comm : comms_) {
    if ((comm->pending > 0 || comm->refused) && !comm->gone()) return true;
  }
  return false;
}

void Remote::watch(Clock::time_point now) {
  if (self_ || !busy()) {
    watching_ = false;
    return;
  }
  const Config& config = endpoint_->config();
  if (!watching_ || progress_ != progressSeen_) {
    // Waiting starts now, or something arrived since the last look.
    watching_ = true;
    progressSeen_ = progress_;
    lastHeard_ = now;
    refused_ = false;
  }
  if (now - lastHeard_ >= std::chrono::milliseconds(config.peerTimeoutMs)) {
    declareGone("it answered no ping for " + std::to_string(config.peerTimeoutMs) +
                " ms (NCCLNET_OFI_PEER_TIMEOUT_MS)");
    return;
  }
  if (pingInFlight_ || now - lastPing_ < std::chrono::milliseconds(config.probeIntervalMs)) {
    return;
  }
  const std::vector<uint8_t>& self = endpoint_->address();
  ping_.magic = kProbeMagic;
  ping_.kind = kPing;
  ping_.token = id_;
  ping_.addressLength = static_cast<uint16_t>(self.size());
  std::memcpy(ping_.address, self.data(), self.size());
  ssize_t rc = post(&ping_, &ops_[kPingOp], &pingControl_);
  if (rc == -FI_EAGAIN) {
    // The next watch tries again; a peer refused for long is unreachable.
    if (!refused_) {
      refused_ = true;
      refusedSince_ = now;
    } else if (now - refusedSince_ >= 4 * std::chrono::milliseconds(config.probeIntervalMs)) {
      declareGone("the provider refused every message to it for " +
                  std::to_string(4 * config.probeIntervalMs) +
                  " ms (4 x NCCLNET_OFI_PROBE_INTERVAL_MS): its connection cannot be made");
    }
    return;
  }
  refused_ = false;
  if (rc != 0) {
    declareGone("a ping could not be sent: " + fiError(static_cast<int>(rc)));
    return;
  }
  pingInFlight_ = true;
  lastPing_ = now;
}

void Remote::answer(uint64_t token) {
  if (pongInFlight_) return;  // the pinger pings again
  pong_.magic = kProbeMagic;
  pong_.kind = kPong;
  pong_.token = token;
  pong_.addressLength = 0;
  if (post(&pong_, &ops_[kPongOp], &pongControl_) == 0) pongInFlight_ = true;
}

ssize_t Remote::post(ProbeMessage* message, OpContext* op, void** control) {
  void* desc = nullptr;
  if (*control == nullptr) {
    MrCache::Entry* entry = nullptr;
    ncclResult_t res = endpoint_->controlDescriptor(message, sizeof(*message), &desc, &entry);
    if (res != ncclSuccess) return -FI_ENOMEM;
    *control = entry;
  } else {
    endpoint_->descriptorFor(*control, message, sizeof(*message), &desc);
  }
  size_t size = offsetof(ProbeMessage, address) + message->addressLength;
  return endpoint_->send(message, size, desc, addr_, endpoint_->tags().connect(0), op);
}

void Remote::declareGone(const std::string& why) {
  deaths_++;
  watching_ = false;
  size_t live = comms_.size();
  NCCLNET_WARN(endpoint_->log(),
               "peer %s is gone: %s; the requests of its %zu comms fail with ncclRemoteError",
               name_.c_str(), why.c_str(), live);
}

void Remote::onCompletion(int index, const fi_cq_tagged_entry&) {
  if (index == kPingOp) {
    pingInFlight_ = false;
  } else {
    pongInFlight_ = false;
  }
}

void Remote::onError(int index, const fi_cq_err_entry&, const std::string& text) {
  if (index == kPongOp) {
    pongInFlight_ = false;  // the pinger finds out on its own
    return;
  }
  pingInFlight_ = false;
  // Only a peer someone still waits on is declared gone: a ping that fails
  // after its comms finished (or already failed) says nothing new.
  if (busy()) declareGone("a ping failed: " + text);
}

}  // namespace ncclnet::ofi
