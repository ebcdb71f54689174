// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the memory accesses NCCL's
// kernels use on net connections, as PTX. The proxy and the NIC are other
// agents of the system, so counters are read with system-scope acquire
// loads and published with system-scope release stores after
// __threadfence_system(); LL/LL128 lines and received payload are read with
// ld.volatile (never served from a stale L1 line) and LL lines are written
// with single 16-byte volatile stores (each {data, flag} pair is one 8-byte
// word, never torn).
#pragma once

#include <cstdint>

namespace ncclnet::transport::cuda_peer {

__device__ __forceinline__ uint64_t loadAcquireSys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint64_t loadVolatile(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ int32_t loadVolatile(const int32_t* p) {
  int32_t v;
  asm volatile("ld.volatile.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint8_t loadVolatileByte(const void* p) {
  uint16_t v;
  asm volatile("ld.volatile.global.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  return static_cast<uint8_t>(v);
}

// One LL line: both 8-byte words in one access.
__device__ __forceinline__ void loadVolatile16(const void* p, uint64_t* first, uint64_t* second) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(*first), "=l"(*second)
               : "l"(p)
               : "memory");
}

__device__ __forceinline__ void storeVolatile(uint64_t* p, uint64_t v) {
  asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void storeVolatile(int64_t* p, int64_t v) {
  asm volatile("st.volatile.global.s64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void storeVolatile(int32_t* p, int32_t v) {
  asm volatile("st.volatile.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void storeVolatile16(void* p, uint64_t first, uint64_t second) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(first), "l"(second)
               : "memory");
}

__device__ __forceinline__ void storeReleaseSys(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// After a volatile load saw a flag: later loads of this thread are ordered
// after it (an acquire pattern).
__device__ __forceinline__ void fenceAcquireSys() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

// Nanoseconds, the same clock on every SM.
__device__ __forceinline__ uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace ncclnet::transport::cuda_peer
