// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: owners for libfabric objects, and libfabric errors turned into
// NCCL results.
#pragma once

#include <cerrno>
#include <memory>
#include <string>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "ncclnet/abi/common.h"
#include "ncclnet/result_policy.hpp"

namespace ncclnet::ofi {

// Every fid_* starts with a `struct fid`; fi_close on it releases the object.
// Close errors are ignored: there is nobody left to tell, and libfabric
// releases the memory regardless.
struct FidCloser {
  template <class T>
  void operator()(T* object) const {
    if (object != nullptr) fi_close(&object->fid);
  }
};
template <class T>
using FidPtr = std::unique_ptr<T, FidCloser>;

using FabricPtr = FidPtr<fid_fabric>;
using DomainPtr = FidPtr<fid_domain>;
using CqPtr = FidPtr<fid_cq>;
using AvPtr = FidPtr<fid_av>;
using EpPtr = FidPtr<fid_ep>;
using MrPtr = FidPtr<fid_mr>;

struct InfoFreer {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoFreer>;

// A copy of one element of an fi_getinfo list (fi_dupinfo copies only the
// element, never its `next`).
inline InfoPtr dupInfo(const fi_info* info) {
  fi_info* copy = fi_dupinfo(info);
  if (copy != nullptr) {
    fi_freeinfo(copy->next);
    copy->next = nullptr;
  }
  return InfoPtr(copy);
}

// The libfabric API version the plugin asks for: the newest that both the
// headers it was built with and the library it runs on understand (asking a
// library for a newer API than its own fails with -FI_ENOSYS).
inline uint32_t apiVersion() {
  uint32_t built = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
  uint32_t running = fi_version();
  return running < built ? running : built;
}

// How a provider error maps onto NCCL's vocabulary: errors that mean "the
// other side went away or refused us" are remote, a message longer than the
// posted buffer is the caller's usage error, everything else is local.
inline ncclResult_t resultFor(int fiErr) {
  if (fiErr < 0) fiErr = -fiErr;
  switch (fiErr) {
    case FI_ETRUNC: return resultOf(Failure::kTruncated);
    case FI_ECONNRESET:
    case FI_ECONNREFUSED:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case FI_ETIMEDOUT:
    case FI_EADDRNOTAVAIL:
    case FI_EREMOTEIO:
    case EPIPE:  // libfabric has no FI_EPIPE; providers pass the errno through
    case FI_ESHUTDOWN: return resultOf(Failure::kPeerGone);
    default: return resultOf(Failure::kSystemCall);
  }
}

// fi_strerror of a positive or negative code, as a string.
inline std::string fiError(int fiErr) {
  return fi_strerror(fiErr < 0 ? -fiErr : fiErr);
}

}  // namespace ncclnet::ofi
