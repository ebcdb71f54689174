// SPDX-License-Identifier: Apache-2.0
// softverbs: the libibverbs entry points, exported with libibverbs' symbol
// versions (see softverbs.map). The data-path verbs are static inlines in
// verbs.h that call through ibv_context::ops; open fills that table.
#include <endian.h>
#include <infiniband/verbs.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "async.hpp"
#include "device.hpp"
#include "engine.hpp"
#include "gpu.hpp"
#include "objects.hpp"

#define SOFTVERBS_EXPORT __attribute__((visibility("default")))

namespace softverbs {
namespace {

constexpr int kMaxQp = 16384;
constexpr int kMaxQpWr = 16384;
constexpr int kMaxSge = 16;
constexpr int kMaxCqe = 1 << 22;
constexpr uint32_t kMaxInline = 512;
constexpr int kMaxRdAtom = 16;

Device* deviceOf(ibv_context* context) {
  return contextOf(context)->device;
}

// SOFTVERBS_DOWN_DEVICES=1,3 reports those devices' ports as DOWN, so that
// a consumer's filtering of inactive ports can be tested.
bool portDown(int index) {
  const char* raw = std::getenv("SOFTVERBS_DOWN_DEVICES");
  if (raw == nullptr) return false;
  std::string list = std::string(",") + raw + ",";
  return list.find("," + std::to_string(index) + ",") != std::string::npos;
}

void fillPortAttr(Device* device, ibv_port_attr* attr) {
  std::memset(attr, 0, sizeof(*attr));
  bool down = portDown(device->index()) || device->portDown();
  attr->state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_4096;
  attr->gid_tbl_len = Device::kGidTableLen;
  attr->max_msg_sz = 1u << 31;
  attr->pkey_tbl_len = static_cast<uint16_t>(device->pkeyCount());
  attr->active_width = 2;           // 4X
  attr->active_speed = 32;          // EDR, 25 Gb/s per lane: 100 Gb/s
  attr->phys_state = down ? 3 : 5;  // Disabled / LinkUp
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;
}

int queryPortEx(ibv_context* context, uint8_t port, ibv_port_attr* attr, size_t size) {
  if (port != Device::kPort || attr == nullptr) return EINVAL;
  ibv_port_attr full;
  fillPortAttr(deviceOf(context), &full);
  std::memset(attr, 0, size);
  std::memcpy(attr, &full, std::min(size, sizeof(full)));
  return 0;
}

int pollCq(ibv_cq* cq, int n, ibv_wc* wc) {
  Cq* q = reinterpret_cast<Cq*>(cq);
  if (n < 0 || (n > 0 && wc == nullptr)) return -EINVAL;
  std::lock_guard<std::mutex> lock(q->mutex);
  int count = 0;
  while (count < n && !q->entries.empty()) {
    wc[count++] = q->entries.front();
    q->entries.pop_front();
  }
  return count;
}

int postSendOp(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  try {
    return postSend(reinterpret_cast<Qp*>(qp), wr, bad);
  } catch (const std::bad_alloc&) {
    *bad = wr;
    return ENOMEM;
  }
}

int postRecvOp(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  try {
    return postRecv(reinterpret_cast<Qp*>(qp), wr, bad);
  } catch (const std::bad_alloc&) {
    *bad = wr;
    return ENOMEM;
  }
}

// What softverbs does not model answers EOPNOTSUPP: no slot is left NULL.
int reqNotifyCq(ibv_cq*, int) {
  return EOPNOTSUPP;
}
ibv_mw* allocMw(ibv_pd*, ibv_mw_type) {
  errno = EOPNOTSUPP;
  return nullptr;
}
int bindMw(ibv_qp*, ibv_mw*, ibv_mw_bind*) {
  return EOPNOTSUPP;
}
int deallocMw(ibv_mw*) {
  return EOPNOTSUPP;
}
int postSrqRecv(ibv_srq*, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  *bad = wr;
  return EOPNOTSUPP;
}

// What every registration checks first. Remote access needs local write,
// as the verbs spec demands.
bool registrationOk(ibv_pd* pd, const void* addr, size_t length, unsigned access) {
  bool remote = access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
  return pd != nullptr && !(remote && !(access & IBV_ACCESS_LOCAL_WRITE)) &&
         !(addr == nullptr && length > 0);
}

// Optional access flags (IBV_ACCESS_RELAXED_ORDERING, ...) are hints a
// device without them ignores, as libibverbs does; softverbs orders every
// access anyway. verbs.h routes them to ibv_reg_mr_iova2 only: the
// IBVERBS_1.1 ibv_reg_mr predates them.
unsigned withoutOptional(unsigned access) {
  return access & ~static_cast<unsigned>(IBV_ACCESS_OPTIONAL_RANGE);
}

// Registers [addr, addr + length), host memory or (with `gpu`) device memory.
ibv_mr* registerMr(ibv_pd* pd, void* addr, size_t length, unsigned access,
                   std::unique_ptr<GpuMemory> gpu) {
  auto* mr = new (std::nothrow) Mr;
  if (mr == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(&mr->mr, 0, sizeof(mr->mr));
  mr->mr.context = pd->context;
  mr->mr.pd = pd;
  mr->mr.addr = addr;
  mr->mr.length = length;
  mr->pd = reinterpret_cast<Pd*>(pd);
  mr->access = access;
  mr->gpu = std::move(gpu);
  Device* device = deviceOf(pd->context);
  std::lock_guard<std::mutex> lock(device->mutex);
  device->addMr(mr);
  mr->pd->users++;
  return &mr->mr;
}

// Before a QP or CQ goes: its unread events go with it, and the ones
// already read must be acknowledged first (libibverbs blocks the same way).
void forgetEvents(ibv_context* context, const void* object, const char* what) {
  if (AsyncQueue* queue = contextOf(context)->async.get()) queue->drop(object);
  awaitAcks(object, what);
}

bool capsOk(const ibv_qp_cap& cap) {
  return cap.max_send_wr <= static_cast<uint32_t>(kMaxQpWr) &&
         cap.max_recv_wr <= static_cast<uint32_t>(kMaxQpWr) &&
         cap.max_send_sge <= static_cast<uint32_t>(kMaxSge) &&
         cap.max_recv_sge <= static_cast<uint32_t>(kMaxSge) && cap.max_inline_data <= kMaxInline;
}

}  // namespace
}  // namespace softverbs

using namespace softverbs;

extern "C" {

SOFTVERBS_EXPORT ibv_device** ibv_get_device_list(int* num) {
  int n = Device::count();
  auto** list = new (std::nothrow) ibv_device*[n + 1];
  if (list == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  for (int i = 0; i < n; i++) list[i] = Device::verbsDevice(i);
  list[n] = nullptr;
  if (num != nullptr) *num = n;
  return list;
}

SOFTVERBS_EXPORT void ibv_free_device_list(ibv_device** list) {
  delete[] list;
}

SOFTVERBS_EXPORT const char* ibv_get_device_name(ibv_device* device) {
  return Device::indexOf(device) < 0 ? nullptr : device->name;
}

SOFTVERBS_EXPORT __be64 ibv_get_device_guid(ibv_device* device) {
  int index = Device::indexOf(device);
  return index < 0 ? 0 : htobe64(Device::guidFor(index));
}

SOFTVERBS_EXPORT ibv_context* ibv_open_device(ibv_device* device) {
  int index = Device::indexOf(device);
  if (index < 0) {
    errno = ENODEV;
    return nullptr;
  }
  auto* ctx = new (std::nothrow) Context;
  if (ctx == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(static_cast<void*>(&ctx->vctx), 0, sizeof(ctx->vctx));
  ctx->device = Device::acquire(index);
  if (ctx->device == nullptr) {
    int saved = errno;
    delete ctx;
    errno = saved;
    return nullptr;
  }
  ctx->async.reset(new (std::nothrow) AsyncQueue);
  if (ctx->async == nullptr || !ctx->async->ok()) {
    int saved = ctx->async == nullptr ? ENOMEM : EMFILE;
    Device::release(ctx->device);
    delete ctx;
    errno = saved;
    return nullptr;
  }
  verbs_context& v = ctx->vctx;
  v.sz = sizeof(verbs_context);
  v.query_port = queryPortEx;
  ibv_context& c = v.context;
  c.device = device;
  c.cmd_fd = -1;
  c.async_fd = ctx->async->fd();
  c.num_comp_vectors = 1;
  c.abi_compat = __VERBS_ABI_IS_EXTENDED;  // verbs.h inlines may use `v`
  pthread_mutex_init(&c.mutex, nullptr);
  c.ops.poll_cq = pollCq;
  c.ops.post_send = postSendOp;
  c.ops.post_recv = postRecvOp;
  c.ops.req_notify_cq = reqNotifyCq;
  c.ops.alloc_mw = allocMw;
  c.ops.bind_mw = bindMw;
  c.ops.dealloc_mw = deallocMw;
  c.ops.post_srq_recv = postSrqRecv;
  ctx->device->addContext(ctx);  // device and port events reach it from now on
  return &c;
}

SOFTVERBS_EXPORT int ibv_close_device(ibv_context* context) {
  Context* ctx = contextOf(context);
  ctx->device->removeContext(ctx);
  Device::release(ctx->device);
  pthread_mutex_destroy(&context->mutex);
  delete ctx;
  return 0;
}

SOFTVERBS_EXPORT int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  if (attr == nullptr) return EINVAL;
  Device* device = deviceOf(context);
  std::memset(attr, 0, sizeof(*attr));
  std::snprintf(attr->fw_ver, sizeof(attr->fw_ver), "softverbs-1.0");
  attr->node_guid = htobe64(Device::guidFor(device->index()));
  attr->sys_image_guid = attr->node_guid;
  attr->max_mr_size = 1ull << 40;
  attr->page_size_cap = 4096;
  attr->max_qp = kMaxQp;
  attr->max_qp_wr = kMaxQpWr;
  attr->max_sge = kMaxSge;
  attr->max_sge_rd = kMaxSge;
  attr->max_cq = kMaxQp;
  attr->max_cqe = kMaxCqe;
  attr->max_mr = 1 << 20;
  attr->max_pd = 1 << 16;
  attr->max_qp_rd_atom = kMaxRdAtom;
  attr->max_res_rd_atom = kMaxRdAtom * kMaxQp;
  attr->max_qp_init_rd_atom = kMaxRdAtom;
  attr->atomic_cap = IBV_ATOMIC_NONE;
  attr->max_pkeys = static_cast<uint16_t>(device->pkeyCount());
  attr->phys_port_cnt = 1;
  return 0;
}

// verbs.h turns ibv_query_port() into an inline that prefers
// verbs_context::query_port; this is the exported IBVERBS_1.1 symbol that
// older callers and dlsym() users reach. It fills the fields that precede
// port_cap_flags2, the layout of the compat struct.
SOFTVERBS_EXPORT int(ibv_query_port)(ibv_context* context, uint8_t port,
                                     _compat_ibv_port_attr* attr) {
  return queryPortEx(context, port, reinterpret_cast<ibv_port_attr*>(attr),
                     offsetof(ibv_port_attr, port_cap_flags2));
}

SOFTVERBS_EXPORT int ibv_query_gid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  if (port != Device::kPort || index < 0 || index >= Device::kGidTableLen || gid == nullptr) {
    return -1;
  }
  ibv_gid_type type;
  deviceOf(context)->gid(index, gid, &type);
  return 0;
}

SOFTVERBS_EXPORT int ibv_query_pkey(ibv_context* context, uint8_t port, int index, __be16* pkey) {
  uint16_t value = 0;
  if (port != Device::kPort || pkey == nullptr || !deviceOf(context)->pkey(index, &value)) {
    return -1;
  }
  *pkey = htobe16(value);
  return 0;
}

SOFTVERBS_EXPORT int _ibv_query_gid_ex(ibv_context* context, uint32_t port, uint32_t index,
                                       ibv_gid_entry* entry, uint32_t flags, size_t size) {
  if (port != Device::kPort || index >= static_cast<uint32_t>(Device::kGidTableLen) ||
      entry == nullptr || flags != 0 || size < sizeof(ibv_gid_entry)) {
    return EINVAL;
  }
  ibv_gid_type type;
  std::memset(entry, 0, size);
  deviceOf(context)->gid(static_cast<int>(index), &entry->gid, &type);
  entry->gid_index = index;
  entry->port_num = port;
  entry->gid_type = type;
  entry->ndev_ifindex = 1;  // lo
  return 0;
}

SOFTVERBS_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  auto* pd = new (std::nothrow) Pd;
  if (pd == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(&pd->pd, 0, sizeof(pd->pd));
  pd->pd.context = context;
  return &pd->pd;
}

SOFTVERBS_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  Pd* p = reinterpret_cast<Pd*>(pd);
  {
    std::lock_guard<std::mutex> lock(deviceOf(pd->context)->mutex);
    if (p->users > 0) return EBUSY;
  }
  delete p;
  return 0;
}

SOFTVERBS_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                          unsigned access) {
  access = withoutOptional(access);
  if (!registrationOk(pd, addr, length, access)) {
    errno = EINVAL;
    return nullptr;
  }
  if (iova != reinterpret_cast<uintptr_t>(addr)) {  // peers address MRs by pointer
    errno = EOPNOTSUPP;
    return nullptr;
  }
  int error = 0;
  std::unique_ptr<GpuMemory> gpu = GpuMemory::detect(addr, length, &error);
  if (error != 0) {
    errno = error;
    return nullptr;
  }
  if (gpu && !peerMemory()) {  // what an HCA answers without a peer-memory client
    errno = EFAULT;
    return nullptr;
  }
  return registerMr(pd, addr, length, access, std::move(gpu));
}

