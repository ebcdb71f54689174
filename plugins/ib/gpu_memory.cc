// SPDX-License-Identifier: Apache-2.0
// sdk-ib: ptrSupport and the registration of GPU memory.
#include "gpu_memory.hpp"

#include <unistd.h>

#include <cerrno>

#include "ncclnet/abi/net.h"
#include "ncclnet/cuda_driver.hpp"
#include "ncclnet/cuda_driver_slot.hpp"

namespace ncclnet::ib {
namespace {

// The plugin's own driver object, released when NCCL unloads the plugin
// (ncclnet/cuda_driver_slot.hpp); opened only when a CUDA buffer must be
// exported.
cuda::DriverSlot gDriver;

}  // namespace

bool peerMemoryLoaded(const std::string& sysRoot) {
  for (const char* path :
       {"/sys/kernel/mm/memory_peers/nv_mem/version",
        "/sys/kernel/mm/memory_peers/nv_mem_nc/version", "/sys/module/nvidia_peermem/version"}) {
    if (access((sysRoot + path).c_str(), F_OK) == 0) return true;
  }
  return false;
}

bool probeDmaBuf(const IbvApi& api, ibv_pd* pd) {
  if (api.regDmabufMr == nullptr) return false;
  errno = 0;
  ibv_mr* mr = api.regDmabufMr(pd, 0, 0, 0, -1, 0);
  if (mr != nullptr) {  // nothing registers fd -1; a library that does supports the call
    api.deregMr(mr);
    return true;
  }
  return errno != EOPNOTSUPP && errno != EPROTONOSUPPORT;
}

int ptrSupportFor(bool peerMemory, bool dmaBuf) {
  int ptr = NCCL_PTR_HOST;
  if (peerMemory || dmaBuf) ptr |= NCCL_PTR_CUDA;
  if (dmaBuf) ptr |= NCCL_PTR_DMABUF;
  return ptr;
}

ibv_mr* registerMemory(Hca& hca, void* data, size_t size, int type, const DmaBufRange* dmabuf,
                       std::string* why) {
  if (dmabuf != nullptr) return hca.mrs->acquire(data, size, dmabuf, why);
  ibv_mr* mr = hca.mrs->acquire(data, size, nullptr, why);
  if (mr != nullptr || type != NCCL_PTR_CUDA) return mr;
  if (!hca.dmaBuf) {
    *why += " (GPU memory through ibv_reg_mr needs the nvidia_peermem module)";
    return nullptr;
  }
  // No peer-memory client: hand the HCA the buffer's pages as a dma-buf.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto addr = reinterpret_cast<uintptr_t>(data);
  uintptr_t begin = addr & ~(page - 1);
  uintptr_t end = (addr + (size > 0 ? size : 1) + page - 1) & ~(page - 1);
  std::string exportWhy = "not available: the plugin is unloading";
  std::shared_ptr<const ncclnet::cuda::Driver> driver = gDriver.get();
  int fd = driver != nullptr ? driver->exportDmaBuf(begin, end - begin, &exportWhy) : -1;
  if (fd < 0) {
    *why += "; exporting it as a dma-buf failed too: " + exportWhy;
    return nullptr;
  }
  DmaBufRange range{addr - begin, fd};
  mr = hca.mrs->acquire(data, size, &range, why);
  close(fd);
  return mr;
}

}  // namespace ncclnet::ib
