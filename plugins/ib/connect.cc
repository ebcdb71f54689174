// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the connect and accept state machines.
#include "connect.hpp"

namespace sdkib {
namespace {

bool expired(const Clock::time_point& deadline, std::string* why) {
  if (Clock::now() < deadline) return false;
  *why = "the peer did not complete the handshake in time (NCCL_IB_CONNECT_TIMEOUT_MS)";
  return true;
}

bool validInfo(const ConnInfo& info, std::string* why) {
  if (info.magic != kConnInfoMagic || info.nqps == 0 || info.nqps > kMaxQps) {
    *why = "the peer is not sdk-ib (or another version of it)";
    return false;
  }
  return true;
}

}  // namespace

int serviceLevel(const Config& config, int trafficClass) {
  if (config.sl >= 0) return config.sl;
  return trafficClass >= 0 ? (trafficClass & 0xf) : 0;
}

int trafficClassFor(const Config& config, int trafficClass) {
  if (config.tc >= 0) return config.tc;
  return trafficClass >= 0 ? (trafficClass & 0xff) : 0;
}

Progress stepConnect(const Config& config, ConnectState& st, std::string* why) {
  for (;;) {
    Progress p = Progress::kDone;
    switch (st.stage) {
      case Stage::kTcp:
        p = oobConnectDone(st.fd, why);
        if (p == Progress::kDone) {
          st.offset = 0;
          st.stage = Stage::kSendInfo;
        }
        break;
      case Stage::kSendInfo:
        p = oobSend(st.fd, &st.local, sizeof(st.local), &st.offset, why);
        if (p == Progress::kDone) {
          st.offset = 0;
          st.stage = Stage::kRecvInfo;
        }
        break;
      case Stage::kRecvInfo:
        p = oobRecv(st.fd, &st.remote, sizeof(st.remote), &st.offset, why);
        if (p == Progress::kDone) {
          if (!validInfo(st.remote, why)) return Progress::kFailed;
          st.comm->setRemote(st.remote);
          if (!st.comm->ep.connect(config, st.remote, st.sl, st.tc, why)) return Progress::kFailed;
          st.offset = 0;
          st.stage = Stage::kSendReady;
        }
        break;
      case Stage::kSendReady:
        p = oobSend(st.fd, &st.ready, 1, &st.offset, why);
        if (p == Progress::kDone) st.stage = Stage::kDone;
        break;
      default: return Progress::kDone;
    }
    if (p == Progress::kFailed) return p;
    if (p == Progress::kPending) return expired(st.deadline, why) ? Progress::kFailed : p;
  }
}

Progress stepAccept(const Config& config, ListenComm& l, const IbvApi& api, const Port& port,
                    const ncclnet::Logger& log, RequestIndex& index, std::string* why) {
  for (;;) {
    Progress p = Progress::kDone;
    switch (l.stage) {
      case Stage::kTcp:
        p = oobAccept(l.listener, &l.fd, why);
        if (p == Progress::kDone) {
          // The peer may take its time to call connect; once it has, the
          // handshake itself must finish within the deadline.
          l.deadline = Clock::now() + std::chrono::milliseconds(config.connectTimeoutMs);
          l.offset = 0;
          l.stage = Stage::kRecvInfo;
        }
        if (p == Progress::kPending) return p;
        break;
      case Stage::kRecvInfo:
        p = oobRecv(l.fd, &l.remote, sizeof(l.remote), &l.offset, why);
        if (p == Progress::kDone) {
          if (!validInfo(l.remote, why)) return Progress::kFailed;
          l.comm = std::make_unique<RecvComm>(api, port, log, index);
          l.comm->peer = oobPeer(l.fd);
          if (!l.comm->setup(config, why)) return Progress::kFailed;
          l.comm->setRemote(l.remote);
          if (!l.comm->ep.connect(config, l.remote, serviceLevel(config, l.trafficClass),
                                  trafficClassFor(config, l.trafficClass), why)) {
            return Progress::kFailed;
          }
          l.comm->describe(config, &l.local);
          l.offset = 0;
          l.stage = Stage::kSendInfo;
        }
        break;
      case Stage::kSendInfo:
        p = oobSend(l.fd, &l.local, sizeof(l.local), &l.offset, why);
        if (p == Progress::kDone) {
          l.offset = 0;
          l.stage = Stage::kRecvReady;
        }
        break;
      case Stage::kRecvReady:
        p = oobRecv(l.fd, &l.ready, 1, &l.offset, why);
        if (p == Progress::kDone) l.stage = Stage::kDone;
        break;
      default: return Progress::kDone;
    }
    if (p == Progress::kFailed) return p;
    if (p == Progress::kPending) return expired(l.deadline, why) ? Progress::kFailed : p;
  }
}

}  // namespace sdkib
