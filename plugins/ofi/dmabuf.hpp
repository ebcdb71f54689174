// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: DMA-BUF registration (NCCL_PTR_DMABUF, regMrDmaBuf).
//
// libfabric registers a dma-buf fd with fi_mr_regattr, flag FI_MR_DMABUF and
// a struct fi_mr_dmabuf in the attributes. Both appeared in libfabric 1.20,
// so DMA-BUF takes two checks:
//   - at build time: the headers define FI_MR_DMABUF and say >= 1.20; an
//     older build compiles the registration out;
//   - at run time: the library loaded is >= 1.20 (a 1.20 build may run on
//     an older libfabric, which would misread the flag), and the NIC was
//     granted FI_HMEM with FI_MR_HMEM in its mr_mode (device memory goes
//     through registration, which is what a dma-buf fd is for).
// A NIC that fails either never advertises NCCL_PTR_DMABUF, and
// regMrDmaBuf on it fails with one log line that says which check failed.
#pragma once

#include <cstdint>
#include <string>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#if defined(FI_MR_DMABUF) && FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) >= FI_VERSION(1, 20)
#define NCCLNET_OFI_BUILT_WITH_DMABUF 1
#else
#define NCCLNET_OFI_BUILT_WITH_DMABUF 0
#endif

namespace ncclnet::ofi {

constexpr uint32_t kDmaBufMinVersion = FI_VERSION(1, 20);
constexpr bool kBuiltWithDmaBuf = NCCLNET_OFI_BUILT_WITH_DMABUF != 0;

// Why a NIC cannot register dma-bufs, or "" when it can. `info` is the NIC's
// fi_info, `hmem` whether it passed the GPU memory checks (discovery.hpp),
// `running` what fi_version() answers.
std::string dmaBufUnavailable(const fi_info* info, bool hmem, uint32_t running);

// A dma-buf range to register: `length` bytes of `fd` from byte `offset`,
// seen by the process at virtual address `address`.
struct DmaBufRegion {
  int fd = -1;
  uint64_t offset = 0;
  void* address = nullptr;
  size_t length = 0;
};

// fi_mr_regattr of `region` with the access, key and interface already in
// `attr` (whose iov fields it replaces). 0 or a negative fi_errno;
// -FI_EOPNOTSUPP in a build without FI_MR_DMABUF.
int registerDmaBuf(fid_domain* domain, fi_mr_attr attr, const DmaBufRegion& region, fid_mr** mr);

}  // namespace ncclnet::ofi
