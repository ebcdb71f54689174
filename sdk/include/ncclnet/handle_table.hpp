// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the table behind every handle a plugin built on the object
// model (<ncclnet/object_model.hpp>) gives NCCL.
//
// NCCL keeps comms, mhandles and requests as opaque void* and only ever
// compares them with NULL (src/transport/net.cc stores them in its proxy
// resources and passes them back unchanged). So a handle need not be an
// address: here it is an index into a table of slots plus the slot's
// generation and the object's kind, packed into the pointer's 64 bits.
// Looking one up reads two atomics of a slot that exists for as long as the
// table does, whatever value NCCL passes: a handle of the wrong kind, one
// already closed (its slot's generation moved on) or plain garbage is
// refused without following a pointer, and without a lock.
//
// Inserting and removing take the table's mutex: for comms and mhandles
// that is the control path; each comm's requests have a table of their own,
// so the data path only ever locks per comm.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

namespace ncclnet {

// What a handle names. Never 0, so no handle is NULL (or NCCL's 0x1 hint,
// NCCL_NET_OPTIONAL_RECV_COMPLETION).
enum class HandleKind : uint8_t {
  Listen = 1,
  Send = 2,
  Recv = 3,
  Mem = 4,
  Connect = 5,  // a connect in progress (kept in the 128-byte listen handle)
  Request = 6,
};

inline const char* handleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::Listen: return "listenComm";
    case HandleKind::Send: return "sendComm";
    case HandleKind::Recv: return "recvComm";
    case HandleKind::Mem: return "mhandle";
    case HandleKind::Connect: return "connect in progress";
    case HandleKind::Request: return "request";
  }
  return "handle";
}

// A slot's address in its table: index and generation.
struct SlotId {
  uint32_t index = 0;
  uint32_t generation = 0;
};

// Slots in chunks that are allocated once and never move, so a lookup
// needs no lock. `GenerationBits` is how much of the generation the handle
// keeps: a handle that outlived its object is caught until the slot is
// reused 2^GenerationBits times.
template <uint32_t ChunkSlots, uint32_t MaxChunks, uint32_t GenerationBits>
class SlotTable {
 public:
  static constexpr uint32_t kCapacity = ChunkSlots * MaxChunks;
  static constexpr uint32_t kGenerationMask =
      GenerationBits >= 32 ? 0xffffffffu : (1u << GenerationBits) - 1;

  SlotTable() : chunks_(new std::atomic<Slot*>[MaxChunks]) {
    for (uint32_t i = 0; i < MaxChunks; i++) chunks_[i].store(nullptr, std::memory_order_relaxed);
  }
  ~SlotTable() {
    for (uint32_t i = 0; i < MaxChunks; i++) delete[] chunks_[i].load(std::memory_order_relaxed);
  }
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;

  // Stores `object` in a free slot; false when every slot is taken.
  bool insert(void* object, SlotId* id) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t index;
    // A freed slot waits behind a chunk's worth of others (or until the
    // table is full) and comes back oldest first: a stale handle stays
    // detectable for longer, and the table still stops growing at what
    // is in flight plus one chunk.
    if (free_.size() > ChunkSlots || (used_ == kCapacity && !free_.empty())) {
      index = free_.front();
      free_.pop_front();
    } else if (used_ < kCapacity) {
      index = used_++;
      uint32_t chunk = index / ChunkSlots;
      if (chunks_[chunk].load(std::memory_order_relaxed) == nullptr) {
        chunks_[chunk].store(new Slot[ChunkSlots], std::memory_order_release);
      }
    } else {
      return false;
    }
    Slot& slot = slotAt(index);
    slot.generation = (slot.generation + 1) & kGenerationMask;
    if (slot.generation == 0) slot.generation = 1;  // 0 marks a free slot
    slot.object.store(object, std::memory_order_relaxed);
    slot.mark.store(0, std::memory_order_relaxed);
    slot.stamp.store(slot.generation, std::memory_order_release);
    live_++;
    *id = SlotId{index, slot.generation};
    return true;
  }

  // The object in slot `id`, or nullptr when the slot is free or holds a
  // later generation. Lock-free.
  void* find(SlotId id) const {
    const Slot* slot = liveSlot(id);
    return slot == nullptr ? nullptr : slot->object.load(std::memory_order_acquire);
  }

  // Slot `index` when its generation's low bits (under `mask`) are
  // `generationLow`: how a request finds its comm, whose handle keeps only
  // part of the comm's generation. *mark gets the slot's mark. Lock-free.
  void* findByIndex(uint32_t index, uint32_t mask, uint32_t generationLow, uint32_t* mark) const {
    if (index >= kCapacity) return nullptr;
    const Slot* chunk = chunks_[index / ChunkSlots].load(std::memory_order_acquire);
    if (chunk == nullptr) return nullptr;
    const Slot& slot = chunk[index % ChunkSlots];
    uint32_t stamp = slot.stamp.load(std::memory_order_acquire);
    if (stamp == 0 || (stamp & mask) != generationLow) return nullptr;
    *mark = slot.mark.load(std::memory_order_acquire);
    return slot.object.load(std::memory_order_acquire);
  }

  // Replaces what live slot `id` holds (a slot reserved with nullptr).
  bool assign(SlotId id, void* object) {
    Slot* slot = const_cast<Slot*>(liveSlot(id));
    if (slot == nullptr) return false;
    slot->object.store(object, std::memory_order_release);
    return true;
  }

  // A per-slot word the owner may use (e.g. "reported done"): 0 after
  // insert. False when `id` is not live.
  bool setMark(SlotId id, uint32_t mark) {
    Slot* slot = const_cast<Slot*>(liveSlot(id));
    if (slot == nullptr) return false;
    slot->mark.store(mark, std::memory_order_release);
    return true;
  }
  uint32_t mark(SlotId id) const {
    const Slot* slot = liveSlot(id);
    return slot == nullptr ? 0 : slot->mark.load(std::memory_order_acquire);
  }

  // Frees slot `id` and returns what it held, or nullptr when it is not live.
  void* remove(SlotId id) {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot* slot = const_cast<Slot*>(liveSlot(id));
    if (slot == nullptr) return nullptr;
    slot->stamp.store(0, std::memory_order_release);
    void* object = slot->object.exchange(nullptr, std::memory_order_acq_rel);
    free_.push_back(id.index);
    live_--;
    return object;
  }

  // Every live object (for teardown and for reports), in slot order.
  template <class F>
  void forEach(F&& visit) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t i = 0; i < used_; i++) {
      const Slot& slot = slotAt(i);
      uint32_t stamp = slot.stamp.load(std::memory_order_acquire);
      if (stamp != 0) visit(SlotId{i, stamp}, slot.object.load(std::memory_order_acquire));
    }
  }

  size_t live() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }

 private:
  struct Slot {
    std::atomic<uint32_t> stamp{0};  // the live generation, 0 when free
    std::atomic<uint32_t> mark{0};
    std::atomic<void*> object{nullptr};
    uint32_t generation = 0;  // the last one handed out (mutex_)
  };

  Slot& slotAt(uint32_t index) const {
    return chunks_[index / ChunkSlots].load(std::memory_order_acquire)[index % ChunkSlots];
  }

  const Slot* liveSlot(SlotId id) const {
    if (id.index >= kCapacity || id.generation == 0) return nullptr;
    const Slot* chunk = chunks_[id.index / ChunkSlots].load(std::memory_order_acquire);
    if (chunk == nullptr) return nullptr;
    const Slot& slot = chunk[id.index % ChunkSlots];
    return slot.stamp.load(std::memory_order_acquire) == id.generation ? &slot : nullptr;
  }

  mutable std::mutex mutex_;
  std::unique_ptr<std::atomic<Slot*>[]> chunks_;
  uint32_t used_ = 0;  // slots ever handed out: [0, used_) have chunks
  std::deque<uint32_t> free_;
  size_t live_ = 0;
};

