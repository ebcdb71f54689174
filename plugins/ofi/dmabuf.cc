// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: DMA-BUF registration (see dmabuf.hpp).
#include "dmabuf.hpp"

#include <cstdio>

namespace ncclnet::ofi {
namespace {

std::string versionText(uint32_t version) {
  char text[32];
  std::snprintf(text, sizeof(text), "%u.%u", FI_MAJOR(version), FI_MINOR(version));
  return text;
}

}  // namespace

std::string dmaBufUnavailable(const fi_info* info, bool hmem, uint32_t running) {
  const std::string needed = versionText(kDmaBufMinVersion);
  if (!kBuiltWithDmaBuf) {
    return "sdk-ofi was built with libfabric " +
           versionText(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)) +
           " headers, which lack FI_MR_DMABUF (added in " + needed + ")";
  }
  if (running < kDmaBufMinVersion) {
    return "the libfabric loaded is " + versionText(running) + "; FI_MR_DMABUF needs >= " + needed;
  }
  if (!hmem) return "the provider offers no usable FI_HMEM (GPU memory)";
  if (!(info->domain_attr->mr_mode & FI_MR_HMEM)) {
    return "the provider does not register device memory (no FI_MR_HMEM in its mr_mode)";
  }
  return "";
}

int registerDmaBuf(fid_domain* domain, fi_mr_attr attr, const DmaBufRegion& region, fid_mr** mr) {
#if NCCLNET_OFI_BUILT_WITH_DMABUF
  fi_mr_dmabuf dmabuf{};
  dmabuf.fd = region.fd;
  dmabuf.offset = region.offset;
  dmabuf.len = region.length;
  // The address of the dma-buf's first byte: libfabric gives the region the
  // address base_addr + offset, which is where NCCL's buffers lie, so
  // descriptors and FI_MR_VIRT_ADDR reads work as for any registration.
  dmabuf.base_addr = static_cast<char*>(region.address) - region.offset;
  attr.dmabuf = &dmabuf;
  attr.iov_count = 1;
  return fi_mr_regattr(domain, &attr, FI_MR_DMABUF, mr);
#else
  (void)domain;
  (void)attr;
  (void)region;
  *mr = nullptr;
  return -FI_EOPNOTSUPP;
#endif
}

}  // namespace ncclnet::ofi
