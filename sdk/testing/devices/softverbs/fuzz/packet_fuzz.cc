// SPDX-License-Identifier: Apache-2.0
// Fuzzes softverbs' responder: the packets a peer device sends over its TCP
// link (wire.hpp), handed to handleInbound as the device's progress thread
// hands them after reading one (framing as in Device::readPacket: header,
// magic, then `length` payload bytes for the ops that carry data).
//
// The device under test is real: one RC QP in RTS, connected to QP number
// kPeerQpn on the same device, a 4 KiB MR with remote read and write. The
// first input byte says which header fields are taken as sent; the others
// are aimed at that QP so that the fuzzer spends its time past the lookups
// (destination QP, source QP, P_Key, rkey; raddr as an offset from the MR's
// base, below or beyond it). Between inputs the QP goes through RESET, so
// no input leaves state for the next.
#include <infiniband/verbs.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device.hpp"
#include "engine.hpp"
#include "objects.hpp"

using namespace softverbs;

namespace {

constexpr uint32_t kPeerQpn = 0x4242;
constexpr size_t kBufferBytes = 4096;

enum Keep : uint8_t {
  kKeepDst = 1,
  kKeepSrc = 2,
  kKeepPkey = 4,
  kKeepRkey = 8,
  kKeepRaddr = 16,
};

struct Rig {
  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  ibv_gid gid{};
  std::vector<char> buffer = std::vector<char>(kBufferBytes);
  Device* device = nullptr;
};

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "softverbs fuzz set-up: %s\n", what);
  std::abort();
}

// RESET -> INIT -> RTR -> RTS towards kPeerQpn on this device's own GID.
void connect(Rig& rig) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RESET;
  require(ibv_modify_qp(rig.qp, &a, IBV_QP_STATE) == 0, "RESET");
  a = {};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  require(ibv_modify_qp(rig.qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0,
          "INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = kPeerQpn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = rig.gid;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  require(ibv_modify_qp(rig.qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0,
          "RTR");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  require(ibv_modify_qp(rig.qp, &a,
                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                            IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == 0,
          "RTS");
}

Rig& rig() {
  static Rig* r = [] {
    auto* n = new Rig;
    int count = 0;
    ibv_device** list = ibv_get_device_list(&count);
    require(list != nullptr && count > 0, "no softverbs device");
    n->context = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    require(n->context != nullptr, "ibv_open_device");
    require(ibv_query_gid(n->context, 1, 0, &n->gid) == 0, "ibv_query_gid");
    n->pd = ibv_alloc_pd(n->context);
    n->cq = ibv_create_cq(n->context, 256, nullptr, nullptr, 0);
    n->mr = ibv_reg_mr(n->pd, n->buffer.data(), kBufferBytes,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    require(n->pd && n->cq && n->mr, "pd, cq or mr");
    ibv_qp_init_attr init{};
    init.send_cq = n->cq;
    init.recv_cq = n->cq;
    init.qp_type = IBV_QPT_RC;
    init.cap = {16, 16, 2, 2, 64};
    n->qp = ibv_create_qp(n->pd, &init);
    require(n->qp != nullptr, "ibv_create_qp");
    n->device = contextOf(n->context)->device;
    return n;
  }();
  return *r;
}

// Two receives, so that sends and writes with immediate data land.
void postReceives(Rig& r) {
  for (int i = 0; i < 2; i++) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(r.buffer.data()) + i * 2048, 2048, r.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = static_cast<uint64_t>(i);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    require(ibv_post_recv(r.qp, &wr, &bad) == 0, "ibv_post_recv");
  }
}

void drain(Rig& r) {
  ibv_wc wc[16];
  while (ibv_poll_cq(r.cq, 16, wc) > 0) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  Rig& r = rig();
  connect(r);
  postReceives(r);
  uint8_t keep = data[0];
  const uint8_t* p = data + 1;
  size_t left = size - 1;
  uint64_t base = reinterpret_cast<uintptr_t>(r.buffer.data());
  // Several packets per input: later ones meet what earlier ones left.
  while (left >= sizeof(PacketHeader)) {
    Inbound in;
    std::memcpy(&in.header, p, sizeof(PacketHeader));
    p += sizeof(PacketHeader);
    left -= sizeof(PacketHeader);
    PacketHeader& h = in.header;
    if (h.magic != kPacketMagic) break;  // readPacket drops the link
    if (!(keep & kKeepDst)) h.dstQpn = r.qp->qp_num;
    if (!(keep & kKeepSrc)) h.srcQpn = kPeerQpn;
    if (!(keep & kKeepPkey)) h.pkey = 0xffff;
    if (!(keep & kKeepRkey)) h.rkey = r.mr->rkey;
    if (!(keep & kKeepRaddr)) h.raddr = base + static_cast<int32_t>(h.raddr);
    bool carriesData =
        h.op == Op::kSend || h.op == Op::kWrite || h.op == Op::kWriteImm || h.op == Op::kReadResp;
    if (carriesData) {
      if (h.length > left) break;  // the link would stall and be dropped
      in.payload.assign(p, p + h.length);
      p += h.length;
      left -= h.length;
    }
    std::lock_guard<std::mutex> lock(r.device->mutex);
    handleInbound(*r.device, r.device->id(), std::move(in));
  }
  drain(r);
  return 0;
}
