// SPDX-License-Identifier: Apache-2.0
// softverbs: finding and reaching CUDA device memory behind an MR.
#include "gpu.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

}  // namespace

std::atomic<int> GpuMemory::live_{0};

std::unique_ptr<GpuMemory> GpuMemory::detect(const void* addr, size_t length, int* error) {
  *error = 0;
  if (length == 0 || !driverLoaded()) return nullptr;
  const cu::Driver& driver = cu::Driver::get();
  if (!driver.available()) return nullptr;
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
  std::unique_ptr<GpuMemory> gpu(new GpuMemory(driver));
  if (context == nullptr) {
    // Memory mapped with cuMemMap belongs to no context: use the device's
    // primary one, held for as long as the MR lives.
    cu::Device device = 0;
    if (ordinal < 0 || driver.deviceGet(&device, ordinal) != cu::kSuccess ||
        driver.primaryCtxRetain(&context, device) != cu::kSuccess) {
      *error = EFAULT;
      return nullptr;
    }
    gpu->releaseDevice_ = ordinal;
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
  return driverLoaded() && cu::Driver::get().isDeviceMemory(p);
}

bool dmaBufUsable(std::string* why) {
  if (!driverLoaded()) {
    *why = "this process has not loaded the CUDA driver (libcuda.so.1): it has no GPU memory";
    return false;
  }
  const cu::Driver& driver = cu::Driver::get();
  if (driver.available()) return true;
  *why = "CUDA driver " + driver.whyNot();
  return false;
}

bool peerMemory() {
  const char* raw = std::getenv("SOFTVERBS_PEERMEM");
  return raw == nullptr || std::strcmp(raw, "0") != 0;
}

}  // namespace softverbs
