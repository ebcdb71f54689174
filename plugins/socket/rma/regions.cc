// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the registration table.
#include "regions.hpp"

#include <chrono>
#include <mutex>

#include "wire.hpp"

namespace ncclnet::socket::rma {

Region* Regions::add(void* base, size_t size, int type) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto region = std::make_unique<Region>();
  region->id = nextId_++;
  region->base = static_cast<uint8_t*>(base);
  region->size = size;
  region->type = type;
  Region* raw = region.get();
  byId_.emplace(raw->id, std::move(region));
  added_.notify_all();
  return raw;
}

bool Regions::remove(void* handle) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  for (auto it = byId_.begin(); it != byId_.end(); ++it) {
    if (it->second.get() == handle) {
      byId_.erase(it);
      return true;
    }
  }
  return false;
}

const Region* Regions::local(void* handle) const {
  if (handle == nullptr) return nullptr;
  std::shared_lock<std::shared_mutex> lock(mutex_);
  // The id is read only once the pointer is known to be a live region.
  for (const auto& [id, region] : byId_) {
    if (region.get() == handle) return region.get();
  }
  return nullptr;
}

Access Regions::resolve(uint64_t id, uint64_t offset, uint64_t size) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return resolveLocked(id, offset, size);
}

Access Regions::resolveRemote(uint64_t id, uint64_t offset, uint64_t size, int waitMs,
                              const std::atomic<bool>& cancel) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  added_.wait_for(lock, std::chrono::milliseconds(waitMs),
                  [&] { return id < nextId_ || cancel.load(); });
  return resolveLocked(id, offset, size);
}

void Regions::interruptWaits() const {
  // Under the lock: a waiter between its check and its sleep would miss it.
  std::unique_lock<std::shared_mutex> lock(mutex_);
  added_.notify_all();
}

Access Regions::resolveLocked(uint64_t id, uint64_t offset, uint64_t size) const {
  auto it = byId_.find(id);
  if (it == byId_.end()) return {nullptr, kBadRegion};
  const Region& r = *it->second;
  if (offset > r.size || size > r.size - offset) return {nullptr, kOutOfBounds};
  return {r.base + offset, kOk, r.type};
}

}  // namespace ncclnet::socket::rma
