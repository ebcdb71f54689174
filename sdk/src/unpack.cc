// SPDX-License-Identifier: Apache-2.0
// The receive side of an UNPACK plugin: bounce pages and scatter lists.
#include "ncclnet/unpack.hpp"

#include <algorithm>

namespace ncclnet::unpack {

namespace {

class MappedRegion final : public Region {
 public:
  explicit MappedRegion(std::unique_ptr<cuda::MappedHostBuffer> buffer)
      : buffer_(std::move(buffer)) {}
  char* host() const override { return static_cast<char*>(buffer_->data()); }
  cuda::DevicePtr device() const override { return buffer_->devicePtr(); }

 private:
  std::unique_ptr<cuda::MappedHostBuffer> buffer_;
};

class HostRegion final : public Region {
 public:
  explicit HostRegion(size_t bytes) : bytes_(new char[bytes]()) {}
  char* host() const override { return bytes_.get(); }
  cuda::DevicePtr device() const override {
    return static_cast<cuda::DevicePtr>(reinterpret_cast<uintptr_t>(bytes_.get()));
  }

 private:
  std::unique_ptr<char[]> bytes_;
};

}  // namespace

RegionMaker mappedRegions(const cuda::Driver& driver) {
  return [&driver](size_t bytes, std::string* why) -> std::unique_ptr<Region> {
    // The caller's device: no context is created on a GPU the process does
    // not use. Portable mappings serve every context anyway.
    int device = driver.currentDevice();
    auto buffer = cuda::MappedHostBuffer::allocate(driver, device >= 0 ? device : 0, bytes, why);
    if (!buffer) return nullptr;
    return std::make_unique<MappedRegion>(std::move(buffer));
  };
}

RegionMaker mappedRegions(std::shared_ptr<const cuda::Driver> driver) {
  if (driver == nullptr) {  // a DriverSlot's answer while its library unloads
    return [](size_t, std::string* why) -> std::unique_ptr<Region> {
      *why = "no CUDA driver: the library is unloading";
      return nullptr;
    };
  }
  RegionMaker onDriver = mappedRegions(*driver);
  return [driver = std::move(driver), onDriver = std::move(onDriver)](
             size_t bytes, std::string* why) { return onDriver(bytes, why); };
}

RegionMaker hostRegions() {
  return [](size_t bytes, std::string*) -> std::unique_ptr<Region> {
    return std::make_unique<HostRegion>(bytes);
  };
}

std::shared_ptr<BouncePool> BouncePool::create(RegionMaker regions, size_t arenaBytes, int arenas,
                                               std::string* why) {
  size_t arenaPages = (arenaBytes + kPageBytes - 1) / kPageBytes;
  if (arenas < 1 || arenaPages == 0) {
    *why = "a bounce pool needs at least one arena of at least one page";
    return nullptr;
  }
  size_t pages = arenaPages * static_cast<size_t>(arenas);
  if (pages > (size_t(1) << 32) / kPageBytes) {
    *why = "a bounce pool of " + std::to_string(pages * kPageBytes) +
           " B is over 4 GiB: the scatter list's page offsets are 32-bit";
    return nullptr;
  }
  std::shared_ptr<BouncePool> pool(new BouncePool(std::move(regions), arenaPages));
  pool->memory_ = pool->regions_(pages * kPageBytes, why);
  if (!pool->memory_) return nullptr;
  for (int a = arenas - 1; a >= 0; a--)
    pool->freeArenas_.push_back(static_cast<uint32_t>(a * arenaPages));
  return pool;
}

bool BouncePool::takeArena(uint32_t* firstPage) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (freeArenas_.empty()) return false;
  *firstPage = freeArenas_.back();
  freeArenas_.pop_back();
  return true;
}

void BouncePool::returnArena(uint32_t firstPage) {
  std::lock_guard<std::mutex> lock(mutex_);
  freeArenas_.push_back(firstPage);
}

std::unique_ptr<Receiver> Receiver::create(std::shared_ptr<BouncePool> pool, std::string* why) {
  std::unique_ptr<Receiver> rx(new Receiver(pool));
  if (!pool->takeArena(&rx->firstPage_)) {
    *why = "every arena of the bounce pool is in use by another receive comm";
    return nullptr;
  }
  rx->hasArena_ = true;
  rx->queue_ = pool->regions()(sizeof(Shared), why);
  if (!rx->queue_) return nullptr;
  // Handed out from the top of the stack: the arena's first pages first,
  // then whatever was freed last.
  for (size_t p = pool->arenaPages(); p > 0; p--)
    rx->free_.push_back(rx->firstPage_ + static_cast<uint32_t>(p - 1));
  Shared* s = rx->shared();
  s->handle.meta =
      reinterpret_cast<ncclNetUnpackMeta*>(rx->queue_->device() + offsetof(Shared, meta));
  s->handle.bounce_buf = reinterpret_cast<void*>(pool->deviceBase());
  s->handle.head = 0;
  return rx;
}

Receiver::~Receiver() {
  if (hasArena_) pool_->returnArena(firstPage_);
}

void Receiver::describe(ncclNetDeviceHandle_v12_t* handle) const {
  handle->handle = reinterpret_cast<void*>(queue_->device() + offsetof(Shared, handle));
  handle->size = sizeof(ncclNetUnpackDeviceHandle);
  handle->needsProxyProgress = 1;
}

bool Receiver::reserve(size_t capacity, Pages* pages) {
  size_t want = (capacity + kPageBytes - 1) / kPageBytes;
  if (want > free_.size()) return false;
  pages->assign(free_.end() - static_cast<std::ptrdiff_t>(want), free_.end());
  std::reverse(pages->begin(), pages->end());  // popped order: the stack's top first
  free_.resize(free_.size() - want);
  return true;
}

void Receiver::trim(Pages* pages, size_t bytes) {
  size_t keep = (bytes + kPageBytes - 1) / kPageBytes;
  while (pages->size() > keep) {
    free_.push_back(pages->back());
    pages->pop_back();
  }
}

void Receiver::release(Pages* pages) {
  trim(pages, 0);
}

char* Receiver::hostAt(const Pages& pages, size_t offset) const {
  return pool_->hostBase() + static_cast<size_t>(pages[offset / kPageBytes]) * kPageBytes +
         offset % kPageBytes;
}

size_t Receiver::runAt(const Pages& pages, size_t offset, size_t size) const {
  size_t index = offset / kPageBytes;
  size_t run = kPageBytes - offset % kPageBytes;
  // Pages that follow each other in the pool make one run: one system call.
  while (offset + run < size && index + 1 < pages.size() && pages[index + 1] == pages[index] + 1) {
    index++;
    run += kPageBytes;
  }
  return std::min(run, size - offset);
}

void Receiver::publish(uint64_t seq, const Pages& pages, size_t size) {
  Shared* s = shared();
  size_t slot = (seq + 1) % kQueueDepth;  // see the header: head moves first
  size_t count = (size + kPageBytes - 1) / kPageBytes;
  ncclNetUnpackLoadMeta* entries = s->meta.mem[slot];
  for (size_t i = 0; i < count; i++) {
    entries[i].src_off = static_cast<uint32_t>(pages[i] * kPageBytes);
    entries[i].len = static_cast<uint32_t>(std::min(kPageBytes, size - i * kPageBytes));
    entries[i].dst_off = i * kPageBytes;
  }
  // The kernel reads the count first and the entries after it: the count
  // is stored last, with release ordering.
  __atomic_store_n(&s->meta.cnt[slot], static_cast<uint64_t>(count), __ATOMIC_RELEASE);
}

}  // namespace ncclnet::unpack
