// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: copies and signals to and from GPU memory.
#include "device_link.hpp"

#include <sched.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "ncclnet/abi/common.h"

namespace ncclnet::socket::rma {

namespace {

// The signal kernel: one thread adds `value` to the 64-bit word. PTX, so
// the driver compiles it for whatever GPU this is; the lowest target that
// has a 64-bit global reduction.
constexpr const char* kSignalAddPtx = R"(
.version 6.0
.target sm_60
.address_size 64
.visible .entry ncclnet_rma_signal_add(.param .u64 word, .param .u64 value)
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [word];
  ld.param.u64 %rd2, [value];
  cvta.to.global.u64 %rd3, %rd1;
  red.global.add.u64 [%rd3], %rd2;
  ret;
}
)";

cuda::DevicePtr devicePtr(const void* p) {
  return static_cast<cuda::DevicePtr>(reinterpret_cast<uintptr_t>(p));
}

}  // namespace

bool DeviceLink::available(std::string* why) {
  const cuda::Driver& driver = cuda::Driver::get();
  if (driver.available()) return true;
  *why = driver.whyNot();
  return false;
}

DeviceLink::~DeviceLink() {
  if (driver_ == nullptr || primary_.get() == nullptr) return;
  cuda::ScopedContext scope(*driver_, primary_.get());
  if (!scope.ok()) return;
  if (stream_ != nullptr) {
    driver_->streamSynchronize(stream_);
    driver_->streamDestroy(stream_);
  }
  if (module_ != nullptr) driver_->moduleUnload(module_);
}

bool DeviceLink::prepare(const void* data, std::string* why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!available(why)) return false;
  const cuda::Driver& driver = cuda::Driver::get();
  int ordinal = -1;
  if (!driver.isDeviceMemory(data, nullptr, &ordinal) || ordinal < 0) {
    // NCCL registers its windows from the thread that made the device
    // current (ncclCommWindowRegister), also for memory the driver cannot
    // name a device for.
    ordinal = driver.currentDevice();
  }
  if (ordinal < 0) {
    *why = "the driver names no device for this memory and no device is current";
    return false;
  }
  if (device_ >= 0) {
    if (ordinal == device_) return true;
    *why = "this comm moves memory of device " + std::to_string(device_) +
           " and cannot also move memory of device " + std::to_string(ordinal);
    return false;
  }
  if (!broken_.empty()) {
    *why = broken_;
    return false;
  }
  driver_ = &driver;
  if (!open(ordinal, why)) {
    broken_ = *why;  // a second try would retain the context again
    return false;
  }
  device_ = ordinal;
  return true;
}

bool DeviceLink::open(int device, std::string* why) {
  if (!primary_.retain(*driver_, device, why)) return false;
  cuda::ScopedContext scope(*driver_, primary_.get());
  if (!scope.ok()) {
    *why = "cuCtxSetCurrent failed: " + driver_->describe(scope.result());
    return false;
  }
  cuda::Result r = driver_->streamCreate(&stream_, cuda::kStreamNonBlocking);
  if (r != cuda::kSuccess) {
    stream_ = nullptr;
    *why = "cuStreamCreate failed: " + driver_->describe(r);
    return false;
  }
  r = driver_->moduleLoadData(&module_, kSignalAddPtx);
  if (r != cuda::kSuccess) {
    module_ = nullptr;
    *why =
        "the driver cannot compile the signal kernel (cuModuleLoadData): " + driver_->describe(r);
    return false;
  }
  r = driver_->moduleGetFunction(&signalAdd_, module_, "ncclnet_rma_signal_add");
  if (r != cuda::kSuccess) {
    *why = "cuModuleGetFunction failed: " + driver_->describe(r);
    return false;
  }
  return true;
}

// Waits for the stream by polling, not cuStreamSynchronize: a GPU that
// never gets to the work (a hung kernel, a lost device) fails the comm
// after kWaitMs instead of hanging NCCL's thread.
bool DeviceLink::finish(const char* what, cuda::Result queued, std::string* why) {
  if (queued != cuda::kSuccess) {
    *why = std::string(what) + " failed: " + driver_->describe(queued);
    return false;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  for (int spins = 0;; spins++) {
    cuda::Result r = driver_->streamQuery(stream_);
    if (r == cuda::kSuccess) return true;
    if (r != cuda::kErrorNotReady) {
      *why = std::string(what) + " failed on the GPU: " + driver_->describe(r);
      return false;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      *why = std::string(what) + " did not finish within " + std::to_string(kWaitMs) + " ms";
      return false;
    }
    if (spins < 1000) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

bool DeviceLink::copy(void* dst, int dstType, const void* src, int srcType, size_t bytes,
                      std::string* why) {
  if (bytes == 0) return true;
  bool toGpu = dstType == NCCL_PTR_CUDA;
  bool fromGpu = srcType == NCCL_PTR_CUDA;
  if (toGpu && fromGpu) return deviceToDevice(dst, src, bytes, why);
  if (toGpu) return toDevice(dst, src, bytes, why);
  if (fromGpu) return toHost(dst, src, bytes, why);
  std::memmove(dst, src, bytes);
  return true;
}

bool DeviceLink::add(void* word, int type, uint64_t value, std::string* why) {
  if (type == NCCL_PTR_CUDA) return addSignal(word, value, why);
  __atomic_fetch_add(static_cast<uint64_t*>(word), value, __ATOMIC_SEQ_CST);
  return true;
}

template <class Queue>
bool DeviceLink::run(const char* what, Queue queue, std::string* why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (device_ < 0) {
    *why = std::string(what) + ": no CUDA memory was registered on this comm";
    return false;
  }
  cuda::ScopedContext scope(*driver_, primary_.get());
  if (!scope.ok()) {
    *why = "cuCtxSetCurrent failed: " + driver_->describe(scope.result());
    return false;
  }
  return finish(what, queue(), why);
}

bool DeviceLink::toHost(void* dst, const void* src, size_t bytes, std::string* why) {
  return run(
      "cuMemcpyDtoHAsync",
      [&] { return driver_->memcpyDtoHAsync(dst, devicePtr(src), bytes, stream_); }, why);
}

bool DeviceLink::toDevice(void* dst, const void* src, size_t bytes, std::string* why) {
  return run(
      "cuMemcpyHtoDAsync",
      [&] { return driver_->memcpyHtoDAsync(devicePtr(dst), src, bytes, stream_); }, why);
}

bool DeviceLink::deviceToDevice(void* dst, const void* src, size_t bytes, std::string* why) {
  return run(
      "cuMemcpyDtoDAsync",
      [&] { return driver_->memcpyDtoDAsync(devicePtr(dst), devicePtr(src), bytes, stream_); },
      why);
}

bool DeviceLink::addSignal(void* word, uint64_t value, std::string* why) {
  cuda::DevicePtr at = devicePtr(word);
  void* params[] = {&at, &value};
  return run(
      "the signal kernel",
      [&] {
        return driver_->launchKernel(signalAdd_, 1, 1, 1, 1, 1, 1, 0, stream_, params, nullptr);
      },
      why);
}

}  // namespace ncclnet::socket::rma
