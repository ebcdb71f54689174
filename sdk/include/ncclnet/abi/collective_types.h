/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: NCCL's reduction operations and data types, as the CollNet
 * tables carry them (reduceSupport, iallreduce, ireducescatter). */
#ifndef NCCLNET_ABI_COLLECTIVE_TYPES_H
#define NCCLNET_ABI_COLLECTIVE_TYPES_H

/* nccl.h defines both enums under the guard NCCL_H_ (as for ncclResult_t in
 * result.h): when it came first its definitions are used. Both are int-sized
 * in every NCCL release (nccl.h keeps ncclMaxRedOp within an int for ABI
 * compatibility). */
#ifndef NCCL_H_
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5,
  ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10, /* NCCL >= 2.24 */
  ncclFloat8e5m2 = 11, /* NCCL >= 2.24 */
  ncclNumTypes = 12
} ncclDataType_t;
#endif

#endif /* NCCLNET_ABI_COLLECTIVE_TYPES_H */
