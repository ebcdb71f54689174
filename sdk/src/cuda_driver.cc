// SPDX-License-Identifier: Apache-2.0
// The CUDA driver opened at run time, and the RAII helpers over it.
#include "ncclnet/cuda_driver.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

namespace ncclnet {
namespace cuda {
namespace {

template <class Fn>
void bind(void* handle, Fn* slot, const char* name, std::string* missing) {
  *slot = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*slot == nullptr && missing != nullptr)
    *missing += std::string(missing->empty() ? "" : ", ") + name;
}

}  // namespace

const Driver& Driver::get() {
  // Never destroyed: the process's exit handlers (the application's, the
  // CUDA runtime's) may still call the driver after ours would have run.
  static const Driver* driver = new Driver("libcuda.so.1");
  return *driver;
}

Driver::Driver(const std::string& library) : library_(library) {
  std::string why;
  ready_ = load(&why);
  if (!ready_) why_ = "not available: " + why;
  owner_ = getpid();
}

Driver::~Driver() {
  // RTLD_NODELETE keeps the driver mapped: only the reference goes.
  if (handle_ != nullptr) dlclose(handle_);
}

bool Driver::load(std::string* why) {
  // RTLD_NODELETE: once initialized, the driver must stay mapped for as
  // long as the process runs, whoever else closes it.
  handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle_ == nullptr) {
    const char* err = dlerror();
    *why = "cannot load " + library_ +
           " (no NVIDIA driver on this host?): " + (err != nullptr ? err : "unknown error");
    return false;
  }
  std::string missing;
  // Exact ABI names: the _v2 entry points take 64-bit sizes and pointers,
  // and none of these signatures has changed since.
  bind(handle_, &init, "cuInit", &missing);
  bind(handle_, &driverGetVersion, "cuDriverGetVersion", &missing);
  bind(handle_, &getErrorName, "cuGetErrorName", &missing);
  bind(handle_, &getErrorString, "cuGetErrorString", &missing);
  bind(handle_, &deviceGet, "cuDeviceGet", &missing);
  bind(handle_, &deviceGetCount, "cuDeviceGetCount", &missing);
  bind(handle_, &deviceGetAttribute, "cuDeviceGetAttribute", &missing);
  bind(handle_, &primaryCtxRetain, "cuDevicePrimaryCtxRetain", &missing);
  bind(handle_, &primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", &missing);
  bind(handle_, &primaryCtxGetState, "cuDevicePrimaryCtxGetState", &missing);
  bind(handle_, &ctxSetCurrent, "cuCtxSetCurrent", &missing);
  bind(handle_, &ctxGetCurrent, "cuCtxGetCurrent", &missing);
  bind(handle_, &ctxGetDevice, "cuCtxGetDevice", &missing);
  bind(handle_, &memAlloc, "cuMemAlloc_v2", &missing);
  bind(handle_, &memFree, "cuMemFree_v2", &missing);
  bind(handle_, &memcpyHtoD, "cuMemcpyHtoD_v2", &missing);
  bind(handle_, &memcpyDtoH, "cuMemcpyDtoH_v2", &missing);
  bind(handle_, &memcpyDtoD, "cuMemcpyDtoD_v2", &missing);
  bind(handle_, &memsetD8, "cuMemsetD8_v2", &missing);
  bind(handle_, &memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", &missing);
  bind(handle_, &memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", &missing);
  bind(handle_, &streamCreate, "cuStreamCreate", &missing);
  bind(handle_, &streamDestroy, "cuStreamDestroy_v2", &missing);
  bind(handle_, &streamSynchronize, "cuStreamSynchronize", &missing);
  bind(handle_, &streamQuery, "cuStreamQuery", &missing);
  bind(handle_, &memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", &missing);
  bind(handle_, &moduleLoadData, "cuModuleLoadData", &missing);
  bind(handle_, &moduleUnload, "cuModuleUnload", &missing);
  bind(handle_, &moduleGetFunction, "cuModuleGetFunction", &missing);
  bind(handle_, &launchKernel, "cuLaunchKernel", &missing);
  bind(handle_, &pointerGetAttribute, "cuPointerGetAttribute", &missing);
  bind(handle_, &memHostRegister, "cuMemHostRegister_v2", &missing);
  bind(handle_, &memHostUnregister, "cuMemHostUnregister", &missing);
  bind(handle_, &memHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", &missing);
  bind(handle_, &memGetHandleForAddressRange, "cuMemGetHandleForAddressRange", nullptr);
  if (!missing.empty()) {
    *why = library_ + " lacks " + missing;
    return false;
  }
  Result r = init(0);
  if (r != kSuccess) {
    *why = "cuInit failed: " + describe(r);
    return false;
  }
  if (driverGetVersion(&version_) != kSuccess) version_ = 0;
  r = deviceGetCount(&deviceCount_);
  if (r != kSuccess || deviceCount_ <= 0) {
    *why = r != kSuccess ? "cuDeviceGetCount failed: " + describe(r) : "no CUDA device";
    deviceCount_ = 0;
    return false;
  }
  return true;
}

bool Driver::available() const {
  return ready_ && getpid() == owner_;
}

std::string Driver::whyNot() const {
  if (!ready_) return why_;
  if (getpid() != owner_) {
    return "not available: the CUDA driver was initialized by process " + std::to_string(owner_) +
           " before it forked this one, and CUDA does not survive fork()";
  }
  return "";
}

std::string Driver::describe(Result result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (getErrorName != nullptr && getErrorName(result, &name) != kSuccess) name = nullptr;
  if (getErrorString != nullptr && getErrorString(result, &text) != kSuccess) text = nullptr;
  std::string out = name != nullptr ? name : "CUDA error " + std::to_string(result);
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

int Driver::currentDevice() const {
  if (!available()) return -1;
  Context current = nullptr;
  Device device = 0;
  if (ctxGetCurrent(&current) != kSuccess || current == nullptr) return -1;
  return ctxGetDevice(&device) == kSuccess ? device : -1;
}

bool Driver::isDeviceMemory(const void* p, Context* context, int* ordinal) const {
  if (!available() || p == nullptr) return false;
  auto ptr = static_cast<DevicePtr>(reinterpret_cast<uintptr_t>(p));
  unsigned type = 0;
  if (pointerGetAttribute(&type, kPointerAttributeMemoryType, ptr) != kSuccess ||
      type != kMemoryTypeDevice) {
    return false;
  }
  if (context != nullptr && pointerGetAttribute(context, kPointerAttributeContext, ptr) != kSuccess)
    *context = nullptr;
  if (ordinal != nullptr &&
      pointerGetAttribute(ordinal, kPointerAttributeDeviceOrdinal, ptr) != kSuccess)
    *ordinal = -1;
  return true;
}

bool Driver::dmaBufSupported(int device) const {
  if (!available() || memGetHandleForAddressRange == nullptr) return false;
  Device dev = 0;
  int flag = 0;
  return deviceGet(&dev, device) == kSuccess &&
         deviceGetAttribute(&flag, kDeviceAttributeDmaBufSupported, dev) == kSuccess && flag != 0;
}

int Driver::exportDmaBuf(DevicePtr base, size_t bytes, std::string* why) const {
  if (!available()) {
    *why = whyNot();
    return -1;
  }
  if (memGetHandleForAddressRange == nullptr) {
    *why = "the CUDA driver predates DMA-BUF export (cuMemGetHandleForAddressRange, 11.7)";
    return -1;
  }
  Context owner = nullptr;
  if (!isDeviceMemory(reinterpret_cast<void*>(static_cast<uintptr_t>(base)), &owner)) {
    *why = "the range to export is not CUDA device memory";
    return -1;
  }
  ScopedContext scope(*this, owner);
  if (!scope.ok()) {
    *why = "cuCtxSetCurrent failed: " + describe(scope.result());
    return -1;
  }
  int fd = -1;
  Result r = memGetHandleForAddressRange(&fd, base, bytes, kMemRangeHandleTypeDmaBufFd, 0);
  if (r != kSuccess) {
    *why = "cuMemGetHandleForAddressRange failed: " + describe(r);
    return -1;
  }
  return fd;
}

ScopedContext::ScopedContext(const Driver& driver, Context context) : driver_(driver) {
  if (context == nullptr) return;  // nothing to switch to: leave the caller's
  result_ = driver_.ctxGetCurrent(&previous_);
  if (result_ != kSuccess || previous_ == context) return;
  result_ = driver_.ctxSetCurrent(context);
  switched_ = result_ == kSuccess;
}

ScopedContext::~ScopedContext() {
  if (switched_) driver_.ctxSetCurrent(previous_);
}

bool PrimaryContextRef::retain(const Driver& driver, int device, std::string* why) {
  Device dev = 0;
  Result r = driver.deviceGet(&dev, device);
  if (r == kSuccess) r = driver.primaryCtxRetain(&context_, dev);
  if (r != kSuccess) {
    context_ = nullptr;
    *why = "cannot use CUDA device " + std::to_string(device) + ": " + driver.describe(r);
    return false;
  }
  driver_ = &driver;
  device_ = device;
  return true;
}

PrimaryContextRef::~PrimaryContextRef() {
  Device dev = 0;
  if (context_ != nullptr && driver_->deviceGet(&dev, device_) == kSuccess)
    driver_->primaryCtxRelease(dev);
}

std::unique_ptr<DeviceBuffer> DeviceBuffer::allocate(const Driver& driver, int device, size_t bytes,
                                                     std::string* why) {
  if (!driver.available()) {
    *why = driver.whyNot();
    return nullptr;
  }
  std::unique_ptr<DeviceBuffer> buf(new DeviceBuffer(driver, device));
  if (!buf->primary_.retain(driver, device, why)) return nullptr;
  ScopedContext scope(driver, buf->primary_.get());
  Result r = scope.ok() ? driver.memAlloc(&buf->ptr_, bytes > 0 ? bytes : 1) : scope.result();
  if (r != kSuccess) {
    buf->ptr_ = 0;
    *why = "cuMemAlloc(" + std::to_string(bytes) + " B) on device " + std::to_string(device) +
           " failed: " + driver.describe(r);
    return nullptr;
  }
  buf->size_ = bytes;
  return buf;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) {
    ScopedContext scope(driver_, primary_.get());
    driver_.memFree(ptr_);
  }
}

bool DeviceBuffer::inRange(size_t offset, size_t bytes, std::string* why) const {
  if (offset <= size_ && bytes <= size_ - offset) return true;
  *why = "[" + std::to_string(offset) + ", +" + std::to_string(bytes) + ") is outside the " +
         std::to_string(size_) + " B device buffer";
  return false;
}

bool DeviceBuffer::upload(size_t offset, const void* src, size_t bytes, std::string* why) {
  if (!inRange(offset, bytes, why)) return false;
  if (bytes == 0) return true;
  ScopedContext scope(driver_, primary_.get());
  Result r = scope.ok() ? driver_.memcpyHtoD(ptr_ + offset, src, bytes) : scope.result();
  if (r != kSuccess) {
    *why = "cuMemcpyHtoD(" + std::to_string(bytes) + " B) failed: " + driver_.describe(r);
    return false;
  }
  return settle("cuMemcpyHtoD", why);
}

bool DeviceBuffer::download(size_t offset, void* dst, size_t bytes, std::string* why) const {
  if (!inRange(offset, bytes, why)) return false;
  if (bytes == 0) return true;
  ScopedContext scope(driver_, primary_.get());
  Result r = scope.ok() ? driver_.memcpyDtoH(dst, ptr_ + offset, bytes) : scope.result();
  if (r == kSuccess) return true;
  *why = "cuMemcpyDtoH(" + std::to_string(bytes) + " B) failed: " + driver_.describe(r);
  return false;
}

bool DeviceBuffer::fill(unsigned char value, std::string* why) {
  if (size_ == 0) return true;
  ScopedContext scope(driver_, primary_.get());
  Result r = scope.ok() ? driver_.memsetD8(ptr_, value, size_) : scope.result();
  if (r != kSuccess) {
    *why = "cuMemsetD8 failed: " + driver_.describe(r);
    return false;
  }
  return settle("cuMemsetD8", why);
}

bool DeviceBuffer::settle(const char* what, std::string* why) const {
  // cuMemcpyHtoD from pageable memory returns once the bytes are staged,
  // cuMemsetD8 once it is queued: both may still be landing, on the legacy
  // default stream, which a non-blocking stream (or a NIC) does not wait
  // for. Waiting for that stream makes the bytes there for every reader.
  Result r = driver_.streamSynchronize(nullptr);
  if (r == kSuccess) return true;
  *why =
      std::string(what) + " did not complete: cuStreamSynchronize failed: " + driver_.describe(r);
  return false;
}

std::unique_ptr<MappedHostBuffer> MappedHostBuffer::allocate(const Driver& driver, int device,
                                                             size_t bytes, std::string* why) {
  if (!driver.available()) {
    *why = driver.whyNot();
    return nullptr;
  }
  std::unique_ptr<MappedHostBuffer> buf(new MappedHostBuffer(driver));
  if (!buf->primary_.retain(driver, device, why)) return nullptr;
  // Anonymous pages: page-aligned and zeroed, as registration wants them.
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t span = (std::max<size_t>(bytes, 1) + page - 1) / page * page;
  void* host = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) {
    *why = "cannot map " + std::to_string(span) + " B of host memory";
    return nullptr;
  }
  buf->host_ = host;
  buf->size_ = span;
  ScopedContext scope(driver, buf->primary_.get());
  Result r = scope.ok() ? driver.memHostRegister(host, span,
                                                 kHostRegisterPortable | kHostRegisterDeviceMap)
                        : scope.result();
  if (r != kSuccess) {
    *why = "cuMemHostRegister(" + std::to_string(span) + " B) failed: " + driver.describe(r);
    return nullptr;
  }
  buf->registered_ = true;
  r = driver.memHostGetDevicePointer(&buf->device_ptr_, host, 0);
  if (r != kSuccess) {
    *why = "cuMemHostGetDevicePointer failed: " + driver.describe(r);
    return nullptr;
  }
  return buf;
}

MappedHostBuffer::~MappedHostBuffer() {
  if (registered_) {
    ScopedContext scope(driver_, primary_.get());
    driver_.memHostUnregister(host_);
  }
  if (host_ != nullptr) munmap(host_, size_);
}

}  // namespace cuda
}  // namespace ncclnet
