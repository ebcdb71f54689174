// SPDX-License-Identifier: Apache-2.0
// A CPU stand-in for the CUDA driver (libcuda.so.1), for tests on hosts
// without a GPU: the entry points ncclnet::cuda::Driver binds, behaving
// like one device whose memory the CPU cannot touch. Device pointers lie in
// a reserved, inaccessible address range, and each allocation's bytes live
// in a host shadow that only the driver's copies reach: code that
// dereferences device memory crashes here as it would next to a GPU, and
// code that forgets to make a context current gets
// CUDA_ERROR_INVALID_CONTEXT. Never installed; tests put its folder on
// LD_LIBRARY_PATH.
//
// Two more of the driver's rules are kept, at their strictest, so that
// code relying on a GPU's timing fails here every time instead of once in
// a while there:
//  - cuMemcpyHtoD (from pageable memory) returns once the bytes are staged
//    and cuMemsetD8 once it is queued: both land on the legacy default
//    stream only when something waits for that stream (a synchronize of
//    it or of a blocking stream, a later copy or free that it orders).
//    Non-blocking streams do not wait for it: they see the old bytes.
//  - Releasing the last reference on the primary context destroys it:
//    its allocations and its streams go. A stream handle of it is then
//    dangling: the real driver answers CUDA_ERROR_CONTEXT_IS_DESTROYED
//    while the freed stream's memory is intact, and crashes once that
//    memory is reused. Here any use of such a stream raises SIGSEGV.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using Result = int;
using DevicePtr = unsigned long long;

constexpr Result kSuccess = 0;
constexpr Result kInvalidValue = 1;
constexpr Result kOutOfMemory = 2;
constexpr Result kInvalidDevice = 101;
constexpr Result kInvalidContext = 201;
constexpr Result kContextIsDestroyed = 709;
constexpr Result kInvalidHandle = 400;
constexpr Result kNotFound = 500;
constexpr Result kIllegalAddress = 700;
constexpr Result kHostMemoryAlreadyRegistered = 712;
constexpr Result kHostMemoryNotRegistered = 713;

constexpr size_t kReserve = size_t(1) << 36;  // address space only (64 GiB)
constexpr size_t kAlign = size_t(2) << 20;

constexpr unsigned kStreamNonBlocking = 1;

struct Allocation {
  size_t size;
  std::unique_ptr<char[]> shadow;
};

// A copy or a memset queued on the legacy default stream, not landed yet.
struct Queued {
  uintptr_t dst;
  std::vector<char> bytes;  // what lands there
};

struct State {
  std::mutex mutex;
  uintptr_t base = 0;
  uintptr_t next = 0;
  std::map<uintptr_t, Allocation> allocations;  // by device address
  std::map<void*, unsigned> streams;            // live streams and their flags
  std::set<void*> deadStreams;                  // of a destroyed context (kept allocated)
  std::deque<Queued> legacy;                    // the legacy stream's pending work
  std::atomic<int> primaryRefs{0};              // changed under the mutex, read without
  std::map<uintptr_t, size_t> hostRegistered;   // pinned host ranges, by address
};

State& state() {
  static State* s = new State;  // outlives every caller's exit handlers
  return *s;
}

char gPrimaryContext;  // its address is the device's primary context
thread_local void* tCurrent = nullptr;

void* primary() {
  return &gPrimaryContext;
}

// The shadow bytes behind [ptr, ptr + bytes), or nullptr unless one
// allocation holds them all (mutex held).
char* shadowOf(State& s, DevicePtr ptr, size_t bytes) {
  auto it = s.allocations.upper_bound(static_cast<uintptr_t>(ptr));
  if (it == s.allocations.begin()) return nullptr;
  --it;
  uintptr_t offset = static_cast<uintptr_t>(ptr) - it->first;
  if (offset >= it->second.size || bytes > it->second.size - offset) return nullptr;
  return it->second.shadow.get() + offset;
}

// The calling thread's context: CUDA_ERROR_INVALID_CONTEXT without one,
// CUDA_ERROR_CONTEXT_IS_DESTROYED once the primary context it has lost its
// last reference (the driver still lets it be made current).
Result currentContext() {
  if (tCurrent != primary()) return kInvalidContext;
  return state().primaryRefs.load() > 0 ? kSuccess : kContextIsDestroyed;
}

