// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the registrations of one collComm. regMrSym is collective
// and every rank registers the same regions in the same order (NCCL's
// contract: plugins/gin/README.md; NCCL's own socket RMA assigns its MR ids
// the same way), so the k-th registration has id k on every rank and a
// frame names a region by id with no exchange. Sizes may differ per rank
// (2.30's asymmetric windows): only the target knows its own bounds, so the
// target checks every access against them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>

namespace ncclnet::socket::rma {

struct Region {
  uint64_t id = 0;
  uint8_t* base = nullptr;
  size_t size = 0;
  int type = 0;  // NCCL_PTR_HOST or NCCL_PTR_CUDA (device_link.hpp moves it)
};

// Where an access lands, or why it may not.
struct Access {
  uint8_t* at = nullptr;
  uint8_t status = 0;  // wire.hpp Status
  int type = 0;        // the region's NCCL_PTR_HOST or NCCL_PTR_CUDA
};

class Regions {
 public:
  // The next id in collective order; the table owns the region.
  Region* add(void* base, size_t size, int type);
  // False when `handle` is not a live region of this table.
  bool remove(void* handle);
  // The region behind an mhandle NCCL passed, or null if it is not ours.
  const Region* local(void* handle) const;
  // [offset, offset + size) of region `id`, checked against its bounds; a
  // size of 0 still needs offset <= size.
  Access resolve(uint64_t id, uint64_t offset, uint64_t size) const;
  // resolve() for a peer's frame: a peer may finish its regMrSym and put to
  // the region before this rank's regMrSym of it returns (nothing in the
  // collective makes the ranks wait for each other), so an id not yet
  // given out here is waited for, up to `waitMs` or until `cancel` is set
  // and interruptWaits() called (closeColl must not wait that long).
  Access resolveRemote(uint64_t id, uint64_t offset, uint64_t size, int waitMs,
                       const std::atomic<bool>& cancel) const;
  void interruptWaits() const;

 private:
  Access resolveLocked(uint64_t id, uint64_t offset, uint64_t size) const;

  mutable std::shared_mutex mutex_;  // registration runs beside the data path
  mutable std::condition_variable_any added_;
  uint64_t nextId_ = 1;  // 0 is wire.hpp's kNoRegion
  std::map<uint64_t, std::unique_ptr<Region>> byId_;
};

}  // namespace ncclnet::socket::rma
