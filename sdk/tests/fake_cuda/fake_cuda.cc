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
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using Result = int;
using DevicePtr = unsigned long long;

constexpr Result kSuccess = 0;
constexpr Result kInvalidValue = 1;
constexpr Result kOutOfMemory = 2;
constexpr Result kInvalidDevice = 101;
constexpr Result kInvalidContext = 201;
constexpr Result kInvalidHandle = 400;

constexpr size_t kReserve = size_t(1) << 36;  // address space only (64 GiB)
constexpr size_t kAlign = size_t(2) << 20;

struct Allocation {
  size_t size;
  std::unique_ptr<char[]> shadow;
};

struct State {
  std::mutex mutex;
  uintptr_t base = 0;
  uintptr_t next = 0;
  std::map<uintptr_t, Allocation> allocations;  // by device address
  std::set<void*> streams;
  int primaryRefs = 0;
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

bool haveContext() {
  return tCurrent == primary();
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
  s.primaryRefs--;
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

FAKE_EXPORT Result cuMemAlloc_v2(DevicePtr* ptr, size_t bytes) {
  if (!haveContext()) return kInvalidContext;
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
  if (!haveContext()) return kInvalidContext;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.allocations.erase(static_cast<uintptr_t>(ptr)) ? kSuccess : kInvalidValue;
}

FAKE_EXPORT Result cuMemcpyHtoD_v2(DevicePtr dst, const void* src, size_t bytes) {
  if (!haveContext()) return kInvalidContext;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  char* to = shadowOf(s, dst, bytes);
  if (to == nullptr) return kInvalidValue;
  std::memcpy(to, src, bytes);
  return kSuccess;
}

FAKE_EXPORT Result cuMemcpyDtoH_v2(void* dst, DevicePtr src, size_t bytes) {
  if (!haveContext()) return kInvalidContext;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const char* from = shadowOf(s, src, bytes);
  if (from == nullptr) return kInvalidValue;
  std::memcpy(dst, from, bytes);
  return kSuccess;
}

FAKE_EXPORT Result cuMemcpyDtoD_v2(DevicePtr dst, DevicePtr src, size_t bytes) {
  if (!haveContext()) return kInvalidContext;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  char* to = shadowOf(s, dst, bytes);
  const char* from = shadowOf(s, src, bytes);
  if (to == nullptr || from == nullptr) return kInvalidValue;
  std::memmove(to, from, bytes);
  return kSuccess;
}

FAKE_EXPORT Result cuMemsetD8_v2(DevicePtr dst, unsigned char value, size_t bytes) {
  if (!haveContext()) return kInvalidContext;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  char* to = shadowOf(s, dst, bytes);
  if (to == nullptr) return kInvalidValue;
  std::memset(to, value, bytes);
  return kSuccess;
}

FAKE_EXPORT Result cuStreamCreate(void** stream, unsigned) {
  if (!haveContext()) return kInvalidContext;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *stream = new char;
  s.streams.insert(*stream);
  return kSuccess;
}

FAKE_EXPORT Result cuStreamDestroy_v2(void* stream) {
  if (!haveContext()) return kInvalidContext;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.streams.erase(stream) == 0) return kInvalidHandle;
  delete static_cast<char*>(stream);
  return kSuccess;
}

namespace {
bool knownStream(void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return stream == nullptr || s.streams.count(stream) != 0;
}
}  // namespace

FAKE_EXPORT Result cuStreamSynchronize(void* stream) {
  if (!haveContext()) return kInvalidContext;
  return knownStream(stream) ? kSuccess : kInvalidHandle;
}

// Copies complete at once: a synchronize after them finds nothing left.
FAKE_EXPORT Result cuMemcpyHtoDAsync_v2(DevicePtr dst, const void* src, size_t bytes,
                                        void* stream) {
  if (!haveContext()) return kInvalidContext;
  if (!knownStream(stream)) return kInvalidHandle;
  return cuMemcpyHtoD_v2(dst, src, bytes);
}

FAKE_EXPORT Result cuMemcpyDtoHAsync_v2(void* dst, DevicePtr src, size_t bytes, void* stream) {
  if (!haveContext()) return kInvalidContext;
  if (!knownStream(stream)) return kInvalidHandle;
  return cuMemcpyDtoH_v2(dst, src, bytes);
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
  if (!haveContext()) return kInvalidContext;
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
