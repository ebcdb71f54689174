// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: typed reductions (reduce.hpp says what they promise).
#include "reduce.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace ncclnet::socket::collnet {

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// The element is read and written with memcpy: NCCL's buffers are aligned,
// but nothing in the ABI promises it, and an unaligned typed load is
// undefined behaviour.
template <class T>
T load(const void* base, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
void store(void* base, size_t i, T v) {
  std::memcpy(static_cast<uint8_t*>(base) + i * sizeof(T), &v, sizeof(T));
}

template <class T, class Combine>
void fold(const void* const* srcs, int nsrcs, void* dst, size_t count, Combine combine) {
  for (size_t i = 0; i < count; i++) {
    T acc = load<T>(srcs[0], i);
    for (int s = 1; s < nsrcs; s++) acc = combine(acc, load<T>(srcs[s], i));
    store<T>(dst, i, acc);
  }
}

// Integers: wrap-around arithmetic done in the unsigned type (signed
// overflow is undefined in C++), no 16-bit type, so no promotion to a
// signed int can overflow (uint8 * uint8 fits an int).
template <class T>
void foldInteger(ncclRedOp_t op, const void* const* srcs, int n, void* dst, size_t count) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case ncclSum:
      fold<T>(srcs, n, dst, count, [](T a, T b) { return static_cast<T>(U(U(a) + U(b))); });
      break;
    case ncclProd:
      fold<T>(srcs, n, dst, count, [](T a, T b) { return static_cast<T>(U(U(a) * U(b))); });
      break;
    case ncclMax: fold<T>(srcs, n, dst, count, [](T a, T b) { return b > a ? b : a; }); break;
    case ncclMin: fold<T>(srcs, n, dst, count, [](T a, T b) { return b < a ? b : a; }); break;
    default: break;
  }
}

template <class F>
F maxOf(F a, F b) {
  if (a != a) return a;
  if (b != b) return b;
  return b > a ? b : a;
}
template <class F>
F minOf(F a, F b) {
  if (a != a) return a;
  if (b != b) return b;
  return b < a ? b : a;
}

template <class F>
F combineFloat(ncclRedOp_t op, F a, F b) {
  switch (op) {
    case ncclSum: return a + b;
    case ncclProd: return a * b;
    case ncclMax: return maxOf(a, b);
    default: return minOf(a, b);
  }
}

template <class F>
void foldFloat(ncclRedOp_t op, const void* const* srcs, int n, void* dst, size_t count) {
  fold<F>(srcs, n, dst, count, [op](F a, F b) { return combineFloat(op, a, b); });
}

// A 16-bit float: each step widens both operands, combines them in float
// (exact for max/min, one rounding for sum/prod) and rounds back.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void foldHalf(ncclRedOp_t op, const void* const* srcs, int n, void* dst, size_t count) {
  fold<uint16_t>(srcs, n, dst, count, [op](uint16_t a, uint16_t b) {
    return Narrow(combineFloat(op, Widen(a), Widen(b)));
  });
}

}  // namespace

size_t elementSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;  // fp8 and anything NCCL may add later
  }
}

bool reduceSupported(ncclDataType_t type, ncclRedOp_t op) {
  bool opOk = op == ncclSum || op == ncclProd || op == ncclMax || op == ncclMin;
  return opOk && elementSize(type) != 0;
}

void reduce(ncclDataType_t type, ncclRedOp_t op, const void* const* srcs, int nsrcs, void* dst,
            size_t count) {
  switch (type) {
    case ncclInt8: foldInteger<int8_t>(op, srcs, nsrcs, dst, count); break;
    case ncclUint8: foldInteger<uint8_t>(op, srcs, nsrcs, dst, count); break;
    case ncclInt32: foldInteger<int32_t>(op, srcs, nsrcs, dst, count); break;
    case ncclUint32: foldInteger<uint32_t>(op, srcs, nsrcs, dst, count); break;
    case ncclInt64: foldInteger<int64_t>(op, srcs, nsrcs, dst, count); break;
    case ncclUint64: foldInteger<uint64_t>(op, srcs, nsrcs, dst, count); break;
    case ncclFloat32: foldFloat<float>(op, srcs, nsrcs, dst, count); break;
    case ncclFloat64: foldFloat<double>(op, srcs, nsrcs, dst, count); break;
    case ncclFloat16: foldHalf<halfToFloat, floatToHalf>(op, srcs, nsrcs, dst, count); break;
    case ncclBfloat16:
      foldHalf<bfloat16ToFloat, floatToBfloat16>(op, srcs, nsrcs, dst, count);
      break;
    default: break;
  }
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return floatOf(sign | 0x7f800000u | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToHalf(float f) {
  const uint32_t x = bitsOf(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    return sign | (magnitude > 0x7f800000u ? 0x7e00 : 0x7c00);  // NaN (quiet) or infinity
  }
  if (magnitude >= 0x47800000u) return sign | 0x7c00;  // >= 2^16: beyond every rounding
  if (magnitude < 0x38800000u) {
    // Below 2^-14, half's subnormal range: its unit is 2^-24. The scaling is
    // exact, and nearbyint rounds to nearest even in the default mode; 1024
    // lands on the smallest normal, which is the right encoding too.
    float scaled = floatOf(magnitude) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t h = ((magnitude >> 23) - 112) << 10 | ((magnitude & 0x7fffff) >> 13);
  const uint32_t rest = magnitude & 0x1fff;
  // A carry out of the mantissa bumps the exponent, up to infinity.
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
  return sign | static_cast<uint16_t>(h);
}

float bfloat16ToFloat(uint16_t b) {
  return floatOf(static_cast<uint32_t>(b) << 16);
}

uint16_t floatToBfloat16(float f) {
  const uint32_t x = bitsOf(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  const uint32_t bias = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + bias) >> 16);
}

}  // namespace ncclnet::socket::collnet
