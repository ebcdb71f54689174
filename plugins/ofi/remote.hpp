// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: one peer endpoint (an address in the AV), and whether it still
// answers.
//
// Providers do not fail operations when the peer's process dies: tcp;ofi_rxm
// drops its connection but leaves posted receives, and sends the socket
// already took, waiting for ever; a partition gives no error at all. So while
// a comm to a peer has operations in flight, the endpoint pings the peer: a
// small tagged message that the peer's endpoint answers from its next
// progress call, or from its watchdog thread when the application calls
// nothing for a tick: whatever its application is doing. A ping the provider cannot
// deliver means the peer's process is gone (its kernel refuses the new
// connection: milliseconds); a peer that answers nothing for the peer
// timeout is unreachable. Either way the peer is declared gone once, and
// every comm that used it fails from then on (Comm::gone).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace ncclnet::ofi {

using Clock = std::chrono::steady_clock;

// Room for an endpoint address in handles and connect messages. Wide enough
// for every provider address we know of (sockaddr_in6: 28 bytes, efa: 32,
// verbs;ofi_rxm with IB addressing: 48), and it keeps the handle within
// NCCL's 128 bytes.
constexpr size_t kMaxAddress = 96;

// Whatever waits for libfabric completions: requests, listens, connects,
// pings.
class CompletionSink {
 public:
  virtual void onCompletion(int index, const fi_cq_tagged_entry& entry) = 0;
  // `text` is fi_strerror plus the provider's own explanation.
  virtual void onError(int index, const fi_cq_err_entry& entry, const std::string& text) = 0;

 protected:
  ~CompletionSink() = default;
};

// The context of one libfabric operation. The provider hands back the
// pointer it was given, which is the address of fiContext and so of the
// whole struct (standard layout, fiContext first).
struct OpContext {
  fi_context2 fiContext;
  CompletionSink* sink;
  int index;
};
static_assert(std::is_standard_layout_v<OpContext>, "op_context must map back to OpContext");

constexpr uint32_t kProbeMagic = 0x4f464950;  // "OFIP"
enum ProbeKind : uint16_t { kPing = 1, kPong = 2 };

// A ping or its answer, tagged TagLayout::connect(0) (listen ids start at 1).
struct ProbeMessage {
  uint32_t magic;
  uint16_t kind;
  uint16_t addressLength;        // ping: where to answer
  uint64_t token;                // ping: the pinger's id for the peer; pong: echoed
  uint8_t address[kMaxAddress];  // ping: the pinger's endpoint address
};

class Comm;
class Endpoint;

class Remote final : public CompletionSink {
 public:
  // `self`: the endpoint's own address, which is never pinged.
  Remote(Endpoint* endpoint, fi_addr_t addr, uint64_t id, std::string name, bool self);
  ~Remote();
  Remote(const Remote&) = delete;
  Remote& operator=(const Remote&) = delete;

  fi_addr_t addr() const { return addr_; }
  uint64_t id() const { return id_; }
  const std::string& name() const { return name_; }
  // How many times this peer was declared gone. A comm remembers the count
  // it was created under: a later death is its own.
  uint32_t deaths() const { return deaths_; }

  void attach(Comm* comm) { comms_.push_back(comm); }
  void detach(Comm* comm);
  // A completion on one of its comms: the peer (or at least the provider's
  // connection to it) is moving. One increment, no clock read.
  void progressed() { progress_++; }

  // Called when the watchdog's duties are due: pings the peer while a live
  // comm of it waits,
  // and declares it gone when it stays silent for the peer timeout.
  void watch(Clock::time_point now);
  void heard(Clock::time_point now) { lastHeard_ = now; }
  // Answers a ping of this peer (at most one answer in flight).
  void answer(uint64_t token);
  void declareGone(const std::string& why);

  void onCompletion(int index, const fi_cq_tagged_entry& entry) override;
  void onError(int index, const fi_cq_err_entry& entry, const std::string& text) override;

 private:
  enum { kPingOp = 0, kPongOp = 1 };
  bool busy() const;
  // 0, -FI_EAGAIN, or the provider's error for the send.
  ssize_t post(ProbeMessage* message, OpContext* op, void** control);

  Endpoint* endpoint_;
  fi_addr_t addr_;
  uint64_t id_;
  std::string name_;
  bool self_;
  uint32_t deaths_ = 0;
  std::vector<Comm*> comms_;
  uint64_t progress_ = 0;      // completions on its comms
  uint64_t progressSeen_ = 0;  // progress_ at the last watch
  bool watching_ = false;      // a live comm was waiting at the last watch
  bool pingInFlight_ = false;
  bool pongInFlight_ = false;
  // tcp;ofi_rxm answers -FI_EAGAIN to every send once the peer's port
  // refuses connections: a ping refused for 4 intervals, while nothing of
  // the peer's completes, means the peer cannot be reached.
  bool refused_ = false;
  Clock::time_point refusedSince_{};
  Clock::time_point lastHeard_{};
  Clock::time_point lastPing_{};
  ProbeMessage ping_{};
  ProbeMessage pong_{};
  OpContext ops_[2] = {};
  void* pingControl_ = nullptr;  // MrCache entries, where the provider wants FI_MR_LOCAL
  void* pongControl_ = nullptr;
};

}  // namespace ncclnet::ofi