// Lands what the legacy stream still has queued (mutex held).
void drainLegacy(State& s) {
  for (Queued& q : s.legacy) {
    char* to = shadowOf(s, q.dst, q.bytes.size());
    if (to != nullptr) std::memcpy(to, q.bytes.data(), q.bytes.size());  // freed: nowhere
  }
  s.legacy.clear();
}

// A stream handle as the driver sees it (mutex held): the legacy stream
// (nullptr), a live stream, or one the destruction of its context left
// dangling, which the real driver would dereference.
enum class StreamIs { kLegacy, kBlocking, kNonBlocking, kUnknown };
StreamIs classify(State& s, void* stream, const char* fn) {
  if (stream == nullptr) return StreamIs::kLegacy;
  auto it = s.streams.find(stream);
  if (it != s.streams.end())
    return (it->second & kStreamNonBlocking) ? StreamIs::kNonBlocking : StreamIs::kBlocking;
  if (s.deadStreams.count(stream) != 0) {
    std::fprintf(stderr,
                 "fake libcuda: %s(%p): the stream's context was destroyed (its primary "
                 "context lost its last reference): a dangling stream, which the real "
                 "driver may crash on\n",
                 fn, stream);
    std::fflush(stderr);
    raise(SIGSEGV);
  }
  return StreamIs::kUnknown;
}

// Work on a blocking stream (and the legacy stream's own) starts after
// what the legacy stream has queued; a non-blocking stream's does not.
bool waitsForLegacy(StreamIs kind) {
  return kind == StreamIs::kLegacy || kind == StreamIs::kBlocking;
}

}  // namespace

FAKE_EXPORT Result cuInit(unsigned) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.base != 0) return kSuccess;
  void* p = mmap(nullptr, kReserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return kOutOfMemory;
  s.base = (reinterpret_cast<uintptr_t>(p) + kAlign - 1) & ~(kAlign - 1);
  s.next = s.base;
  return kSuccess;
}

FAKE_EXPORT Result cuDriverGetVersion(int* version) {
  *version = 12040;
  return kSuccess;
}

FAKE_EXPORT Result cuGetErrorName(Result error, const char** name) {
  switch (error) {
    case kSuccess: *name = "CUDA_SUCCESS"; return kSuccess;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
    case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; return kSuccess;
    case kInvalidContext: *name = "CUDA_ERROR_INVALID_CONTEXT"; return kSuccess;
    case kContextIsDestroyed: *name = "CUDA_ERROR_CONTEXT_IS_DESTROYED"; return kSuccess;
    case kInvalidHandle: *name = "CUDA_ERROR_INVALID_HANDLE"; return kSuccess;
    default: *name = nullptr; return kInvalidValue;
  }
}

FAKE_EXPORT Result cuGetErrorString(Result error, const char** text) {
  Result r = cuGetErrorName(error, text);
  if (r == kSuccess) *text = "reported by the CPU stand-in for the CUDA driver";
  return r;
}

FAKE_EXPORT Result cuDeviceGet(int* device, int ordinal) {
  if (ordinal != 0) return kInvalidDevice;
  *device = 0;
  return kSuccess;
}

FAKE_EXPORT Result cuDeviceGetCount(int* count) {
  *count = 1;
  return kSuccess;
}

FAKE_EXPORT Result cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (device != 0) return kInvalidDevice;
  *value = attribute == 124 ? 1 : 0;  // DMA_BUF_SUPPORTED
  return kSuccess;
}

FAKE_EXPORT Result cuDevicePrimaryCtxRetain(void** context, int device) {
  if (device != 0) return kInvalidDevice;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.primaryRefs++;
  *context = primary();
  return kSuccess;
}

FAKE_EXPORT Result cuDevicePrimaryCtxRelease_v2(int device) {
  if (device != 0) return kInvalidDevice;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.primaryRefs == 0) return kInvalidContext;
  if (--s.primaryRefs > 0) return kSuccess;
  // The last reference: the context is destroyed with everything in it.
  // Its stream handles stay allocated, so no new stream takes their address.
  s.legacy.clear();
  s.allocations.clear();
  for (const auto& entry : s.streams) s.deadStreams.insert(entry.first);
  s.streams.clear();
  return kSuccess;
}