SOFTVERBS_EXPORT ibv_mr*(ibv_reg_mr)(ibv_pd* pd, void* addr, size_t length, int access) {
  if (static_cast<unsigned>(access) & static_cast<unsigned>(IBV_ACCESS_OPTIONAL_RANGE)) {
    errno = EINVAL;
    return nullptr;
  }
  return ibv_reg_mr_iova2(pd, addr, length, reinterpret_cast<uintptr_t>(addr),
                          static_cast<unsigned>(access));
}

// softverbs cannot map a dma-buf: it reaches the memory through the CUDA
// address the dma-buf was exported from, which the caller passes as iova
// (NCCL and sdk-ib do). The fd is only validated, never kept. Without a
// CUDA driver nothing could be reached, so the answer is EOPNOTSUPP, the
// kernel's answer without DMA-BUF support: a probe with fd -1 then tells
// consumers not to advertise DMA-BUF. With one, a bad fd is EBADF.
SOFTVERBS_EXPORT ibv_mr* ibv_reg_dmabuf_mr(ibv_pd* pd, uint64_t offset, size_t length,
                                           uint64_t iova, int fd, int access) {
  std::string why;
  if (!dmaBufUsable(&why)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    errno = EBADF;
    return nullptr;
  }
  auto* addr = reinterpret_cast<void*>(static_cast<uintptr_t>(iova));
  auto size = static_cast<uint64_t>(st.st_size);  // a dma-buf's size; 0 if unknown
  const unsigned flags = withoutOptional(static_cast<unsigned>(access));
  if (!registrationOk(pd, addr, length, flags) || length == 0 ||
      (size > 0 && (offset > size || length > size - offset))) {
    errno = EINVAL;
    return nullptr;
  }
  int error = 0;
  std::unique_ptr<GpuMemory> gpu = GpuMemory::detect(addr, length, &error);
  if (gpu == nullptr) {
    std::fprintf(stderr,
                 "softverbs: ibv_reg_dmabuf_mr: iova %p is not CUDA device memory; softverbs "
                 "reaches a dma-buf through the CUDA address it was exported from\n",
                 addr);
    errno = error != 0 ? error : EINVAL;
    return nullptr;
  }
  return registerMr(pd, addr, length, flags, std::move(gpu));
}

