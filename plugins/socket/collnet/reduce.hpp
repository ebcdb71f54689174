// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: the element types and reduction operations the
// software CollNet carries out, and the one routine that reduces.
//
// Every rank must end with the same bits, so a reduction is a left fold in
// rank order (((x0 op x1) op x2) ...), computed by the same code on every
// rank. float16 and bfloat16 are widened to float for each step and rounded
// back to nearest-even after it, the way a GPU ring reduces them one
// addition at a time; the widening is exact and the rounding depends only
// on the two operands, so every rank agrees. Integers wrap (two's
// complement), and max/min of floating-point values return NaN when either
// operand is NaN.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclnet/abi/collective_types.h"

namespace ncclnet::socket::collnet {

// Bytes per element of `type`; 0 for a type this CollNet does not carry
// (the fp8 types, values outside NCCL's enum).
size_t elementSize(ncclDataType_t type);

// True when (type, op) is reduced exactly here: the ten integer and
// floating-point types of ncclDataType_t up to bfloat16, with sum, prod,
// max and min. False for fp8, ncclAvg (it needs the group size and a
// division NCCL's device code rounds its own way), and any other value.
bool reduceSupported(ncclDataType_t type, ncclRedOp_t op);

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[n-1][i], folded left,
// for i < count. `dst` may be one of the sources (each element is read from
// every source before it is written). Only for reduceSupported pairs.
void reduce(ncclDataType_t type, ncclRedOp_t op, const void* const* srcs, int nsrcs, void* dst,
            size_t count);

// IEEE binary16 and bfloat16 to float (exact) and back (round to nearest,
// ties to even; NaN stays NaN, overflow goes to infinity).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBfloat16(float f);

}  // namespace ncclnet::socket::collnet