FAKE_EXPORT Result cuDevicePrimaryCtxGetState(int device, unsigned* flags, int* active) {
  if (device != 0) return kInvalidDevice;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *flags = 0;
  *active = s.primaryRefs > 0 ? 1 : 0;
  return kSuccess;
}

FAKE_EXPORT Result cuCtxSetCurrent(void* context) {
  if (context != nullptr && context != primary()) return kInvalidContext;
  tCurrent = context;
  return kSuccess;
}

FAKE_EXPORT Result cuCtxGetCurrent(void** context) {
  *context = tCurrent;
  return kSuccess;
}

FAKE_EXPORT Result cuCtxGetDevice(int* device) {
  if (Result r = currentContext(); r != kSuccess) return r;
  *device = 0;
  return kSuccess;
}

FAKE_EXPORT Result cuMemAlloc_v2(DevicePtr* ptr, size_t bytes) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  size_t span = (bytes + kAlign - 1) / kAlign * kAlign;
  if (bytes == 0 || s.base == 0 || s.next + span > s.base + kReserve - kAlign) return kOutOfMemory;
  Allocation a{bytes, std::unique_ptr<char[]>(new (std::nothrow) char[bytes])};
  if (!a.shadow) return kOutOfMemory;
  *ptr = s.next;
  s.allocations.emplace(s.next, std::move(a));
  s.next += span;
  return kSuccess;
}

FAKE_EXPORT Result cuMemFree_v2(DevicePtr ptr) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  drainLegacy(s);  // cuMemFree synchronizes
  return s.allocations.erase(static_cast<uintptr_t>(ptr)) ? kSuccess : kInvalidValue;
}

// Pageable memory: staged now, landed when the legacy stream is waited for.
FAKE_EXPORT Result cuMemcpyHtoD_v2(DevicePtr dst, const void* src, size_t bytes) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  drainLegacy(s);  // the copy starts after the stream's earlier work
  if (shadowOf(s, dst, bytes) == nullptr) return kInvalidValue;
  const auto* from = static_cast<const char*>(src);
  s.legacy.push_back(Queued{static_cast<uintptr_t>(dst), std::vector<char>(from, from + bytes)});
  return kSuccess;
}

FAKE_EXPORT Result cuMemcpyDtoH_v2(void* dst, DevicePtr src, size_t bytes) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  drainLegacy(s);  // returns once the copy, after the stream's earlier work, is done
  const char* from = shadowOf(s, src, bytes);
  if (from == nullptr) return kInvalidValue;
  std::memcpy(dst, from, bytes);
  return kSuccess;
}

FAKE_EXPORT Result cuMemcpyDtoD_v2(DevicePtr dst, DevicePtr src, size_t bytes) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  drainLegacy(s);
  char* to = shadowOf(s, dst, bytes);
  const char* from = shadowOf(s, src, bytes);
  if (to == nullptr || from == nullptr) return kInvalidValue;
  std::memmove(to, from, bytes);
  return kSuccess;
}

// Asynchronous, as the driver's: queued on the legacy stream.
FAKE_EXPORT Result cuMemsetD8_v2(DevicePtr dst, unsigned char value, size_t bytes) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (shadowOf(s, dst, bytes) == nullptr) return kInvalidValue;
  s.legacy.push_back(
      Queued{static_cast<uintptr_t>(dst), std::vector<char>(bytes, static_cast<char>(value))});
  return kSuccess;
}

FAKE_EXPORT Result cuStreamCreate(void** stream, unsigned flags) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *stream = new char;
  s.streams.emplace(*stream, flags);
  return kSuccess;
}

FAKE_EXPORT Result cuStreamDestroy_v2(void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (classify(s, stream, "cuStreamDestroy") == StreamIs::kUnknown) return kInvalidHandle;
  if (Result r = currentContext(); r != kSuccess) return r;
  if (s.streams.erase(stream) == 0) return kInvalidHandle;
  delete static_cast<char*>(stream);
  return kSuccess;
}

