// SPDX-License-Identifier: Apache-2.0
// File: ncclnet/unpack.hpp — the receive side of an NCCL_NET_DEVICE_UNPACK
// plugin (ABI: ncclnet/abi/net_device.h).
//
// An UNPACK plugin does not write payload into the buffer NCCL gave
// irecv(). It lands the bytes in pages of a bounce area, in whatever order
// suits it, and publishes for each receive a scatter list (page offset in
// the bounce area, length, offset in the message); NCCL's SIMPLE receive
// kernel copies the pages into place before it reads the step. Pages come
// back to the plugin through irecvConsumed, once the kernel is done.
//
//   // once per plugin instance, at the first UNPACK accept:
//   // the library's driver (cuda_driver_slot.hpp), which the pool keeps:
//   auto pool = unpack::BouncePool::create(unpack::mappedRegions(gDriver.get()),
//                                          arenaBytes, arenas, &why);
//   // per receive comm (accept got an UNPACK handle):
//   auto rx = unpack::Receiver::create(pool, &why);
//   rx->describe(*devHandle);                      // what NCCL copies to the kernel
//   // irecv: rx->reserve(capacity, &pages)        -> false: no room, NULL request
//   // data:  land byte `off` at rx->hostAt(pages, off), contiguous for rx->runAt(pages, off)
//   // test:  rx->publish(seq, pages, size)        -> before reporting done
//   // irecvConsumed: rx->release(pages)
//
// Why one pool: NCCL's kernel keeps a single bounce base per thread block,
// and one block may unpack from several receive connections, so every
// handle of a process must share that base. Each comm owns a fixed arena
// of the pool, so no comm can starve another (whose kernel step it may be
// waiting for). The memory is pinned host memory mapped into every
// context (mappedRegions): a socket writes it directly, and the kernel
// reads it with the volatile loads it uses for bounce pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ncclnet/abi/net_device.h"
#include "ncclnet/cuda_driver.hpp"

namespace ncclnet::unpack {

constexpr size_t kPageBytes = NCCL_NET_UNPACK_SLICE_PAGE_SIZE;
constexpr size_t kQueueDepth = NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH;
constexpr size_t kMaxPagesPerReceive = NCCL_NET_UNPACK_MAX_SLICE_PAGES;
// The largest receive an UNPACK kernel handles (what a plugin advertises as
// maxP2pBytes / maxCollBytes).
constexpr size_t kMaxReceiveBytes = NCCL_NET_UNPACK_MAX_SLICE_SIZE;

using Pages = std::vector<uint32_t>;  // page indices in the pool, in message order

// Zeroed memory the CPU writes and the receive kernel reads, at an address
// of its own.
class Region {
 public:
  virtual ~Region() = default;
  virtual char* host() const = 0;
  virtual cuda::DevicePtr device() const = 0;
};
using RegionMaker = std::function<std::unique_ptr<Region>(size_t bytes, std::string* why)>;

// Pinned host memory mapped into every CUDA context: for GPU kernels. Made
// in the primary context of the caller's current device (NCCL's proxy
// thread runs in its GPU's), else of device 0. The regions hold `driver`:
// a pool made in a plugin outlives the plugin's own reference to it when
// NCCL unloads the plugin with comms still open.
RegionMaker mappedRegions(std::shared_ptr<const cuda::Driver> driver);
// The same on a driver that outlives every pool (Driver::get()).
RegionMaker mappedRegions(const cuda::Driver& driver);
// Plain host memory, device address = host address: for a receive
// "kernel" that runs on the CPU (the reference transport's host peer).
RegionMaker hostRegions();

class BouncePool {
 public:
  // `arenas` arenas of `arenaBytes` (rounded up to whole pages) in one
  // region, at most 4 GiB (the scatter list's offsets are 32-bit).
  static std::shared_ptr<BouncePool> create(RegionMaker regions, size_t arenaBytes, int arenas,
                                            std::string* why);

  char* hostBase() const { return memory_->host(); }
  cuda::DevicePtr deviceBase() const { return memory_->device(); }
  const RegionMaker& regions() const { return regions_; }
  size_t arenaPages() const { return arenaPages_; }

  // The first page of a free arena, or false when every arena is taken.
  bool takeArena(uint32_t* firstPage);
  void returnArena(uint32_t firstPage);

 private:
  BouncePool(RegionMaker regions, size_t arenaPages)
      : regions_(std::move(regions)), arenaPages_(arenaPages) {}

  RegionMaker regions_;
  size_t arenaPages_;
  std::unique_ptr<Region> memory_;
  std::mutex mutex_;
  std::vector<uint32_t> freeArenas_;
};

// One receive comm's unpack state: its arena of the pool and its queue of
// scatter lists. Not thread-safe: the comm's lock covers it.
class Receiver {
 public:
  // nullptr and *why when the pool has no free arena or the queue cannot be
  // mapped.
  static std::unique_ptr<Receiver> create(std::shared_ptr<BouncePool> pool, std::string* why);
  ~Receiver();
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  // Fills the handle NCCL preallocated for accept: the kernel's view of
  // the queue and the bounce base. Proxy progress stays on: pages land
  // from the plugin's own threads, and NCCL must keep calling test().
  void describe(ncclNetDeviceHandle_v12_t* handle) const;

  // Pages for a receive of up to `capacity` bytes; false when the arena has
  // too few free pages now (the caller retries later).
  bool reserve(size_t capacity, Pages* pages);
  // Gives back the pages beyond the first `bytes` (a shorter message).
  void trim(Pages* pages, size_t bytes);
  void release(Pages* pages);

  // Where byte `offset` of the message lands, and how many bytes from there
  // are contiguous in the bounce area.
  char* hostAt(const Pages& pages, size_t offset) const;
  size_t runAt(const Pages& pages, size_t offset, size_t size) const;

  // Writes receive `seq`'s scatter list (one entry per page of `size`
  // bytes), the entries before the count, into queue slot (seq + 1) % 16:
  // the kernel's head starts at 0 and is advanced before each step reads
  // its slot. `seq` counts the comm's receives from 0, one per step. Call
  // it before reporting the receive done: NCCL's proxy then tells the kernel.
  void publish(uint64_t seq, const Pages& pages, size_t size);

  size_t arenaPages() const { return pool_->arenaPages(); }
  size_t freePages() const { return free_.size(); }

 private:
  explicit Receiver(std::shared_ptr<BouncePool> pool) : pool_(std::move(pool)) {}

  // The queue and the kernel's handle, mapped together.
  struct Shared {
    ncclNetUnpackDeviceHandle handle;
    alignas(16) ncclNetUnpackMeta meta;
  };
  Shared* shared() const { return reinterpret_cast<Shared*>(queue_->host()); }

  std::shared_ptr<BouncePool> pool_;
  std::unique_ptr<Region> queue_;
  uint32_t firstPage_ = 0;
  bool hasArena_ = false;
  Pages free_;  // a stack: recently freed pages are reused first
};

}  // namespace ncclnet::unpack
