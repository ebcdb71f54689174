// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: a fixed-capacity pool of request objects. The capacity is
// the contract's in-flight limit (e.g. NCCL_NET_MAX_REQUESTS per recvComm,
// NCCL_NET_MAX_REQUESTS x maxRecvs per sendComm); an exhausted pool is the
// plugin's cue to hand NCCL a NULL request ("try again later"). Pointers are
// validated on release, so a wrong or stale handle is detected, not followed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ncclnet {

template <class Request>
class RequestPool {
 public:
  explicit RequestPool(size_t capacity) : slots_(capacity), inUse_(capacity, false) {
    free_.reserve(capacity);
    for (size_t i = capacity; i > 0; --i) free_.push_back(i - 1);
  }
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  // A value-initialized request, or nullptr when all are in flight.
  Request* acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return nullptr;
    size_t index = free_.back();
    free_.pop_back();
    inUse_[index] = true;
    slots_[index] = Request();
    return &slots_[index];
  }

  // Returns false (and changes nothing) when `request` is not an acquired
  // member of this pool: a foreign pointer, or one released already.
  bool release(const void* request) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t index = 0;
    if (!indexOf(request, &index) || !inUse_[index]) return false;
    inUse_[index] = false;
    free_.push_back(index);
    return true;
  }

  // True when `request` is an acquired member of this pool.
  bool owns(const void* request) const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t index = 0;
    return indexOf(request, &index) && inUse_[index];
  }

  // The acquired member `request` points at, or nullptr when it is none.
  Request* find(const void* request) {
    return owns(request) ? static_cast<Request*>(const_cast<void*>(request)) : nullptr;
  }

  size_t capacity() const { return slots_.size(); }
  size_t inUse() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return slots_.size() - free_.size();
  }

 private:
  bool indexOf(const void* request, size_t* index) const {
    // Compared as integers: the pointer may come from anywhere.
    auto p = reinterpret_cast<uintptr_t>(request);
    auto begin = reinterpret_cast<uintptr_t>(slots_.data());
    uintptr_t end = begin + slots_.size() * sizeof(Request);
    if (p < begin || p >= end || (p - begin) % sizeof(Request) != 0) return false;
    *index = static_cast<size_t>(p - begin) / sizeof(Request);
    return true;
  }

  mutable std::mutex mutex_;
  std::vector<Request> slots_;
  std::vector<bool> inUse_;
  std::vector<size_t> free_;
};

}  // namespace ncclnet

