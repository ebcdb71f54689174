/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: NCCL's result codes, as every plugin ABI version returns them. */
#ifndef NCCLNET_ABI_RESULT_H
#define NCCLNET_ABI_RESULT_H

/* nccl.h defines the same enum under the guard NCCL_H_. When it was included
 * first we reuse its definition instead of redefining the enumerators; the
 * values are the same (checked by the SDK's layout tests). Include nccl.h
 * before this header if a translation unit needs both. */
#ifndef NCCL_H_
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8, /* NCCL >= 2.30; older cores never see it from a plugin */
  ncclNumResults = 9
} ncclResult_t;
#endif

#endif /* NCCLNET_ABI_RESULT_H */
