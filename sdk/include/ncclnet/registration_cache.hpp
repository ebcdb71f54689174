// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: a registration cache for any fabric. NCCL registers the same
// buffers again and again (every connection re-registers the shared SIMPLE
// pool; user buffers are registered per connection), and a fabric
// registration can cost a system call and page pinning. Registrations are
// widened to whole pages, reference counted and, when `share` is on, shared:
// a buffer inside a live registration takes a reference instead of a new
// registration. The cache knows nothing of the fabric: it calls the
// functions it is given, so it is tested on its own.
//
//   ncclnet::RegistrationCache<ibv_mr*, std::mutex> cache(pageSize, true, deregister);
//   ncclnet::RegistrationCache<ibv_mr*, std::mutex>::Entry* entry = nullptr;
//   int rc = cache.acquire(data, size, [&](uintptr_t* begin, uintptr_t* end, ibv_mr** mr) {
//     *mr = ibv_reg_mr(pd, (void*)*begin, *end - *begin, access);
//     return *mr ? 0 : errno;
//   }, &entry);
//
// `Lock` is the locking policy: std::mutex where registrations and the data
// path run on different threads (NCCL registers from its service thread),
// ncclnet::NoLock where the owner already serializes every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>

namespace ncclnet {

// A lock that does nothing, for a cache whose owner serializes its calls.
struct NoLock {
  void lock() {}
  void unlock() {}
};

template <typename Handle, typename Lock = std::mutex>
class RegistrationCache {
 public:
  // One fabric registration of the bytes [begin, end).
  struct Entry {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    int refs = 0;
    Handle handle{};
  };
  // Registers [*begin, *end) (whole pages; it may narrow the range, e.g. to
  // the buffer itself when a dma-buf does not hold the whole first page) and
  // returns 0 with *handle set, or a non-zero error of the caller's choosing.
  using RegisterFn = std::function<int(uintptr_t* begin, uintptr_t* end, Handle* handle)>;
  using DeregisterFn = std::function<void(Handle handle)>;

  RegistrationCache(size_t pageSize, bool share, DeregisterFn deregister)
      : pageSize_(pageSize ? pageSize : 4096), share_(share), deregister_(std::move(deregister)) {}
  // Registrations never released (an aborted communicator) go here: the
  // fabric objects must go before the domain or protection domain does.
  ~RegistrationCache() {
    for (auto& entry : byBegin_) deregister_(entry.second->handle);
  }
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // The registration covering [data, data + size), made by `registerFn` if
  // none does (or sharing is off). 0, or registerFn's error.
  int acquire(const void* data, size_t size, const RegisterFn& registerFn, Entry** out) {
    uintptr_t begin = 0, end = 0;
    pageRange(data, size, pageSize_, &begin, &end);
    std::lock_guard<Lock> guard(lock_);
    if (share_) {
      // Candidates start at or below `begin`; NCCL keeps a handful of
      // buffers per device, so a backwards walk is enough.
      for (auto it = byBegin_.upper_bound(begin); it != byBegin_.begin();) {
        --it;
        Entry& entry = *it->second;
        if (entry.end >= end) {
          entry.refs++;
          *out = &entry;
          return 0;
        }
      }
    }
    Handle handle{};
    int rc = registerFn(&begin, &end, &handle);
    if (rc != 0) return rc;
    auto entry = std::make_unique<Entry>();
    entry->begin = begin;
    entry->end = end;
    entry->refs = 1;
    entry->handle = handle;
    *out = entry.get();
    live_.insert(entry.get());
    byBegin_.emplace(begin, std::move(entry));
    return 0;
  }

  // Drops one reference to `entry`; the last one deregisters. False (and
  // nothing changes) when `entry` is not a live registration of this cache,
  // so a stale or foreign handle is refused, never followed.
  bool release(const void* entry) {
    std::lock_guard<Lock> guard(lock_);
    if (live_.count(entry) == 0) return false;
    const auto* wanted = static_cast<const Entry*>(entry);
    auto range = byBegin_.equal_range(wanted->begin);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.get() == wanted) return dropReference(it);
    }
    return false;  // unreachable: live_ and byBegin_ agree
  }

  // The same, for the entry holding `handle` (a fabric that hands NCCL its
  // own registration object, such as an ibv_mr*, as the mhandle).
  bool releaseHandle(Handle handle) {
    std::lock_guard<Lock> guard(lock_);
    for (auto it = byBegin_.begin(); it != byBegin_.end(); ++it) {
      if (it->second->handle == handle) return dropReference(it);
    }
    return false;
  }

  bool contains(const void* entry) const {
    std::lock_guard<Lock> guard(lock_);
    return live_.count(entry) != 0;
  }
  // The live entry holding `handle`, or nullptr.
  const Entry* find(Handle handle) const {
    std::lock_guard<Lock> guard(lock_);
    return findLocked(handle);
  }
  // References held on the entry holding `handle`; 0 when there is none.
  int refsOf(Handle handle) const {
    std::lock_guard<Lock> guard(lock_);
    const Entry* entry = findLocked(handle);
    return entry != nullptr ? entry->refs : 0;
  }
  size_t registrations() const {
    std::lock_guard<Lock> guard(lock_);
    return live_.size();
  }
  size_t pageSize() const { return pageSize_; }

  // True when [data, data + size) lies inside `entry`'s bytes.
  static bool covers(const Entry& entry, const void* data, size_t size) {
    auto first = reinterpret_cast<uintptr_t>(data);
    return first >= entry.begin && first + size <= entry.end;
  }
  // The page-aligned range that holds [data, data + size); an empty buffer
  // still occupies the page it points into.
  static void pageRange(const void* data, size_t size, size_t pageSize, uintptr_t* begin,
                        uintptr_t* end) {
    auto first = reinterpret_cast<uintptr_t>(data);
    uintptr_t last = first + (size ? size : 1);
    *begin = first - first % pageSize;
    *end = (last + pageSize - 1) / pageSize * pageSize;
  }

 private:
  using Map = std::multimap<uintptr_t, std::unique_ptr<Entry>>;

  // One reference fewer on a live entry; the last one deregisters (lock held).
  bool dropReference(typename Map::iterator it) {
    if (--it->second->refs > 0) return true;
    deregister_(it->second->handle);
    live_.erase(it->second.get());
    byBegin_.erase(it);
    return true;
  }

  const Entry* findLocked(Handle handle) const {
    for (const auto& entry : byBegin_) {
      if (entry.second->handle == handle) return entry.second.get();
    }
    return nullptr;
  }

  const size_t pageSize_;
  const bool share_;
  DeregisterFn deregister_;
  mutable Lock lock_;
  Map byBegin_;
  std::unordered_set<const void*> live_;
};

}  // namespace ncclnet