SOFTVERBS_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  Mr* m = reinterpret_cast<Mr*>(mr);
  Device* device = deviceOf(mr->context);
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    device->removeMr(mr->lkey);
    m->pd->users--;
  }
  delete m;
  return 0;
}

SOFTVERBS_EXPORT ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cqContext,
                                       ibv_comp_channel* channel, int) {
  if (cqe < 1 || cqe > kMaxCqe || channel != nullptr) {
    errno = channel != nullptr ? EOPNOTSUPP : EINVAL;
    return nullptr;
  }
  auto* cq = new (std::nothrow) Cq;
  if (cq == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(static_cast<void*>(&cq->cq), 0, sizeof(cq->cq));
  cq->cq.context = context;
  cq->cq.cq_context = cqContext;
  cq->cq.cqe = cqe;
  return &cq->cq;
}

SOFTVERBS_EXPORT int ibv_destroy_cq(ibv_cq* cq) {
  Cq* q = reinterpret_cast<Cq*>(cq);
  {
    std::lock_guard<std::mutex> lock(deviceOf(cq->context)->mutex);
    if (q->users > 0) return EBUSY;  // a QP still completes here
  }
  forgetEvents(cq->context, cq, "CQ");
  delete q;
  return 0;
}

SOFTVERBS_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  if (pd == nullptr || init == nullptr || init->send_cq == nullptr || init->recv_cq == nullptr ||
      init->srq != nullptr || !capsOk(init->cap)) {
    errno = EINVAL;
    return nullptr;
  }
  if (init->qp_type != IBV_QPT_RC) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  auto* qp = new (std::nothrow) Qp;
  if (qp == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  Device* device = deviceOf(pd->context);
  std::memset(static_cast<void*>(&qp->qp), 0, sizeof(qp->qp));
  qp->qp.context = pd->context;
  qp->qp.qp_context = init->qp_context;
  qp->qp.pd = pd;
  qp->qp.send_cq = init->send_cq;
  qp->qp.recv_cq = init->recv_cq;
  qp->qp.state = IBV_QPS_RESET;
  qp->qp.qp_type = IBV_QPT_RC;
  qp->device = device;
  qp->pd = reinterpret_cast<Pd*>(pd);
  qp->sendCq = reinterpret_cast<Cq*>(init->send_cq);
  qp->recvCq = reinterpret_cast<Cq*>(init->recv_cq);
  qp->cap = init->cap;
  qp->signalAll = init->sq_sig_all != 0;
  std::lock_guard<std::mutex> lock(device->mutex);
  qp->qp.qp_num = device->addQp(qp);
  qp->pd->users++;
  qp->sendCq->users++;
  qp->recvCq->users++;
  return &qp->qp;
}

SOFTVERBS_EXPORT int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  return modifyQp(reinterpret_cast<Qp*>(qp), attr, mask);
}

