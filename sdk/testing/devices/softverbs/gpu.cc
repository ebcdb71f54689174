// SPDX-License-Identifier: Apache-2.0
// softverbs: finding and reaching CUDA device memory behind an MR.
#include "gpu.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "ncclnet/cuda_driver_slot.hpp"

namespace softverbs {
namespace {

namespace cu = ncclnet::cuda;

// Device memory exists only in a process that has loaded the CUDA driver;
// asking the dynamic loader is cheap and, unlike opening the driver, costs
// a host-only process nothing. Once seen, the driver stays loaded.
bool driverLoaded() {
  static std::atomic<bool> seen{false};
  if (seen.load(std::memory_order_relaxed)) return true;
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  seen.store(true, std::memory_order_relaxed);
  return true;
}

// The driver object softverbs uses, owned by the library and released when
// it unloads: sdk-ib dlopens and dlcloses softverbs (ncclnet/cuda_driver_slot.hpp).
// An MR over device memory holds a reference of its own, so one still
// registered at unload keeps the driver it copies through.
cu::DriverSlot gDriver;

// The driver, loaded and usable; nullptr otherwise (*why says why, when given).
std::shared_ptr<const cu::Driver> usableDriver(std::string* why = nullptr) {
  std::shared_ptr<const cu::Driver> driver = gDriver.get();
  if (driver != nullptr && driver->available()) return driver;
  if (why != nullptr) *why = driver != nullptr ? driver->whyNot() : "not available: unloading";
  return nullptr;
}

}  // namespace

std::atomic<int> GpuMemory::live_{0};

std::unique_ptr<GpuMemory> GpuMemory::detect(const void* addr, size_t length, int* error) {
  *error = 0;
  if (length == 0 || !driverLoaded()) return nullptr;
  std::shared_ptr<const cu::Driver> owned = usableDriver();
  if (owned == nullptr) return nullptr;
  const cu::Driver& driver = *owned;
  // A registration widened to whole pages may begin before the allocation
  // it covers; its last byte is inside it.
  const char* first = static_cast<const char*>(addr);
  const char* last = first + length - 1;
  cu::Context context = nullptr;
  int ordinal = -1;
  if (!driver.isDeviceMemory(first, &context, &ordinal) &&
      !driver.isDeviceMemory(last, &context, &ordinal)) {
    return nullptr;
  }
  std::unique_ptr<GpuMemory> gpu(new GpuMemory(std::move(owned)));
  // The copies run in the context that owns the memory, on a stream of
  // that context: both must outlive the MR. The application may free the
  // memory and release its last reference on the device's primary context
  // before it deregisters (an error path unwinding, an abort); that
  // reference going would destroy the context, and the stream with it, and
  // deregistration would then destroy a dead stream. So an MR over memory
  // of the primary context holds a reference of its own on it, released
  // last. Memory mapped with cuMemMap belongs to no context: the primary
  // one serves, held the same way. A context the application created
  // itself cannot be held: it must outlive the MR, as its memory must.
  if (!gpu->holdPrimary(ordinal, &context)) {
    *error = EFAULT;
    return nullptr;
  }
  gpu->context_ = context;
  cu::ScopedContext scope(driver, context);
  // Non-blocking: the copies never wait for (nor hold up) the application's
  // work on the legacy default stream, whose kernels may be waiting for
  // exactly the data being copied.
  if (!scope.ok() || driver.streamCreate(&gpu->stream_, cu::kStreamNonBlocking) != cu::kSuccess) {
    gpu->stream_ = nullptr;
    *error = ENOMEM;
    return nullptr;
  }
  live_.fetch_add(1, std::memory_order_relaxed);
  return gpu;
}

bool GpuMemory::holdPrimary(int ordinal, cu::Context* context) {
  cu::Device device = 0;
  if (ordinal < 0 || driver_.deviceGet(&device, ordinal) != cu::kSuccess)
    return *context != nullptr;
  if (*context != nullptr) {
    // Memory of the primary context keeps it active: an inactive one
    // cannot own it, and retaining it would only create it for nothing.
    unsigned flags = 0;
    int active = 0;
    if (driver_.primaryCtxGetState(device, &flags, &active) != cu::kSuccess || !active) return true;
  }
  cu::Context primary = nullptr;
  if (driver_.primaryCtxRetain(&primary, device) != cu::kSuccess) return *context != nullptr;
  if (*context == nullptr) *context = primary;
  if (*context != primary) {
    driver_.primaryCtxRelease(device);  // another context's memory
    return true;
  }
  releaseDevice_ = ordinal;
  return true;
}

GpuMemory::~GpuMemory() {
  if (stream_ != nullptr) {
    cu::ScopedContext scope(driver_, context_);
    driver_.streamDestroy(stream_);
    live_.fetch_sub(1, std::memory_order_relaxed);
  }
  cu::Device device = 0;
  if (releaseDevice_ >= 0 && driver_.deviceGet(&device, releaseDevice_) == cu::kSuccess)
    driver_.primaryCtxRelease(device);
}

bool GpuMemory::write(void* deviceDst, const void* hostSrc, size_t bytes) const {
  if (bytes == 0) return true;
  cu::ScopedContext scope(driver_, context_);
  auto dst = static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(deviceDst));
  return scope.ok() && driver_.memcpyHtoDAsync(dst, hostSrc, bytes, stream_) == cu::kSuccess &&
         driver_.streamSynchronize(stream_) == cu::kSuccess;
}

bool GpuMemory::read(void* hostDst, const void* deviceSrc, size_t bytes) const {
  if (bytes == 0) return true;
  cu::ScopedContext scope(driver_, context_);
  auto src = static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(deviceSrc));
  return scope.ok() && driver_.memcpyDtoHAsync(hostDst, src, bytes, stream_) == cu::kSuccess &&
         driver_.streamSynchronize(stream_) == cu::kSuccess;
}

bool GpuMemory::isDevice(const void* p) {
  if (!driverLoaded()) return false;
  std::shared_ptr<const cu::Driver> driver = usableDriver();
  return driver != nullptr && driver->isDeviceMemory(p);
}

bool dmaBufUsable(std::string* why) {
  if (!driverLoaded()) {
    *why = "this process has not loaded the CUDA driver (libcuda.so.1): it has no GPU memory";
    return false;
  }
  std::string whyNot;
  if (usableDriver(&whyNot) != nullptr) return true;
  *why = "CUDA driver " + whyNot;
  return false;
}

bool peerMemory() {
  const char* raw = std::getenv("SOFTVERBS_PEERMEM");
  return raw == nullptr || std::strcmp(raw, "0") != 0;
}

}  // namespace softverbs
