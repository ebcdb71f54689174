// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): how an operation is cut into steps.
#include "ncclnet/transport/steps.hpp"

#include <algorithm>

namespace ncclnet::transport {

size_t sliceCapacity(Protocol p, size_t stepSize, int sliceSteps) {
  size_t bytes = stepSize * static_cast<size_t>(sliceSteps);
  switch (p) {
    case Protocol::LL: return bytes / kLLLineBytes * kLLDataBytesPerLine;
    case Protocol::LL128: return bytes / kLL128LineBytes * kLL128DataBytesPerLine;
    case Protocol::Simple: return bytes;
  }
  return 0;
}

size_t encodedBytes(Protocol p, size_t payload) {
  switch (p) {
    case Protocol::LL: return divUp(payload, kLLDataBytesPerLine) * kLLLineBytes;
    case Protocol::LL128: return divUp(payload, kLL128DataBytesPerLine) * kLL128LineBytes;
    case Protocol::Simple: return payload;
  }
  return 0;
}

StepPlan planSteps(size_t nbytes, size_t capacity, int sliceSteps) {
  StepPlan plan;
  size_t slices = std::max<size_t>(1, divUp(nbytes, capacity));
  plan.nsteps = static_cast<int>(slices) * sliceSteps;
  plan.sliceBytes.reserve(slices);
  size_t left = nbytes;
  for (size_t i = 0; i < slices; i++) {
    size_t n = std::min(left, capacity);
    plan.sliceBytes.push_back(n);
    left -= n;
  }
  return plan;
}

}  // namespace ncclnet::transport