SOFTVERBS_EXPORT int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int, ibv_qp_init_attr* init) {
  return queryQp(reinterpret_cast<Qp*>(qp), attr, init);
}

SOFTVERBS_EXPORT int ibv_destroy_qp(ibv_qp* qp) {
  Qp* q = reinterpret_cast<Qp*>(qp);
  Device* device = q->device;
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    device->removeQp(qp->qp_num);
    q->pd->users--;
    q->sendCq->users--;
    q->recvCq->users--;
  }
  forgetEvents(qp->context, qp, "QP");
  delete q;
  return 0;
}

SOFTVERBS_EXPORT const char* ibv_wc_status_str(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS: return "success";
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
    case IBV_WC_LOC_EEC_OP_ERR: return "local EE context operation error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
    case IBV_WC_MW_BIND_ERR: return "memory management operation error";
    case IBV_WC_BAD_RESP_ERR: return "bad response error";
    case IBV_WC_LOC_ACCESS_ERR: return "local access error";
    case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    case IBV_WC_LOC_RDD_VIOL_ERR: return "local RDD violation error";
    case IBV_WC_REM_INV_RD_REQ_ERR: return "remote invalid RD request";
    case IBV_WC_REM_ABORT_ERR: return "aborted error";
    case IBV_WC_INV_EECN_ERR: return "invalid EE context number";
    case IBV_WC_INV_EEC_STATE_ERR: return "invalid EE context state";
    case IBV_WC_FATAL_ERR: return "fatal error";
    case IBV_WC_RESP_TIMEOUT_ERR: return "response timeout error";
    case IBV_WC_GENERAL_ERR: return "general error";
    default: return "unknown";
  }
}

