// SPDX-License-Identifier: Apache-2.0
// sdk-ib: libibverbs opened at run time. The plugin never links a verbs
// library: it dlopens the one NCCL_IBVERBS_LIB names (libibverbs.so.1 by
// default) and calls it through this table, so it loads on hosts without
// rdma-core and can run on a software device in CI.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace ncclnet::ib {

// The entry points, all resolved by IbvApi::load.
struct IbvFunctions {
  ibv_device** (*getDeviceList)(int*) = nullptr;
  void (*freeDeviceList)(ibv_device**) = nullptr;
  const char* (*getDeviceName)(ibv_device*) = nullptr;
  ibv_context* (*openDevice)(ibv_device*) = nullptr;
  int (*closeDevice)(ibv_context*) = nullptr;
  int (*queryDevice)(ibv_context*, ibv_device_attr*) = nullptr;
  // The exported ibv_query_port@IBVERBS_1.1, which fills the compat layout
  // (everything before port_cap_flags2).
  int (*queryPortCompat)(ibv_context*, uint8_t, ibv_port_attr*) = nullptr;
  int (*queryGid)(ibv_context*, uint8_t, int, ibv_gid*) = nullptr;
  // Optional (rdma-core >= 32): GID types without reading sysfs.
  int (*queryGidEx)(ibv_context*, uint32_t, uint32_t, ibv_gid_entry*, uint32_t, size_t) = nullptr;
  // Optional (rdma-core >= 34): registration of a dma-buf (GPU memory).
  ibv_mr* (*regDmabufMr)(ibv_pd*, uint64_t, size_t, uint64_t, int, int) = nullptr;
  // Optional (IBVERBS_1.8): the registration that takes optional access
  // flags such as IBV_ACCESS_RELAXED_ORDERING (ignored where unsupported).
  ibv_mr* (*regMrIova2)(ibv_pd*, void*, size_t, uint64_t, unsigned) = nullptr;
  // Optional: asynchronous events (async_events.hpp); without them no
  // event is watched.
  int (*getAsyncEvent)(ibv_context*, ibv_async_event*) = nullptr;
  void (*ackAsyncEvent)(ibv_async_event*) = nullptr;
  ibv_pd* (*allocPd)(ibv_context*) = nullptr;
  int (*deallocPd)(ibv_pd*) = nullptr;
  ibv_mr* (*regMr)(ibv_pd*, void*, size_t, int) = nullptr;
  int (*deregMr)(ibv_mr*) = nullptr;
  ibv_cq* (*createCq)(ibv_context*, int, void*, ibv_comp_channel*, int) = nullptr;
  int (*destroyCq)(ibv_cq*) = nullptr;
  ibv_qp* (*createQp)(ibv_pd*, ibv_qp_init_attr*) = nullptr;
  int (*modifyQp)(ibv_qp*, ibv_qp_attr*, int) = nullptr;
  int (*destroyQp)(ibv_qp*) = nullptr;
  const char* (*wcStatusStr)(ibv_wc_status) = nullptr;
};

struct IbvApi : IbvFunctions {
  IbvApi() = default;
  IbvApi(const IbvApi&) = delete;
  IbvApi& operator=(const IbvApi&) = delete;

  // Loads `library`; false with `*why` set when it cannot be opened or
  // lacks an entry point.
  bool load(const std::string& library, std::string* why);
  void unload();
  ~IbvApi() { unload(); }

  // verbs.h's inline ibv_query_port: the provider's extended query when the
  // context offers one, the exported compat symbol otherwise.
  int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const;

  // The data path is inline in verbs.h: straight into the provider's ops.
  static int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    return qp->context->ops.post_send(qp, wr, bad);
  }
  static int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    return qp->context->ops.post_recv(qp, wr, bad);
  }
  static int pollCq(ibv_cq* cq, int n, ibv_wc* wc) { return cq->context->ops.poll_cq(cq, n, wc); }

  const char* statusString(ibv_wc_status status) const {
    return wcStatusStr ? wcStatusStr(status) : "unknown";
  }

  void* handle = nullptr;
  std::string path;  // what was loaded
};

}  // namespace ncclnet::ib
