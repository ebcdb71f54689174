// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): how an operation is cut into steps.
#include "ncclnet/transport/steps.hpp"

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

StepPlan planSteps(size_t nbytes, size_t capacity, int sliceSteps) {
  StepPlan plan;
  size_t slices = sliceCount(nbytes, capacity);
  plan.nsteps = static_cast<int>(slices) * sliceSteps;
  plan.sliceBytes.reserve(slices);
  for (size_t i = 0; i < slices; i++) plan.sliceBytes.push_back(sliceBytesAt(nbytes, capacity, i));
  return plan;
}

}  // namespace ncclnet::transport
