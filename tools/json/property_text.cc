// SPDX-License-Identifier: Apache-2.0
#include "property_text.hpp"

#include "ncclnet/abi/net.h"

namespace ncclnet::json {

std::string ptrSupportText(int mask) {
  std::string text;
  auto add = [&](int bit, const char* name) {
    if (mask & bit) text += (text.empty() ? "" : "|") + std::string(name);
  };
  add(NCCL_PTR_HOST, "HOST");
  add(NCCL_PTR_CUDA, "CUDA");
  add(NCCL_PTR_DMABUF, "DMABUF");
  if (mask & ~(NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF)) {
    text += (text.empty() ? "" : "|") + std::string("unknown bits");
  }
  return text.empty() ? "none" : text;
}

const char* deviceTypeName(int type) {
  switch (type) {
    case NCCL_NET_DEVICE_HOST: return "HOST";
    case NCCL_NET_DEVICE_UNPACK: return "UNPACK";
    case NCCL_NET_DEVICE_GIN_PROXY: return "GIN_PROXY";
    case NCCL_NET_DEVICE_GIN_GDAKI: return "GIN_GDAKI";
    default: return "unknown";
  }
}

}  // namespace ncclnet::json
