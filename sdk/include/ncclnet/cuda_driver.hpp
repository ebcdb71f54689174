// SPDX-License-Identifier: Apache-2.0
// File: ncclnet/cuda_driver.hpp — the CUDA driver, reached at run time.
//
// A plugin must load and work on a host without a GPU or a CUDA driver, so
// it may not link libcuda (nor the CUDA runtime). This header declares the
// few driver types and values the SDK needs, and Driver dlopens
// libcuda.so.1 on first use and resolves the entry points by their exact
// ABI names (cuMemAlloc_v2, ...), so no cuda.h is needed to build.
//
//   const ncclnet::cuda::Driver& cu = ncclnet::cuda::Driver::get();
//   if (!cu.available()) return skip(cu.whyNot());   // "not available: ..."
//   std::string why;
//   auto buf = ncclnet::cuda::DeviceBuffer::allocate(cu, /*device=*/0, 1 << 20, &why);
//   if (!buf || !buf->upload(0, host, 1 << 20, &why)) fail(why);
//
// Everything here is thread-safe. Calls that need a current context take
// care of it themselves (ScopedContext) and leave the caller's as it was.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

// The driver's opaque handles; the same tags cuda.h uses, so the types
// below are interchangeable with CUcontext and CUstream.
struct CUctx_st;
struct CUstream_st;
struct CUmod_st;
struct CUfunc_st;