SOFTVERBS_EXPORT const char* ibv_port_state_str(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_NOP: return "PORT_NOP";
    case IBV_PORT_DOWN: return "PORT_DOWN";
    case IBV_PORT_INIT: return "PORT_INIT";
    case IBV_PORT_ARMED: return "PORT_ARMED";
    case IBV_PORT_ACTIVE: return "PORT_ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "PORT_ACTIVE_DEFER";
    default: return "invalid state";
  }
}

// NCCL's IB transport loads this symbol with the others and fails its init
// without it; it names an async event in its logs (the texts libibverbs uses).
SOFTVERBS_EXPORT const char* ibv_event_type_str(ibv_event_type event) {
  switch (event) {
    case IBV_EVENT_CQ_ERR: return "CQ error";
    case IBV_EVENT_QP_FATAL: return "local work queue catastrophic error";
    case IBV_EVENT_QP_REQ_ERR: return "invalid request local work queue error";
    case IBV_EVENT_QP_ACCESS_ERR: return "local access violation work queue error";
    case IBV_EVENT_COMM_EST: return "communication established";
    case IBV_EVENT_SQ_DRAINED: return "send queue drained";
    case IBV_EVENT_PATH_MIG: return "path migrated";
    case IBV_EVENT_PATH_MIG_ERR: return "path migration request error";
    case IBV_EVENT_DEVICE_FATAL: return "local catastrophic error";
    case IBV_EVENT_PORT_ACTIVE: return "port active";
    case IBV_EVENT_PORT_ERR: return "port error";
    case IBV_EVENT_LID_CHANGE: return "LID change";
    case IBV_EVENT_PKEY_CHANGE: return "P_Key change";
    case IBV_EVENT_SM_CHANGE: return "SM change";
    case IBV_EVENT_SRQ_ERR: return "SRQ catastrophic error";
    case IBV_EVENT_SRQ_LIMIT_REACHED: return "SRQ limit reached";
    case IBV_EVENT_QP_LAST_WQE_REACHED: return "last WQE reached";
    case IBV_EVENT_CLIENT_REREGISTER: return "client reregistration";
    case IBV_EVENT_GID_CHANGE: return "GID table change";
    case IBV_EVENT_WQ_FATAL: return "WQ fatal";
    default: return "unknown";
  }
}

SOFTVERBS_EXPORT int ibv_fork_init(void) {
  return 0;
}

}  // extern "C"