FAKE_EXPORT Result cuStreamSynchronize(void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  StreamIs kind = classify(s, stream, "cuStreamSynchronize");
  if (kind == StreamIs::kUnknown) return kInvalidHandle;
  if (Result r = currentContext(); r != kSuccess) return r;
  if (waitsForLegacy(kind)) drainLegacy(s);
  return kSuccess;
}

// Copies on a stream complete at once (a synchronize after them finds
// nothing left); only the legacy stream's own work is ever pending.
FAKE_EXPORT Result cuMemcpyHtoDAsync_v2(DevicePtr dst, const void* src, size_t bytes,
                                        void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  StreamIs kind = classify(s, stream, "cuMemcpyHtoDAsync");
  if (kind == StreamIs::kUnknown) return kInvalidHandle;
  if (Result r = currentContext(); r != kSuccess) return r;
  if (waitsForLegacy(kind)) drainLegacy(s);
  char* to = shadowOf(s, dst, bytes);
  if (to == nullptr) return kInvalidValue;
  std::memcpy(to, src, bytes);
  return kSuccess;
}

FAKE_EXPORT Result cuMemcpyDtoHAsync_v2(void* dst, DevicePtr src, size_t bytes, void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  StreamIs kind = classify(s, stream, "cuMemcpyDtoHAsync");
  if (kind == StreamIs::kUnknown) return kInvalidHandle;
  if (Result r = currentContext(); r != kSuccess) return r;
  if (waitsForLegacy(kind)) drainLegacy(s);
  const char* from = shadowOf(s, src, bytes);
  if (from == nullptr) return kInvalidValue;
  std::memcpy(dst, from, bytes);
  return kSuccess;
}

// Work on a stream is done when it is queued (see above).
FAKE_EXPORT Result cuStreamQuery(void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  StreamIs kind = classify(s, stream, "cuStreamQuery");
  if (kind == StreamIs::kUnknown) return kInvalidHandle;
  if (Result r = currentContext(); r != kSuccess) return r;
  if (waitsForLegacy(kind)) drainLegacy(s);
  return kSuccess;
}

FAKE_EXPORT Result cuMemcpyDtoDAsync_v2(DevicePtr dst, DevicePtr src, size_t bytes, void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  StreamIs kind = classify(s, stream, "cuMemcpyDtoDAsync");
  if (kind == StreamIs::kUnknown) return kInvalidHandle;
  if (Result r = currentContext(); r != kSuccess) return r;
  if (waitsForLegacy(kind)) drainLegacy(s);
  char* to = shadowOf(s, dst, bytes);
  const char* from = shadowOf(s, src, bytes);
  if (to == nullptr || from == nullptr) return kInvalidValue;
  std::memmove(to, from, bytes);
  return kSuccess;
}

// Modules: the one kernel the SDK ships as PTX (sdk-socket's RMA signal
// add, plugins/socket/rma/device_link.cc), run on the CPU. Any other
// image or kernel is refused, as the driver refuses what it cannot
// compile or find.
constexpr const char* kSignalAdd = "ncclnet_rma_signal_add";
char gModule;
char gSignalAddFunction;

FAKE_EXPORT Result cuModuleLoadData(void** module, const void* image) {
  if (Result r = currentContext(); r != kSuccess) return r;
  const char* ptx = static_cast<const char*>(image);
  if (ptx == nullptr || std::strstr(ptx, kSignalAdd) == nullptr) return kInvalidValue;
  *module = &gModule;
  return kSuccess;
}

FAKE_EXPORT Result cuModuleUnload(void* module) {
  if (Result r = currentContext(); r != kSuccess) return r;
  return module == &gModule ? kSuccess : kInvalidHandle;
}

FAKE_EXPORT Result cuModuleGetFunction(void** function, void* module, const char* name) {
  if (module != &gModule) return kInvalidHandle;
  if (std::strcmp(name, kSignalAdd) != 0) return kNotFound;
  *function = &gSignalAddFunction;
  return kSuccess;
}