namespace ncclnet {
namespace cuda {

using Result = int;                    // CUresult
using Device = int;                    // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr
using Context = CUctx_st*;             // CUcontext
using Stream = CUstream_st*;           // CUstream
using Module = CUmod_st*;              // CUmodule
using Function = CUfunc_st*;           // CUfunction

// Values from the driver API (cuda.h); stable since they were introduced.
constexpr Result kSuccess = 0;
constexpr Result kErrorInvalidValue = 1;
constexpr Result kErrorNotInitialized = 3;
constexpr Result kErrorNoDevice = 100;
constexpr Result kErrorNotReady = 600;
constexpr Result kErrorNotSupported = 801;

constexpr int kPointerAttributeContext = 1;           // CU_POINTER_ATTRIBUTE_CONTEXT
constexpr int kPointerAttributeMemoryType = 2;        // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kPointerAttributeDevicePointer = 3;     // CU_POINTER_ATTRIBUTE_DEVICE_POINTER
constexpr int kPointerAttributeDeviceOrdinal = 9;     // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
constexpr unsigned kMemoryTypeHost = 1;               // CU_MEMORYTYPE_HOST
constexpr unsigned kMemoryTypeDevice = 2;             // CU_MEMORYTYPE_DEVICE
constexpr int kDeviceAttributeDmaBufSupported = 124;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
constexpr int kMemRangeHandleTypeDmaBufFd = 1;        // CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD
constexpr unsigned kStreamNonBlocking = 1;            // CU_STREAM_NON_BLOCKING
constexpr unsigned kHostRegisterPortable = 1;         // CU_MEMHOSTREGISTER_PORTABLE
constexpr unsigned kHostRegisterDeviceMap = 2;        // CU_MEMHOSTREGISTER_DEVICEMAP

// The entry points. Named after the driver functions without the `cu`
// prefix (cuda.h #defines the unversioned names, which would rename members).
struct DriverFunctions {
  Result (*init)(unsigned flags) = nullptr;
  Result (*driverGetVersion)(int* version) = nullptr;
  Result (*getErrorName)(Result error, const char** name) = nullptr;
  Result (*getErrorString)(Result error, const char** text) = nullptr;
  Result (*deviceGet)(Device* device, int ordinal) = nullptr;
  Result (*deviceGetCount)(int* count) = nullptr;
  Result (*deviceGetAttribute)(int* value, int attribute, Device device) = nullptr;
  Result (*primaryCtxRetain)(Context* context, Device device) = nullptr;
  Result (*primaryCtxRelease)(Device device) = nullptr;
  Result (*primaryCtxGetState)(Device device, unsigned* flags, int* active) = nullptr;
  Result (*ctxSetCurrent)(Context context) = nullptr;
  Result (*ctxGetCurrent)(Context* context) = nullptr;
  Result (*ctxGetDevice)(Device* device) = nullptr;
  Result (*memAlloc)(DevicePtr* ptr, size_t bytes) = nullptr;
  Result (*memFree)(DevicePtr ptr) = nullptr;
  Result (*memcpyHtoD)(DevicePtr dst, const void* src, size_t bytes) = nullptr;
  Result (*memcpyDtoH)(void* dst, DevicePtr src, size_t bytes) = nullptr;
  Result (*memcpyDtoD)(DevicePtr dst, DevicePtr src, size_t bytes) = nullptr;
  Result (*memsetD8)(DevicePtr dst, unsigned char value, size_t bytes) = nullptr;
  Result (*memcpyHtoDAsync)(DevicePtr dst, const void* src, size_t bytes, Stream s) = nullptr;
  Result (*memcpyDtoHAsync)(void* dst, DevicePtr src, size_t bytes, Stream s) = nullptr;
  Result (*streamCreate)(Stream* stream, unsigned flags) = nullptr;
  Result (*streamDestroy)(Stream stream) = nullptr;
  Result (*streamSynchronize)(Stream stream) = nullptr;
  Result (*streamQuery)(Stream stream) = nullptr;
  Result (*memcpyDtoDAsync)(DevicePtr dst, DevicePtr src, size_t bytes, Stream s) = nullptr;
  // A kernel of the SDK's own, from PTX text the driver compiles: no nvcc
  // at build time, no CUDA runtime at run time.
  Result (*moduleLoadData)(Module* module, const void* image) = nullptr;
  Result (*moduleUnload)(Module module) = nullptr;
  Result (*moduleGetFunction)(Function* function, Module module, const char* name) = nullptr;
  Result (*launchKernel)(Function f, unsigned gridX, unsigned gridY, unsigned gridZ,
                         unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                         Stream stream, void** params, void** extra) = nullptr;
  Result (*pointerGetAttribute)(void* data, int attribute, DevicePtr ptr) = nullptr;
  Result (*memHostRegister)(void* ptr, size_t bytes, unsigned flags) = nullptr;
  Result (*memHostUnregister)(void* ptr) = nullptr;
  Result (*memHostGetDevicePointer)(DevicePtr* dptr, void* ptr, unsigned flags) = nullptr;
  // Optional (driver >= 11.7); absent means no DMA-BUF export.
  Result (*memGetHandleForAddressRange)(void* handle, DevicePtr ptr, size_t bytes, int type,
                                        unsigned long long flags) = nullptr;
};

class Driver : public DriverFunctions {
 public:
  // The process's driver (libcuda.so.1), loaded and initialized by the
  // first call from any thread, and never unloaded.
  static const Driver& get();

  // Loads `library` now: dlopen, every entry point, cuInit(0), at least one
  // device. Tests use it with other names; hosts and plugins use get().
  explicit Driver(const std::string& library);
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // False without a usable driver and device, and in a child forked after
  // the driver was initialized (CUDA does not survive fork()).
  bool available() const;
  // "not available: <reason>" (empty when available).
  std::string whyNot() const;
  int deviceCount() const { return available() ? deviceCount_ : 0; }
  int version() const { return version_; }  // 12040 for 12.4; 0 if unknown

  // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string describe(Result result) const;

  // Whether `p` is device memory (CU_MEMORYTYPE_DEVICE). Host memory the
  // driver does not know, and any error, count as host. On true, *context
  // (if given) is the context that owns it, and *ordinal its device.
  bool isDeviceMemory(const void* p, Context* context = nullptr, int* ordinal = nullptr) const;
  // The device of the calling thread's current context, or -1 without one.
  int currentDevice() const;
  // Whether `device` can export DMA-BUF handles (and the driver can).
  bool dmaBufSupported(int device) const;
  // A DMA-BUF fd over [base, base + bytes), both page-aligned; -1 and *why
  // on failure. The caller owns (and closes) the fd.
  int exportDmaBuf(DevicePtr base, size_t bytes, std::string* why) const;

