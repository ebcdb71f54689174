// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the receives an endpoint keeps posted for its peers' pings and
// their answers (remote.hpp), tagged TagLayout::connect(0).
#pragma once

#include "endpoint.hpp"

namespace ncclnet::ofi {

class Endpoint::ProbeInbox final : public CompletionSink {
 public:
  explicit ProbeInbox(Endpoint* endpoint) : endpoint_(endpoint) {
    for (int i = 0; i < kSlots; i++) {
      ops_[i].sink = this;
      ops_[i].index = i;
    }
  }
  ~ProbeInbox() { endpoint_->releaseControl(control_); }

  // Posts every slot that is not posted (again after -FI_EAGAIN).
  ncclResult_t post() {
    void* desc = nullptr;
    if (control_ == nullptr) {
      ncclResult_t res = endpoint_->controlDescriptor(slots_, sizeof(slots_), &desc, &control_);
      if (res != ncclSuccess) return res;
    } else {
      endpoint_->descriptorFor(control_, slots_, sizeof(slots_), &desc);
    }
    for (int i = 0; i < kSlots; i++) {
      if (posted_[i]) continue;
      ssize_t rc = endpoint_->recv(&slots_[i], sizeof(slots_[i]), desc, FI_ADDR_UNSPEC,
                                   endpoint_->tags().connect(0), &ops_[i]);
      if (rc == -FI_EAGAIN) break;  // the watchdog posts it later
      if (rc != 0) {
        NCCLNET_WARN(endpoint_->log(), "posting the receive for peer pings on %s failed: %s",
                     endpoint_->nic().name.c_str(), fiError(static_cast<int>(rc)).c_str());
        return resultFor(static_cast<int>(rc));
      }
      posted_[i] = true;
    }
    return ncclSuccess;
  }

  void onCompletion(int index, const fi_cq_tagged_entry& entry) override {
    posted_[index] = false;
    ProbeMessage message = slots_[index];
    post();
    endpoint_->onProbe(message, entry.len);
  }

  void onError(int index, const fi_cq_err_entry&, const std::string& text) override {
    posted_[index] = false;
    NCCLNET_INFO(endpoint_->log(), NCCL_NET, "a receive for peer pings failed: %s", text.c_str());
  }

 private:
  static constexpr int kSlots = 4;  // pings of several peers may arrive together
  Endpoint* endpoint_;
  ProbeMessage slots_[kSlots] = {};
  OpContext ops_[kSlots] = {};
  bool posted_[kSlots] = {};
  MrCache::Entry* control_ = nullptr;
};

}  // namespace ncclnet::ofi
