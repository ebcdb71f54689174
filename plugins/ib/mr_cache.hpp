// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the registrations behind regIsGlobal = 1: the SDK's registration
// cache (whole pages, shared, reference counted) over ibv_reg_mr,
// ibv_reg_mr_iova2 and ibv_reg_dmabuf_mr. A buffer inside a live
// registration (the same buffer registered by another comm, or a sub-range
// of a pool) takes a reference instead of a new registration. Host memory,
// GPU memory and dma-bufs share one cache: an entry is an address range of
// the PD, however it was registered. Locked: NCCL registers from its
// service thread while the data path runs.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "ibv_api.hpp"
#include "ncclnet/registration_cache.hpp"

namespace ncclnet::ib {

// A dma-buf holding the memory to register: `offset` is where the first
// byte of the caller's buffer is in it. The fd stays the caller's (NCCL
// closes it right after regMrDmaBuf): it is used, never kept.
struct DmaBufRange {
  uint64_t offset;
  int fd;
};

class MrCache {
 public:
  static constexpr int kAccess =
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

  // `relaxedOrdering`: registrations add IBV_ACCESS_RELAXED_ORDERING and go
  // through ibv_reg_mr_iova2, the call that takes optional access flags
  // (the caller checked the library has it). Only NCCL's buffers come here:
  // the transport's own (the CTS FIFO, whose entries must land in order)
  // are registered strongly ordered, outside the cache.
  MrCache(const IbvApi& api, ibv_pd* pd, bool relaxedOrdering = false);
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // An MR covering [data, data + size), from `dmabuf` when given (a new
  // registration then goes through ibv_reg_dmabuf_mr); nullptr with `*why`
  // on failure.
  ibv_mr* acquire(void* data, size_t size, const DmaBufRange* dmabuf, std::string* why);
  // Drops one reference; false when `mr` is not a live entry.
  bool release(ibv_mr* mr);

  bool relaxedOrdering() const { return relaxedOrdering_; }
  size_t entries() const;
  int refsOf(const ibv_mr* mr) const;  // 0: not cached

 private:
  // A new MR for [*begin, *end), which a dma-buf registration may narrow
  // to the buffer itself.
  ibv_mr* registerRange(uintptr_t data, size_t size, const DmaBufRange* dmabuf, uintptr_t* begin,
                        uintptr_t* end, std::string* why);

  const IbvApi& api_;
  ibv_pd* pd_;
  bool relaxedOrdering_;
  unsigned access_;
  RegistrationCache<ibv_mr*, std::mutex> cache_;
};

}  // namespace ncclnet::ib