 private:
  bool load(std::string* why);

  std::string library_;
  void* handle_ = nullptr;
  bool ready_ = false;
  std::string why_;
  int deviceCount_ = 0;
  int version_ = 0;
  pid_t owner_ = 0;  // the process that initialized the driver
};

// Makes `context` current on the calling thread for its scope and puts back
// whatever was current before (a thread of the application keeps its own).
class ScopedContext {
 public:
  ScopedContext(const Driver& driver, Context context);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  bool ok() const { return result_ == kSuccess; }
  Result result() const { return result_; }

 private:
  const Driver& driver_;
  Context previous_ = nullptr;
  bool switched_ = false;
  Result result_ = kSuccess;
};

// A reference on one device's primary context, released when it goes: a
// context the object's memory lives in stays alive as long as the object.
class PrimaryContextRef {
 public:
  PrimaryContextRef() = default;
  ~PrimaryContextRef();
  PrimaryContextRef(const PrimaryContextRef&) = delete;
  PrimaryContextRef& operator=(const PrimaryContextRef&) = delete;

  // False and *why when the device or its context cannot be used.
  bool retain(const Driver& driver, int device, std::string* why);
  Context get() const { return context_; }

 private:
  const Driver* driver_ = nullptr;
  int device_ = -1;
  Context context_ = nullptr;
};

// A device allocation (cuMemAlloc) in the primary context of one device,
// with the copies a test or a scenario needs. Owns the allocation and a
// reference on the primary context.
class DeviceBuffer {
 public:
  static std::unique_ptr<DeviceBuffer> allocate(const Driver& driver, int device, size_t bytes,
                                                std::string* why);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DevicePtr ptr() const { return ptr_; }
  void* data() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr_)); }
  size_t size() const { return size_; }
  int device() const { return device_; }
  Context context() const { return primary_.get(); }

  // Each false with *why on a failed or out-of-range copy. Complete when
  // they return: what upload and fill wrote is in device memory for any
  // reader (another stream, a NIC through an MR), not just for later work
  // on the legacy default stream.
  bool upload(size_t offset, const void* src, size_t bytes, std::string* why);
  bool download(size_t offset, void* dst, size_t bytes, std::string* why) const;
  bool fill(unsigned char value, std::string* why);

 private:
  DeviceBuffer(const Driver& driver, int device) : driver_(driver), device_(device) {}
  bool inRange(size_t offset, size_t bytes, std::string* why) const;
  // Waits for the legacy default stream, where upload and fill queue.
  bool settle(const char* what, std::string* why) const;

  const Driver& driver_;
  int device_;
  PrimaryContextRef primary_;  // released last, after the memory
  DevicePtr ptr_ = 0;
  size_t size_ = 0;
};

// Page-aligned, zeroed host memory, pinned and mapped into the address
// space of every context (portable): the CPU writes it through data(), a
// kernel reads it through devicePtr(). Made with the primary context of
// `device` current, on which it holds a reference.
class MappedHostBuffer {
 public:
  static std::unique_ptr<MappedHostBuffer> allocate(const Driver& driver, int device, size_t bytes,
                                                    std::string* why);
  ~MappedHostBuffer();
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;

  void* data() const { return host_; }
  DevicePtr devicePtr() const { return device_ptr_; }
  size_t size() const { return size_; }

 private:
  explicit MappedHostBuffer(const Driver& driver) : driver_(driver) {}

  const Driver& driver_;
  PrimaryContextRef primary_;  // released last, after the registration
  void* host_ = nullptr;
  size_t size_ = 0;
  bool registered_ = false;
  DevicePtr device_ptr_ = 0;
};

}  // namespace cuda
}  // namespace ncclnet
