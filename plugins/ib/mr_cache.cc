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
      cache_(static_cast<size_t>(sysconf(_SC_PAGESIZE)), true,
             [&api](ibv_mr* mr) { api.deregMr(mr); }) {}

MrCache::~MrCache() = default;

ibv_mr* MrCache::acquire(void* data, size_t size, const DmaBufRange* dmabuf, std::string* why) {
  auto addr = reinterpret_cast<uintptr_t>(data);
  decltype(cache_)::Entry* entry = nullptr;
  int rc = cache_.acquire(
      data, size,
      [&](uintptr_t* begin, uintptr_t* end, ibv_mr** mr) {
        *mr = registerRange(addr, size, dmabuf, begin, end, why);
        return *mr != nullptr ? 0 : -1;
      },
      &entry);
  return rc == 0 ? entry->handle : nullptr;
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
  return cache_.releaseHandle(mr);
}

size_t MrCache::entries() const {
  return cache_.registrations();
}

int MrCache::refsOf(const ibv_mr* mr) const {
  return cache_.refsOf(const_cast<ibv_mr*>(mr));
}

}  // namespace ncclnet::ib
