// SPDX-License-Identifier: Apache-2.0
// sdk-ib: one side of a connection's transport — a CQ and the RC QPs
// (NCCL_IB_QPS_PER_CONNECTION) on one port — and the metadata the two
// sides exchange to connect their QPs.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "async_events.hpp"
#include "config.hpp"
#include "devices.hpp"
#include "ibv_api.hpp"
#include "ncclnet/wire_stamp.hpp"

namespace ncclnet::ib {

constexpr int kMaxQps = 16;
constexpr uint64_t kConnInfoMagic = 0x7364'6b69'6263'6932ull;  // "sdkibci2"
constexpr uint32_t kWireVersion = 3;                           // bumped whenever ConnInfo changes

// What one side tells the other. `addr`/`rkey`: the sender's CTS FIFO, or
// the receiver's array of received sizes. magic, version and secret come
// first, so a listener refuses a stray as soon as those have arrived.
struct ConnInfo {
  uint64_t magic = kConnInfoMagic;
  uint32_t version = kWireVersion;
  uint64_t secret = 0;  // the listen handle's: proof the sender read the handle
  uint32_t nqps = 0;
  uint32_t qpn[kMaxQps] = {};
  ibv_gid gid{};
  uint16_t lid = 0;
  uint8_t linkLayer = 0;
  uint8_t mtu = 0;
  uint8_t splitData = 0;  // NCCL_IB_SPLIT_DATA_ON_QPS: both sides must agree
  uint8_t reserved[3] = {};
  uint32_t rkey = 0;
  uint64_t addr = 0;
};
// The stamp the listener judges before the rest has arrived.
constexpr WireStamp kConnInfoStamp{"sdk-ib",
                                   "handshake",
                                   kConnInfoMagic,
                                   kWireVersion,
                                   {{offsetof(ConnInfo, magic), sizeof(ConnInfo::magic)},
                                    {offsetof(ConnInfo, version), sizeof(ConnInfo::version)},
                                    {offsetof(ConnInfo, secret), sizeof(ConnInfo::secret)}}};

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

  // Fatal async events on the QPs and CQ create() makes fail `health`;
  // `what` names the connection in the event's log line.
  void watchWith(std::shared_ptr<Health> health, std::string what) {
    health_ = std::move(health);
    what_ = std::move(what);
  }
  // Creates the CQ and `nqps` QPs (P_Key index of the port), moved to INIT.
  bool create(int nqps, const QpSizes& sizes, std::string* why);
  // Fills the QP numbers, GID, LID and MTU of `info`.
  void describe(const Config& config, ConnInfo* info) const;
  // INIT -> RTR -> RTS against the peer's QPs (QP i to the peer's QP i).
  bool connect(const Config& config, const ConnInfo& remote, int sl, int tc, std::string* why);

  ibv_cq* cq() const { return cq_; }
  ibv_qp* qp(int i) const { return qps_[i]; }
  int nqps() const { return static_cast<int>(qps_.size()); }
  // Inline bytes every QP accepts, as the provider granted them.
  uint32_t maxInline() const { return maxInline_; }
  const Port& port() const { return port_; }
  const IbvApi& api() const { return api_; }

 private:
  AsyncWatcher* watcher() const { return port_.hca->events.get(); }

  const IbvApi& api_;
  const Port& port_;
  std::shared_ptr<Health> health_;
  std::string what_;
  ibv_cq* cq_ = nullptr;
  std::vector<ibv_qp*> qps_;
  uint32_t maxInline_ = 0;
};

}  // namespace ncclnet::ib
