// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the registration cache.
#include "mr_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ncclnet::ib {

MrCache::MrCache(const IbvApi& api, ibv_pd* pd, bool relaxedOrdering)
    : api_(api),
      pd_(pd),
      relaxedOrdering_(relaxedOrdering && api.regMrIova2 != nullptr),
      access_(kAccess |
              (relaxedOrdering_ ? static_cast<unsigned>(IBV_ACCESS_RELAXED_ORDERING) : 0u)),
      pageSize_(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE))) {}

MrCache::~MrCache() {
  for (Entry& e : entries_) api_.deregMr(e.mr);
}

ibv_mr* MrCache::acquire(void* data, size_t size, const DmaBufRange* dmabuf, std::string* why) {
  auto addr = reinterpret_cast<uintptr_t>(data);
  uintptr_t begin = addr & ~(pageSize_ - 1);
  uintptr_t end = (addr + std::max<size_t>(size, 1) + pageSize_ - 1) & ~(pageSize_ - 1);
  std::lock_guard<std::mutex> lock(mutex_);
  // Any entry starting at or before `begin` may cover the range; entries
  // can overlap, so look at every one that starts early enough.
  auto it = std::upper_bound(entries_.begin(), entries_.end(), begin,
                             [](uintptr_t b, const Entry& e) { return b < e.begin; });
  for (auto e = entries_.begin(); e != it; ++e) {
    if (e->end >= end) {
      e->refs++;
      return e->mr;
    }
  }
  ibv_mr* mr = registerRange(addr, size, dmabuf, &begin, &end, why);
  if (mr == nullptr) return nullptr;
  it = std::upper_bound(entries_.begin(), entries_.end(), begin,
                        [](uintptr_t b, const Entry& e) { return b < e.begin; });
  entries_.insert(it, Entry{begin, end, mr, 1});
  return mr;
}

ibv_mr* MrCache::registerRange(uintptr_t data, size_t size, const DmaBufRange* dmabuf,
                               uintptr_t* begin, uintptr_t* end, std::string* why) {
  if (dmabuf == nullptr) {
    auto* addr = reinterpret_cast<void*>(*begin);
    ibv_mr* mr = relaxedOrdering_ ? api_.regMrIova2(pd_, addr, *end - *begin, *begin, access_)
                                  : api_.regMr(pd_, addr, *end - *begin, kAccess);
    if (mr == nullptr) {
      *why = std::string(relaxedOrdering_ ? "ibv_reg_mr_iova2" : "ibv_reg_mr") +
             " failed: " + std::strerror(errno);
    }
    return mr;
  }
  if (api_.regDmabufMr == nullptr) {
    *why = "the verbs library has no ibv_reg_dmabuf_mr";
    return nullptr;
  }
  // Whole pages when the dma-buf holds the page the buffer starts in (the
  // fd NCCL exports covers page-aligned ranges); else just the buffer.
  uint64_t lead = data - *begin;
  uint64_t offset = dmabuf->offset - lead;
  if (dmabuf->offset < lead) {
    *begin = data;
    *end = data + std::max<size_t>(size, 1);
    offset = dmabuf->offset;
  }
  ibv_mr* mr =
      api_.regDmabufMr(pd_, offset, *end - *begin, *begin, dmabuf->fd, static_cast<int>(access_));
  if (mr == nullptr) *why = std::string("ibv_reg_dmabuf_mr failed: ") + std::strerror(errno);
  return mr;
}

bool MrCache::release(ibv_mr* mr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it =
      std::find_if(entries_.begin(), entries_.end(), [mr](const Entry& e) { return e.mr == mr; });
  if (it == entries_.end()) return false;
  if (--it->refs == 0) {
    api_.deregMr(it->mr);
    entries_.erase(it);  // erase keeps the order lookups rely on
  }
  return true;
}

size_t MrCache::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

int MrCache::refsOf(const ibv_mr* mr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Entry& e : entries_) {
    if (e.mr == mr) return e.refs;
  }
  return 0;
}

}  // namespace ncclnet::ib
