// SPDX-License-Identifier: Apache-2.0
// sdk-ib: one side of a connection's transport — a CQ and the RC QPs
// (NCCL_IB_QPS_PER_CONNECTION) on one port — and the metadata the two
// sides exchange to connect their QPs.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "devices.hpp"
#include "ibv_api.hpp"

namespace sdkib {

constexpr int kMaxQps = 16;
constexpr uint64_t kConnInfoMagic = 0x7364'6b69'6263'6931ull;  // "sdkibci1"

// What one side tells the other. `addr`/`rkey`: the sender's CTS FIFO, or
// the receiver's array of received sizes.
struct ConnInfo {
  uint64_t magic = kConnInfoMagic;
  uint32_t nqps = 0;
  uint32_t qpn[kMaxQps] = {};
  ibv_gid gid{};
  uint16_t lid = 0;
  uint8_t linkLayer = 0;
  uint8_t mtu = 0;
  uint32_t rkey = 0;
  uint64_t addr = 0;
};

struct QpSizes {
  uint32_t sendWr;
  uint32_t recvWr;
  uint32_t maxInline;
};

class Endpoint {
 public:
  Endpoint(const IbvApi& api, const Port& port) : api_(api), port_(port) {}
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // Creates the CQ and `nqps` QPs, moved to INIT.
  bool create(int nqps, const QpSizes& sizes, std::string* why);
  // Fills the QP numbers, GID, LID and MTU of `info`.
  void describe(const Config& config, ConnInfo* info) const;
  // INIT -> RTR -> RTS against the peer's QPs (QP i to the peer's QP i).
  bool connect(const Config& config, const ConnInfo& remote, int sl, int tc, std::string* why);

  ibv_cq* cq() const { return cq_; }
  ibv_qp* qp(int i) const { return qps_[i]; }
  int nqps() const { return static_cast<int>(qps_.size()); }
  const Port& port() const { return port_; }
  const IbvApi& api() const { return api_; }

 private:
  const IbvApi& api_;
  const Port& port_;
  ibv_cq* cq_ = nullptr;
  std::vector<ibv_qp*> qps_;
};

}  // namespace sdkib
