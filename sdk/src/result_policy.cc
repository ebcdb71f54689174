// SPDX-License-Identifier: Apache-2.0
// The names of the failure kinds (result_policy.hpp has the policy).
#include "ncclnet/result_policy.hpp"

namespace ncclnet {

const char* failureName(Failure failure) {
  switch (failure) {
    case Failure::kUnsupportedMemory: return "kUnsupportedMemory";
    case Failure::kBadDevice: return "kBadDevice";
    case Failure::kPeerGone: return "kPeerGone";
    case Failure::kPeerMisbehaved: return "kPeerMisbehaved";
    case Failure::kTruncated: return "kTruncated";
    case Failure::kExhausted: return "kExhausted";
    case Failure::kBadHandle: return "kBadHandle";
    case Failure::kOutOfMemory: return "kOutOfMemory";
    case Failure::kSystemCall: return "kSystemCall";
    case Failure::kBadArgument: return "kBadArgument";
    case Failure::kInvalidUsage: return "kInvalidUsage";
    case Failure::kInternal: return "kInternal";
  }
  return "unknown failure";
}

}  // namespace ncclnet
