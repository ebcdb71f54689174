// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: a registration cache. NCCL registers the same buffers again and
// again (every connection re-registers the shared SIMPLE pool, user buffers
// are registered per connection), and a provider registration can cost a
// system call and page pinning. Registrations are keyed by whole pages and
// reference counted; a request inside an existing registration reuses it.
//
// The cache knows nothing of libfabric: it calls the functions it was given,
// so it can be tested on its own. It is not thread-safe; its owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_set>

namespace ncclnet::ofi {

class MrCache {
 public:
  // One provider registration of the pages [begin, end).
  struct Entry {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    int refs = 0;
    void* handle = nullptr;  // what RegisterFn returned (a fid_mr*)
  };
  // Registers `length` bytes at `base`; returns 0 or a negative fi_errno.
  using RegisterFn = std::function<int(void* base, size_t length, void** handle)>;
  using DeregisterFn = std::function<void(void* handle)>;

  // With `share` false every acquire makes its own registration (the cache
  // still tracks them, so release validates handles the same way).
  MrCache(size_t pageSize, bool share, RegisterFn registerFn, DeregisterFn deregisterFn);
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // The registration covering [data, data + size), made if needed. 0 or the
  // RegisterFn's error.
  int acquire(const void* data, size_t size, Entry** entry) {
    return acquire(data, size, register_, entry);
  }
  // The same, with `registerFn` making the registration when one is needed
  // (a dma-buf: the pages are named by an fd that only this call knows).
  int acquire(const void* data, size_t size, const RegisterFn& registerFn, Entry** entry);
  // Drops one reference; the last one deregisters. False (and nothing
  // changes) when `entry` is not a live registration of this cache.
  bool release(const void* entry);
  bool contains(const void* entry) const { return live_.count(entry) != 0; }
  // True when [data, data + size) lies inside `entry`'s pages.
  static bool covers(const Entry& entry, const void* data, size_t size);

  size_t registrations() const { return live_.size(); }
  size_t pageSize() const { return pageSize_; }

  // The page-aligned range that holds [data, data + size); an empty buffer
  // still occupies the page it points into.
  static void pageRange(const void* data, size_t size, size_t pageSize, uintptr_t* begin,
                        uintptr_t* end);

 private:
  size_t pageSize_;
  bool share_;
  RegisterFn register_;
  DeregisterFn deregister_;
  std::multimap<uintptr_t, std::unique_ptr<Entry>> byBegin_;
  std::unordered_set<const void*> live_;
};

}  // namespace ncclnet::ofi
