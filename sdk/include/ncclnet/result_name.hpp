// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: ncclResult_t by name, for log lines and reports that a
// person reads ("init failed with ncclSystemError (2)", not "error 2").
//
//   NCCLNET_WARN(log, "init failed with %s", ncclnet::resultText(res).c_str());
#pragma once

#include <string>

#include "ncclnet/abi/result.h"

namespace ncclnet {

// The enumerator's name as NCCL's nccl.h spells it; "unknown ncclResult_t"
// for a value NCCL does not define (a plugin may return anything).
constexpr const char* resultName(ncclResult_t res) noexcept {
  switch (static_cast<int>(res)) {
    case 0: return "ncclSuccess";
    case 1: return "ncclUnhandledCudaError";
    case 2: return "ncclSystemError";
    case 3: return "ncclInternalError";
    case 4: return "ncclInvalidArgument";
    case 5: return "ncclInvalidUsage";
    case 6: return "ncclRemoteError";
    case 7: return "ncclInProgress";
    case 8: return "ncclTimeout";
    default: return "unknown ncclResult_t";
  }
}

// "ncclSystemError (2)": the name and the number, so that a report can be
// matched against NCCL's own log, which prints the number.
inline std::string resultText(ncclResult_t res) {
  return std::string(resultName(res)) + " (" + std::to_string(static_cast<int>(res)) + ")";
}

}  // namespace ncclnet
