// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the connect and accept state machines.
#include "connect.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <random>

namespace ncclnet::ib {
namespace {

// magic, version and secret (kConnInfoStamp): enough to tell a stray from
// the peer.
constexpr size_t kHelloPrefix = kConnInfoStamp.bytes();
static_assert(kHelloPrefix == offsetof(ConnInfo, nqps), "the stamp leads ConnInfo");

bool expired(const Clock::time_point& deadline, std::string* why) {
  if (Clock::now() < deadline) return false;
  *why = "the peer did not complete the handshake in time (NCCL_IB_CONNECT_TIMEOUT_MS)";
  return true;
}

// The first kHelloPrefix bytes of a ConnInfo.
bool validHello(const ConnInfo& info, uint64_t secret, std::string* why) {
  WireVerdict verdict = kConnInfoStamp.check(&info, kHelloPrefix, &secret);
  if (verdict == WireVerdict::kOk) return true;
  *why = kConnInfoStamp.explain(verdict, &info, kHelloPrefix);
  return false;
}

bool validInfo(const ConnInfo& info, uint64_t secret, std::string* why) {
  if (!validHello(info, secret, why)) return false;
  if (info.nqps == 0 || info.nqps > kMaxQps) {
    std::string detail =
        "it announces " + std::to_string(info.nqps) + " QPs (1.." + std::to_string(kMaxQps) + ")";
    *why = kConnInfoStamp.explain(WireVerdict::kMalformed, &info, sizeof(info), detail.c_str());
    return false;
  }
  return true;
}

// One step of one handshake on the listening side.
Progress stepHandshake(const AcceptContext& ctx, const ListenComm& l, Handshake& h,
                       std::string* why) {
  for (;;) {
    Progress p = Progress::kDone;
    switch (h.stage) {
      case Stage::kRecvInfo:
        p = oobRecv(h.fd, &h.remote, sizeof(h.remote), &h.offset, why);
        // Judge the prefix as soon as it is here: a stray that sent a few
        // wrong bytes and stalls is dropped now, not at the deadline.
        if (!h.authenticated && h.offset >= kHelloPrefix) {
          if (!validHello(h.remote, l.secret, why)) return Progress::kFailed;
          h.authenticated = true;
        }
        if (p == Progress::kDone) {
          if (!validInfo(h.remote, l.secret, why)) return Progress::kFailed;
          h.comm = std::make_unique<RecvComm>(ctx.api, ctx.port, ctx.log);
          h.comm->peer = h.peer;
          if (!h.comm->setup(ctx.config, why)) return Progress::kFailed;
          h.comm->setRemote(h.remote);
          if (!h.comm->ep.connect(ctx.config, h.remote, serviceLevel(ctx.config, l.trafficClass),
                                  trafficClassFor(ctx.config, l.trafficClass), why)) {
            return Progress::kFailed;
          }
          h.comm->describe(ctx.config, &h.local);
          h.local.secret = l.secret;
          h.offset = 0;
          h.stage = Stage::kSendInfo;
        }
        break;
      case Stage::kSendInfo:
        p = oobSend(h.fd, &h.local, sizeof(h.local), &h.offset, why);
        if (p == Progress::kDone) {
          h.offset = 0;
          h.stage = Stage::kRecvReady;
        }
        break;
      case Stage::kRecvReady:
        p = oobRecv(h.fd, &h.ready, 1, &h.offset, why);
        if (p == Progress::kDone) h.stage = Stage::kDone;
        break;
      default: return Progress::kDone;
    }
    if (p != Progress::kDone) return p;
  }
}

void dropStray(const AcceptContext& ctx, const Handshake& h, const std::string& why) {
  NCCLNET_WARN_LIMITED(ctx.log, ctx.strays, "accept on %s: dropped a connection from %s: %s",
                       ctx.port.name.c_str(), h.peer.c_str(), why.c_str());
}

// Makes room for one more handshake: drops the oldest that has not shown
// the secret. False when every slot holds a peer that has.
bool makeRoom(const AcceptContext& ctx, ListenComm& l) {
  if (l.handshakes.size() < ListenComm::kMaxHandshakes) return true;
  for (auto it = l.handshakes.begin(); it != l.handshakes.end(); ++it) {
    if ((*it)->authenticated) continue;
    dropStray(ctx, **it, "too many connections in handshake at once");
    l.handshakes.erase(it);
    return true;
  }
  return false;
}

// Every connection the kernel has queued becomes a handshake.
void takeNewConnections(const AcceptContext& ctx, ListenComm& l) {
  for (;;) {
    auto h = std::make_unique<Handshake>();
    std::string why;
    Progress p = oobAccept(l.listener, &h->fd, &why);
    if (p == Progress::kPending) return;
    if (p == Progress::kFailed) {  // EMFILE and the like: the next call retries
      NCCLNET_WARN_LIMITED(ctx.log, ctx.strays, "accept on %s: %s", ctx.port.name.c_str(),
                           why.c_str());
      return;
    }
    h->peer = oobPeer(h->fd);
    h->deadline = Clock::now() + std::chrono::milliseconds(ctx.config.connectTimeoutMs);
    if (!makeRoom(ctx, l)) {
      dropStray(ctx, *h, "too many connections in handshake at once");
      continue;
    }
    l.handshakes.push_back(std::move(h));
  }
}

}  // namespace

uint64_t randomSecret() {
  uint64_t value = 0;
  if (::getrandom(&value, sizeof(value), 0) == static_cast<ssize_t>(sizeof(value))) return value;
  std::random_device device;  // getrandom is missing only on very old kernels
  return (uint64_t{device()} << 32) ^ device();
}

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
          if (!validInfo(st.remote, st.secret, why)) return Progress::kFailed;
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

Progress stepAccept(const AcceptContext& ctx, ListenComm& l, std::unique_ptr<RecvComm>* out,
                    std::string* why) {
  takeNewConnections(ctx, l);
  for (auto it = l.handshakes.begin(); it != l.handshakes.end();) {
    std::string reason;
    Progress p = stepHandshake(ctx, l, **it, &reason);
    if (p == Progress::kPending && Clock::now() >= (*it)->deadline) {
      p = Progress::kFailed;
      reason = "no complete handshake within NCCL_IB_CONNECT_TIMEOUT_MS (" +
               std::to_string(ctx.config.connectTimeoutMs) + " ms)";
    }
    if (p == Progress::kPending) {
      ++it;
      continue;
    }
    std::unique_ptr<Handshake> h = std::move(*it);
    it = l.handshakes.erase(it);
    if (p == Progress::kDone) {
      h->comm->oob = std::move(h->fd);
      *out = std::move(h->comm);
      return Progress::kDone;
    }
    // Only a peer that read the handle knows the secret: its failure is the
    // job's. Anything else is a stray, and the real peer may still come.
    if (h->authenticated) {
      *why = "handshake with " + h->peer + ": " + reason;
      return Progress::kFailed;
    }
    dropStray(ctx, *h, reason);
  }
  return Progress::kPending;
}

}  // namespace ncclnet::ib