// The signal kernel's parameters: the word (device memory) and the value.
FAKE_EXPORT Result cuLaunchKernel(void* function, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, void* stream, void** params, void**) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  StreamIs kind = classify(s, stream, "cuLaunchKernel");
  if (kind == StreamIs::kUnknown) return kInvalidHandle;
  if (Result r = currentContext(); r != kSuccess) return r;
  if (function != &gSignalAddFunction || params == nullptr) return kInvalidHandle;
  if (waitsForLegacy(kind)) drainLegacy(s);
  DevicePtr word = *static_cast<DevicePtr*>(params[0]);
  uint64_t value = *static_cast<uint64_t*>(params[1]);
  char* at = shadowOf(s, word, sizeof(uint64_t));
  if (at == nullptr || word % alignof(uint64_t) != 0) return kIllegalAddress;
  __atomic_fetch_add(reinterpret_cast<uint64_t*>(at), value, __ATOMIC_SEQ_CST);
  return kSuccess;
}

// Needs no context, like the driver's (unified addressing).
FAKE_EXPORT Result cuPointerGetAttribute(void* data, int attribute, DevicePtr ptr) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (shadowOf(s, ptr, 1) == nullptr) return kInvalidValue;
  switch (attribute) {
    case 1: *static_cast<void**>(data) = primary(); return kSuccess;  // CONTEXT
    case 2: *static_cast<unsigned*>(data) = 2; return kSuccess;       // MEMORY_TYPE: DEVICE
    case 3: *static_cast<DevicePtr*>(data) = ptr; return kSuccess;    // DEVICE_POINTER
    case 9: *static_cast<int*>(data) = 0; return kSuccess;            // DEVICE_ORDINAL
    default: return kInvalidValue;
  }
}

// A dma-buf stand-in: a memfd as large as the range, so fstat() gives its
// size as it would for a dma-buf.
FAKE_EXPORT Result cuMemGetHandleForAddressRange(void* handle, DevicePtr ptr, size_t bytes,
                                                 int type, unsigned long long) {
  if (Result r = currentContext(); r != kSuccess) return r;
  auto page = static_cast<DevicePtr>(sysconf(_SC_PAGESIZE));
  if (type != 1 || bytes == 0 || ptr % page != 0 || bytes % page != 0) return kInvalidValue;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (shadowOf(s, ptr, bytes) == nullptr) return kInvalidValue;
  }
  int fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
  if (fd < 0) return kOutOfMemory;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return kOutOfMemory;
  }
  *static_cast<int*>(handle) = fd;
  return kSuccess;
}

// Registered host memory stays ordinary host memory the CPU reads and
// writes; its device address is its host address (unified addressing).
FAKE_EXPORT Result cuMemHostRegister_v2(void* ptr, size_t bytes, unsigned) {
  if (Result r = currentContext(); r != kSuccess) return r;
  if (ptr == nullptr || bytes == 0) return kInvalidValue;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto at = reinterpret_cast<uintptr_t>(ptr);
  auto next = s.hostRegistered.lower_bound(at);
  bool overlapsNext = next != s.hostRegistered.end() && next->first < at + bytes;
  bool overlapsPrev =
      next != s.hostRegistered.begin() && std::prev(next)->first + std::prev(next)->second > at;
  if (overlapsNext || overlapsPrev) return kHostMemoryAlreadyRegistered;
  s.hostRegistered.emplace(at, bytes);
  return kSuccess;
}

FAKE_EXPORT Result cuMemHostUnregister(void* ptr) {
  if (Result r = currentContext(); r != kSuccess) return r;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.hostRegistered.erase(reinterpret_cast<uintptr_t>(ptr)) == 1 ? kSuccess
                                                                       : kHostMemoryNotRegistered;
}

FAKE_EXPORT Result cuMemHostGetDevicePointer_v2(DevicePtr* dptr, void* ptr, unsigned flags) {
  if (Result r = currentContext(); r != kSuccess) return r;
  if (flags != 0) return kInvalidValue;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto at = reinterpret_cast<uintptr_t>(ptr);
  auto it = s.hostRegistered.upper_bound(at);
  if (it == s.hostRegistered.begin() || std::prev(it)->first + std::prev(it)->second <= at)
    return kInvalidValue;
  *dptr = static_cast<DevicePtr>(at);
  return kSuccess;
}
