/* SPDX-License-Identifier: Apache-2.0
 * nccl-net-sdk: the net device handle (v7+) and the UNPACK metadata layout
 * that NCCL's receive kernel reads for NCCL_NET_DEVICE_UNPACK plugins. */
#ifndef NCCLNET_ABI_NET_DEVICE_H
#define NCCLNET_ABI_NET_DEVICE_H

#include <stddef.h>
#include <stdint.h>

/* NCCL's own net_device.h (shipped with the CUDA toolkit's NCCL) uses the
 * guard NCCL_NET_DEVICE_H_; define the shared part only once. */
#ifndef NCCL_NET_DEVICE_H_
#define NCCL_NET_DEVICE_H_

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
#define NCCL_NET_MTU_SIZE 4096
/* A given NCCL build accepts exactly one UNPACK version. */
#define NCCL_NET_DEVICE_UNPACK_VERSION 0x7

typedef enum {
  NCCL_NET_DEVICE_HOST = 0,
  NCCL_NET_DEVICE_UNPACK = 1,
  NCCL_NET_DEVICE_GIN_PROXY = 2,
  NCCL_NET_DEVICE_GIN_GDAKI = 3
} ncclNetDeviceType;

typedef struct {
  ncclNetDeviceType netDeviceType; /* HOST or UNPACK for net plugins */
  int netDeviceVersion;            /* NCCL_NET_DEVICE_UNPACK_VERSION for UNPACK */
  void* handle;                    /* UNPACK: device pointer to ncclNetUnpackDeviceHandle */
  size_t size;
  int needsProxyProgress; /* 0: NCCL may skip proxy progress for this connection */
} ncclNetDeviceHandle_v7_t;

#endif /* NCCL_NET_DEVICE_H_ */

typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v9_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v10_t ncclNetDeviceHandle_v11_t;
typedef ncclNetDeviceHandle_v11_t ncclNetDeviceHandle_v12_t;

/* UNPACK metadata (device side). For each step of a receive connection
 * NCCL's SIMPLE kernel first increments head, then reads cnt[head % 16] and
 * copies mem[head % 16][i].len bytes from bounce_buf + src_off to the step
 * buffer + dst_off. With head starting at 0, the k-th receive (from 0)
 * therefore uses slot (k + 1) % 16. */
#define NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH 16
#define NCCL_NET_UNPACK_MAX_SLICE_SIZE 4194304
#define NCCL_NET_UNPACK_SLICE_PAGE_SIZE 4096
#define NCCL_NET_UNPACK_MAX_SLICE_PAGES \
  (NCCL_NET_UNPACK_MAX_SLICE_SIZE / NCCL_NET_UNPACK_SLICE_PAGE_SIZE * 2)

/* __extension__: an anonymous struct is C11 but a GNU extension in C++, and
 * a C++ consumer building with -Wpedantic must not be warned about NCCL's
 * layout. It changes nothing in the layout. */
typedef union {
  uint64_t r64[2];
  __extension__ struct {
    uint32_t src_off;
    uint32_t len;
    uint64_t dst_off;
  };
} __attribute__((aligned(16))) ncclNetUnpackLoadMeta;

typedef struct {
  ncclNetUnpackLoadMeta mem[NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH]
                           [NCCL_NET_UNPACK_MAX_SLICE_PAGES];
  uint64_t cnt[NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH];
} ncclNetUnpackMeta;

typedef struct {
  ncclNetUnpackMeta* meta; /* host-mapped, readable by the GPU */
  void* bounce_buf;        /* device memory the payload lands in */
  uint64_t head;           /* advanced by the kernel once per step */
} ncclNetUnpackDeviceHandle;

#endif /* NCCLNET_ABI_NET_DEVICE_H */
