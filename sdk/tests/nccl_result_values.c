/* SPDX-License-Identifier: Apache-2.0
 * ncclResult_t as the SDK's own header defines it, in a translation unit
 * that never sees nccl.h. */
#include "ncclnet/abi/result.h"

const int ncclnetSdkResultValues[] = {
    ncclSuccess,        ncclUnhandledCudaError, ncclSystemError, ncclInternalError,
    ncclInvalidArgument, ncclInvalidUsage,      ncclRemoteError, ncclInProgress,
};
const int ncclnetSdkResultCount = sizeof(ncclnetSdkResultValues) / sizeof(int);
