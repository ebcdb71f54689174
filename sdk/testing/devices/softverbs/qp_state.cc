// SPDX-License-Identifier: Apache-2.0
// softverbs: the RC QP state machine (RESET -> INIT -> RTR -> RTS, and the
// error state), with the attribute masks each transition requires.
#include <cerrno>

#include "device.hpp"
#include "engine.hpp"

namespace softverbs {
namespace {

struct Transition {
  ibv_qp_state from;
  ibv_qp_state to;
  int required;
  int optional;
};

// The RC rows of the IB spec's QP transition table that softverbs models.
constexpr int kAlways = IBV_QP_STATE | IBV_QP_CUR_STATE;
const Transition kTransitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT, IBV_QPS_RTR,
     IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
         IBV_QP_MIN_RNR_TIMER,
     IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_RTR, IBV_QPS_RTS,
     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
     IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER},
    {IBV_QPS_RTS, IBV_QPS_RTS, 0, IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER},
};

bool allowed(ibv_qp_state from, ibv_qp_state to, int mask) {
  // Any state may go to RESET or ERR, with no other attribute.
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) return (mask & ~kAlways) == 0;
  for (const Transition& t : kTransitions) {
    if (t.from != from || t.to != to) continue;
    int attrs = mask & ~kAlways;
    return (attrs & t.required) == t.required && (attrs & ~(t.required | t.optional)) == 0;
  }
  return false;
}

// Checks and applies the attributes; EINVAL leaves the QP unchanged.
int apply(Qp* qp, const ibv_qp_attr* attr, int mask) {
  if ((mask & IBV_QP_PORT) && attr->port_num != Device::kPort) return EINVAL;
  uint16_t pkey = qp->pkey;
  if ((mask & IBV_QP_PKEY_INDEX) && !qp->device->pkey(attr->pkey_index, &pkey)) return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) && (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096)) {
    return EINVAL;
  }
  uint32_t remote = qp->remoteDevice;
  if (mask & IBV_QP_AV) {
    // RoCE: every address carries a GRH naming the peer's GID.
    const ibv_ah_attr& ah = attr->ah_attr;
    if (!ah.is_global || ah.grh.sgid_index >= Device::kGidTableLen ||
        (ah.port_num != 0 && ah.port_num != Device::kPort) ||
        !Device::addressFromGid(ah.grh.dgid, &remote)) {
      return EINVAL;
    }
  }
  if (mask & IBV_QP_ACCESS_FLAGS) qp->access = attr->qp_access_flags;
  if (mask & IBV_QP_PKEY_INDEX) {
    qp->pkeyIndex = attr->pkey_index;
    qp->pkey = pkey;
  }
  if (mask & IBV_QP_PATH_MTU) qp->mtu = attr->path_mtu;
  if (mask & IBV_QP_AV) {
    qp->ah = attr->ah_attr;
    qp->remoteDevice = remote;
  }
  if (mask & IBV_QP_DEST_QPN) qp->remoteQpn = attr->dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) qp->rqPsn = attr->rq_psn;
  if (mask & IBV_QP_SQ_PSN) qp->sqPsn = attr->sq_psn;
  if (mask & IBV_QP_TIMEOUT) qp->timeout = attr->timeout;
  if (mask & IBV_QP_RETRY_CNT) qp->retryCnt = attr->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) qp->rnrRetry = attr->rnr_retry;
  if (mask & IBV_QP_MIN_RNR_TIMER) qp->minRnrTimer = attr->min_rnr_timer;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) qp->maxRdAtomic = attr->max_rd_atomic;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) qp->maxDestRdAtomic = attr->max_dest_rd_atomic;
  return 0;
}

}  // namespace

int modifyQp(Qp* qp, const ibv_qp_attr* attr, int mask) {
  if (attr == nullptr) return EINVAL;
  std::lock_guard<std::mutex> lock(qp->device->mutex);
  ibv_qp_state from = qp->qp.state;
  if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != from) return EINVAL;
  ibv_qp_state to = (mask & IBV_QP_STATE) ? attr->qp_state : from;
  if (!allowed(from, to, mask)) return EINVAL;
  if (to == IBV_QPS_ERR) {
    enterError(qp);
    return 0;
  }
  if (to == IBV_QPS_RESET) {
    resetQueues(qp);
    qp->remoteDevice = 0;
    qp->remoteQpn = 0;
    qp->qp.state = IBV_QPS_RESET;
    return 0;
  }
  int rc = apply(qp, attr, mask);
  if (rc == 0) qp->qp.state = to;
  return rc;
}

int queryQp(Qp* qp, ibv_qp_attr* attr, ibv_qp_init_attr* init) {
  if (attr == nullptr || init == nullptr) return EINVAL;
  std::lock_guard<std::mutex> lock(qp->device->mutex);
  *attr = ibv_qp_attr{};
  attr->qp_state = attr->cur_qp_state = qp->qp.state;
  attr->path_mtu = qp->mtu;
  attr->qp_access_flags = qp->access;
  attr->ah_attr = qp->ah;
  attr->dest_qp_num = qp->remoteQpn;
  attr->rq_psn = qp->rqPsn;
  attr->sq_psn = qp->sqPsn;
  attr->port_num = qp->port;
  attr->pkey_index = qp->pkeyIndex;
  attr->timeout = qp->timeout;
  attr->retry_cnt = qp->retryCnt;
  attr->rnr_retry = qp->rnrRetry;
  attr->min_rnr_timer = qp->minRnrTimer;
  attr->max_rd_atomic = qp->maxRdAtomic;
  attr->max_dest_rd_atomic = qp->maxDestRdAtomic;
  attr->cap = qp->cap;
  *init = ibv_qp_init_attr{};
  init->send_cq = qp->qp.send_cq;
  init->recv_cq = qp->qp.recv_cq;
  init->cap = qp->cap;
  init->qp_type = IBV_QPT_RC;
  init->sq_sig_all = qp->signalAll ? 1 : 0;
  return 0;
}

}  // namespace softverbs
