// SPDX-License-Identifier: Apache-2.0
// sdk-ib: creating and connecting a connection's QPs.
#include "endpoint.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ncclnet::ib {
namespace {

constexpr uint8_t kMinRnrTimer = 12;
constexpr uint8_t kRnrRetryForever = 7;
constexpr uint8_t kHopLimit = 255;

std::string failure(const char* what, int rc) {
  return std::string(what) + " failed: " + std::strerror(rc != 0 ? rc : errno);
}

}  // namespace

Endpoint::~Endpoint() {
  // Unwatched first: an event still arriving for them finds no comm to fail.
  if (AsyncWatcher* w = health_ != nullptr ? watcher() : nullptr) {
    for (ibv_qp* qp : qps_) w->unwatch(qp);
    if (cq_ != nullptr) w->unwatch(cq_);
  }
  for (ibv_qp* qp : qps_) api_.destroyQp(qp);
  if (cq_ != nullptr) api_.destroyCq(cq_);
}

bool Endpoint::create(int nqps, const QpSizes& sizes, std::string* why) {
  int cqe = static_cast<int>((sizes.sendWr + sizes.recvWr) * static_cast<uint32_t>(nqps));
  cq_ = api_.createCq(port_.hca->context, cqe, nullptr, nullptr, 0);
  if (cq_ == nullptr) {
    *why = failure("ibv_create_cq", 0);
    return false;
  }
  AsyncWatcher* w = health_ != nullptr ? watcher() : nullptr;
  if (w != nullptr) w->watch(cq_, port_.port, health_, what_);
  maxInline_ = sizes.maxInline;
  for (int i = 0; i < nqps; i++) {
    ibv_qp_init_attr init{};
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = sizes.sendWr;
    init.cap.max_recv_wr = sizes.recvWr;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = sizes.maxInline;
    ibv_qp* qp = api_.createQp(port_.hca->pd, &init);
    if (qp == nullptr) {
      *why = failure("ibv_create_qp", 0);
      if (sizes.maxInline > 0) *why += " (" + std::to_string(sizes.maxInline) + " inline bytes)";
      return false;
    }
    qps_.push_back(qp);
    if (w != nullptr) w->watch(qp, port_.port, health_, what_);
    // ibv_create_qp writes back the capacities granted: rely on no more.
    maxInline_ = std::min(maxInline_, init.cap.max_inline_data);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = static_cast<uint16_t>(port_.pkeyIndex);
    attr.port_num = static_cast<uint8_t>(port_.port);
    attr.qp_access_flags =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    int rc = api_.modifyQp(qp, &attr,
                           IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc != 0) {
      *why = failure("ibv_modify_qp(INIT)", rc);
      return false;
    }
  }
  return true;
}

void Endpoint::describe(const Config& config, ConnInfo* info) const {
  info->nqps = static_cast<uint32_t>(qps_.size());
  for (size_t i = 0; i < qps_.size(); i++) info->qpn[i] = qps_[i]->qp_num;
  info->gid = port_.gid;
  info->lid = port_.attr.lid;
  info->linkLayer = port_.attr.link_layer;
  info->mtu = static_cast<uint8_t>(config.mtu > 0 ? std::min<int>(config.mtu, port_.attr.active_mtu)
                                                  : port_.attr.active_mtu);
  info->splitData = config.splitDataOnQps ? 1 : 0;
}

bool Endpoint::connect(const Config& config, const ConnInfo& remote, int sl, int tc,
                       std::string* why) {
  if (remote.nqps != qps_.size()) {
    *why = "peer has " + std::to_string(remote.nqps) + " QPs, this side " +
           std::to_string(qps_.size()) + " (NCCL_IB_QPS_PER_CONNECTION must agree)";
    return false;
  }
  if (remote.splitData != (config.splitDataOnQps ? 1 : 0)) {
    *why = std::string("the peer ") + (remote.splitData ? "splits" : "does not split") +
           " messages over its QPs, this side " + (config.splitDataOnQps ? "does" : "does not") +
           " (NCCL_IB_SPLIT_DATA_ON_QPS must agree)";
    return false;
  }
  if (remote.linkLayer != port_.attr.link_layer) {
    *why = "peer's link layer differs from this port's (InfiniBand vs RoCE)";
    return false;
  }
  ConnInfo local;
  describe(config, &local);
  for (size_t i = 0; i < qps_.size(); i++) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = static_cast<ibv_mtu>(std::min(local.mtu, remote.mtu));
    attr.dest_qp_num = remote.qpn[i];
    attr.rq_psn = 0;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = kMinRnrTimer;
    attr.ah_attr.port_num = static_cast<uint8_t>(port_.port);
    attr.ah_attr.sl = static_cast<uint8_t>(sl);
    if (port_.attr.link_layer == IBV_LINK_LAYER_ETHERNET) {
      attr.ah_attr.is_global = 1;  // RoCE routes by GID
      attr.ah_attr.grh.dgid = remote.gid;
      attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port_.gidIndex);
      attr.ah_attr.grh.hop_limit = kHopLimit;
      attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(tc);
    } else {
      attr.ah_attr.dlid = remote.lid;
    }
    int rc = api_.modifyQp(qps_[i], &attr,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc != 0) {
      *why = failure("ibv_modify_qp(RTR)", rc);
      return false;
    }
    attr = ibv_qp_attr{};
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = static_cast<uint8_t>(config.timeout);
    attr.retry_cnt = static_cast<uint8_t>(config.retryCnt);
    attr.rnr_retry = kRnrRetryForever;
    attr.sq_psn = 0;
    attr.max_rd_atomic = 1;
    rc = api_.modifyQp(qps_[i], &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc != 0) {
      *why = failure("ibv_modify_qp(RTS)", rc);
      return false;
    }
  }
  return true;
}

}  // namespace ncclnet::ib
