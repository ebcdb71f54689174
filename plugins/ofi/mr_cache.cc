// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the registration cache (see mr_cache.hpp).
#include "mr_cache.hpp"

#include <utility>

namespace ncclnet::ofi {

MrCache::MrCache(size_t pageSize, bool share, RegisterFn registerFn, DeregisterFn deregisterFn)
    : pageSize_(pageSize ? pageSize : 4096),
      share_(share),
      register_(std::move(registerFn)),
      deregister_(std::move(deregisterFn)) {}

MrCache::~MrCache() {
  // Registrations NCCL never released (an aborted communicator): the
  // provider objects must still go before the domain does.
  for (auto& entry : byBegin_) deregister_(entry.second->handle);
}

void MrCache::pageRange(const void* data, size_t size, size_t pageSize, uintptr_t* begin,
                        uintptr_t* end) {
  auto first = reinterpret_cast<uintptr_t>(data);
  uintptr_t last = first + (size ? size : 1);
  *begin = first - first % pageSize;
  *end = (last + pageSize - 1) / pageSize * pageSize;
}

bool MrCache::covers(const Entry& entry, const void* data, size_t size) {
  auto first = reinterpret_cast<uintptr_t>(data);
  return first >= entry.begin && first + size <= entry.end;
}

int MrCache::acquire(const void* data, size_t size, const RegisterFn& registerFn, Entry** out) {
  uintptr_t begin = 0, end = 0;
  pageRange(data, size, pageSize_, &begin, &end);
  if (share_) {
    // Candidates start at or below `begin`; the list is short (a handful of
    // NCCL buffers per device), so a backwards walk is enough.
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
  void* handle = nullptr;
  int rc = registerFn(reinterpret_cast<void*>(begin), end - begin, &handle);
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

bool MrCache::release(const void* handle) {
  if (!contains(handle)) return false;
  const auto* wanted = static_cast<const Entry*>(handle);
  auto range = byBegin_.equal_range(wanted->begin);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.get() != wanted) continue;
    if (--it->second->refs > 0) return true;
    deregister_(it->second->handle);
    live_.erase(handle);
    byBegin_.erase(it);
    return true;
  }
  return false;  // unreachable: live_ and byBegin_ agree
}

}  // namespace ncclnet::ofi