// How handles pack into NCCL's void*. Bits 63..60 hold the kind.
//   comms, mhandles, connects: 59..32 generation (28 bits), 31..0 index
//   requests: 59..40 comm index (20 bits), 39..32 the comm's generation
//             (low 8 bits), 31..20 request index (12 bits), 19..0 the
//             request's generation (20 bits)
namespace handle_bits {

constexpr uint32_t kObjectGenerationBits = 28;
constexpr uint32_t kCommIndexBits = 20;
constexpr uint32_t kRequestIndexBits = 12;
constexpr uint32_t kRequestGenerationBits = 20;
constexpr uint32_t kCommGenerationInRequest = 0xff;

inline void* object(HandleKind kind, SlotId id) {
  uint64_t v = uint64_t(kind) << 60 | uint64_t(id.generation) << 32 | id.index;
  return reinterpret_cast<void*>(static_cast<uintptr_t>(v));
}
inline uint64_t raw(const void* handle) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
}
inline HandleKind kindOf(const void* handle) {
  return HandleKind(raw(handle) >> 60);
}
inline SlotId objectId(const void* handle) {
  uint64_t v = raw(handle);
  return SlotId{uint32_t(v), uint32_t(v >> 32) & ((1u << kObjectGenerationBits) - 1)};
}

inline void* request(SlotId comm, SlotId request) {
  uint64_t v = uint64_t(HandleKind::Request) << 60 | uint64_t(comm.index) << 40 |
               uint64_t(comm.generation & kCommGenerationInRequest) << 32 |
               uint64_t(request.index) << 20 | request.generation;
  return reinterpret_cast<void*>(static_cast<uintptr_t>(v));
}
inline SlotId requestCommIndex(const void* handle, uint32_t* commGenerationLow) {
  uint64_t v = raw(handle);
  *commGenerationLow = uint32_t(v >> 32) & kCommGenerationInRequest;
  return SlotId{uint32_t(v >> 40) & ((1u << kCommIndexBits) - 1), 0};
}
inline SlotId requestId(const void* handle) {
  uint64_t v = raw(handle);
  return SlotId{uint32_t(v >> 20) & ((1u << kRequestIndexBits) - 1),
                uint32_t(v) & ((1u << kRequestGenerationBits) - 1)};
}

}  // namespace handle_bits

// Comms, mhandles and connects in progress: one table per plugin object.
using ObjectTable = SlotTable<256, 4096, handle_bits::kObjectGenerationBits>;  // 1 Mi slots
// A comm's requests in flight (and receives held until irecvConsumed).
using RequestTable = SlotTable<64, 64, handle_bits::kRequestGenerationBits>;  // 4096 slots
static_assert(ObjectTable::kCapacity <= (1u << handle_bits::kCommIndexBits),
              "a request handle must be able to name every comm");
static_assert(RequestTable::kCapacity <= (1u << handle_bits::kRequestIndexBits),
              "a request handle must be able to name every request of a comm");

}  // namespace ncclnet
