// SPDX-License-Identifier: Apache-2.0
// sdk-ib: connection establishment. NCCL polls connect() with the same
// handle and accept() with the same listen comm until each returns a comm;
// both keep their state between calls and never block:
//
//   sender                                   receiver
//   TCP connect -------------------------->  accept
//   create QPs (INIT), CTS FIFO
//   ConnInfo (QPs, GID, FIFO) ------------>  create QPs, connect them (RTR, RTS)
//   connect QPs (RTR, RTS) <---------------  ConnInfo (QPs, GID, sizes array)
//   "ready" ------------------------------>  (only now may it write the FIFO)
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/object_model.hpp"
#include "ncclnet/oob_channel.hpp"

namespace ncclnet::ib {

constexpr uint64_t kHandleMagic = 0x7364'6b69'6268'6e33ull;  // "sdkibhn3"

// What listen() writes into NCCL's 128-byte handle. `secret` is random per
// listen; a hello without it is a stray. A connect in progress is found
// again by the SDK, from the bytes after these.
struct Handle {
  uint64_t magic;
  union {
    sockaddr_in v4;
    sockaddr_in6 v6;
  } addr;
  uint64_t secret;
};
static_assert(sizeof(Handle) <= ncclnet::kPluginHandleBytes, "handle must fit the plugin's part");
// The handle carries no version: the magic changes with its layout.
constexpr WireStamp kHandleStamp{"sdk-ib",
                                 "listen handle",
                                 kHandleMagic,
                                 0,
                                 {{offsetof(Handle, magic), sizeof(Handle::magic)},
                                  {},
                                  {offsetof(Handle, secret), sizeof(Handle::secret)}}};

enum class Stage : uint32_t { kStart, kTcp, kSendInfo, kRecvInfo, kSendReady, kRecvReady, kDone };

using Clock = std::chrono::steady_clock;

// A random 64-bit value from the kernel's generator (listen secrets).
uint64_t randomSecret();

// One accepted TCP connection on its way to a receive comm.
struct Handshake {
  Stage stage = Stage::kRecvInfo;
  Fd fd;
  std::string peer;
  ConnInfo remote;
  ConnInfo local;
  size_t offset = 0;
  uint8_t ready = 0;
  bool authenticated = false;  // its hello carried this listen's secret
  Clock::time_point deadline;
  std::unique_ptr<RecvComm> comm;
};

struct ListenComm {
  // Connections in handshake at once; beyond it the oldest one that has not
  // proved itself is dropped, so a flood of strays cannot starve the peer.
  static constexpr size_t kMaxHandshakes = 64;

  int dev = 0;
  int trafficClass = -1;
  uint64_t secret = 0;
  Fd listener;
  std::vector<std::unique_ptr<Handshake>> handshakes;  // oldest first
};

// One connect in progress (the SDK keeps it between NCCL's calls).
struct ConnectState {
  Stage stage = Stage::kTcp;
  Fd fd;
  uint64_t secret = 0;  // the handle's, expected back in the receiver's answer
  ConnInfo local;
  ConnInfo remote;
  size_t offset = 0;
  uint8_t ready = 1;
  int sl = 0;
  int tc = 0;
  Clock::time_point deadline;
  std::unique_ptr<SendComm> comm;
};

// What an accept step needs from the plugin.
struct AcceptContext {
  const Config& config;
  const IbvApi& api;
  const Port& port;
  const ncclnet::Logger& log;
  ncclnet::WarnLimit& strays;  // one limit for every listen's stray lines
};

// SL and TC for a comm: the knob, else the communicator's traffic class,
// else 0 (NCCL's order).
int serviceLevel(const Config& config, int trafficClass);
int trafficClassFor(const Config& config, int trafficClass);

// One step of each side. kFailed carries the reason in *why.
Progress stepConnect(const Config& config, ConnectState& state, std::string* why);
// Takes new connections and steps every handshake; drops strays (one
// rate-limited WARN each). kDone: *out is a connected comm. kFailed: a peer
// that held the secret failed its handshake, the reason in *why.
Progress stepAccept(const AcceptContext& ctx, ListenComm& listen, std::unique_ptr<RecvComm>* out,
                    std::string* why);

}  // namespace ncclnet::ib
