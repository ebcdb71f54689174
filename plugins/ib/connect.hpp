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
#include <cstdint>
#include <memory>
#include <string>

#include "comm.hpp"
#include "oob.hpp"

namespace sdkib {

constexpr uint64_t kHandleMagic = 0x7364'6b69'6268'6e64ull;  // "sdkibhnd"

// What listen() writes into NCCL's 128-byte handle. `pending` is this
// process's connect state once connect() has started (NCCL hands the same
// buffer back on every retry, so the state is found again).
struct Handle {
  uint64_t magic;
  union {
    sockaddr_in v4;
    sockaddr_in6 v6;
  } addr;
  uint32_t stage;
  uint64_t pending;
};
static_assert(sizeof(Handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle must fit NCCL's buffer");

enum class Stage : uint32_t { kStart, kTcp, kSendInfo, kRecvInfo, kSendReady, kRecvReady, kDone };

using Clock = std::chrono::steady_clock;

struct ListenComm {
  int dev = 0;
  int trafficClass = -1;
  Fd listener;
  // The one accept in progress; restart() readies the listen for the next
  // connection once it has been accepted (or has failed).
  Stage stage = Stage::kTcp;
  Fd fd;
  ConnInfo remote;
  ConnInfo local;
  size_t offset = 0;
  uint8_t ready = 0;
  Clock::time_point deadline;
  std::unique_ptr<RecvComm> comm;

  void restart() {
    stage = Stage::kTcp;
    fd = Fd();
    remote = ConnInfo{};
    local = ConnInfo{};
    offset = 0;
    ready = 0;
    comm.reset();
  }
};

struct ConnectState {
  Stage stage = Stage::kTcp;
  Fd fd;
  ConnInfo local;
  ConnInfo remote;
  size_t offset = 0;
  uint8_t ready = 1;
  int sl = 0;
  int tc = 0;
  Clock::time_point deadline;
  std::unique_ptr<SendComm> comm;
};

// SL and TC for a comm: the knob, else the communicator's traffic class,
// else 0 (NCCL's order).
int serviceLevel(const Config& config, int trafficClass);
int trafficClassFor(const Config& config, int trafficClass);

// One step of each side. kFailed carries the reason in *why.
Progress stepConnect(const Config& config, ConnectState& state, std::string* why);
Progress stepAccept(const Config& config, ListenComm& listen, const IbvApi& api, const Port& port,
                    const ncclnet::Logger& log, RequestIndex& index, std::string* why);

}  // namespace sdkib
