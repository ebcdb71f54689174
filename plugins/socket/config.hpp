// SPDX-License-Identifier: Apache-2.0
// sdk-socket: every knob the plugin reads, resolved once at init.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ncclnet/interfaces.hpp"
#include "ncclnet/params.hpp"
#include "timeline.hpp"

namespace ncclnet::socket {

class HelperCensus;
class ClosingSockets;
struct Patience;

// NCCL's own caps for its Socket transport: at most 16 helper threads and
// 64 data sockets per comm.
constexpr int kMaxThreads = 16;
constexpr int kMaxStreams = 64;
constexpr int kAuto = -2;  // NCCL's spelling of "pick a default"
// NCCL_SOCKET_INLINE when unset and comms have no helper thread: the
// default stripe minimum (a smaller message would be one stripe anyway).
constexpr size_t kInlineWithoutHelpers = 64 << 10;

struct Config {
  std::string ifname;             // NCCL_SOCKET_IFNAME ("" = automatic choice)
  int family = 0;                 // AF_UNSPEC, AF_INET or AF_INET6
  int nThreads = 1;               // helper threads per comm (0: the caller moves the data)
  int nSocksPerThread = 1;        // data sockets per helper thread
  bool threadsAutomatic = false;  // both counts are the automatic ones (comms may start fewer)
  size_t inlineBytes = 0;         // payloads up to this size ride with their header
  size_t minTaskBytes = 0;        // smallest stripe worth a socket of its own
  int connectTimeoutMs = 0;       // connect() retries (refused, unreachable) give up after this
  int handshakeTimeoutMs = 0;     // an accepted socket must say hello within this
  int peerTimeoutMs = 0;          // TCP_USER_TIMEOUT / keepalive bound on a silent dead peer
  int socketBufferBytes = 0;      // SO_SNDBUF/SO_RCVBUF of data sockets (0: kernel autotuning)
  int spinUs = 0;                 // helpers retry a stalled stripe this long before sleeping
  int idleSpinUs = 0;             // helpers with nothing queued look for work this long first
  bool unpack = false;            // receive comms offer NCCL's UNPACK device handle
  int unpackArenaMiB = 0;         // NCCLNET_SOCKET_UNPACK_ARENA_MB as given
  size_t unpackArenaBytes = 0;    // bounce pages per UNPACK receive comm
  int unpackComms = 0;            // UNPACK receive comms the bounce pool has room for
  bool timeline = false;          // comms log where their messages spent time when they close
  std::string traceDir;           // comms write every message's stamps here when they close
  // Not a knob: the helper threads of this plugin instance, counted against
  // its cores, and the machine's load (helpers stop retrying once either is
  // crowded).
  std::shared_ptr<HelperCensus> helperCensus;
  // Not a knob: the control sockets of this instance's closed send comms,
  // kept until their receivers close (closing_sockets.hpp).
  std::shared_ptr<ClosingSockets> closingSockets;

  // Data sockets per comm: every helper thread drives nSocksPerThread of
  // them; without helper threads the caller drives nSocksPerThread.
  int streams() const { return (nThreads > 0 ? nThreads : 1) * nSocksPerThread; }

  TimelineOptions timelineOptions() const { return TimelineOptions{timeline, traceDir}; }
  Patience patience() const;  // the two spins, for the helper threads

  // Reads every knob (the table in config.cc) into `params`, so tools can
  // list them, and resolves the automatic values for `cores` online CPUs.
  static ncclResult_t read(ParamTable& params, int cores, Config* out);
};

// The devices of every table of this library (net and RMA/GIN alike, in
// the same order: NCCL 2.28 hands GIN the net plugin's device indices,
// plugin/net.cc): the interfaces NCCL_SOCKET_IFNAME and NCCL_SOCKET_FAMILY
// keep, loopback only when named.
std::vector<Interface> findDevices(const Config& config, const Logger& log);

// The automatic helper-thread and socket counts for `cores` CPUs, before the
// caps. Exposed for tests and for the documentation's table.
void autoThreads(int cores, int* nThreads, int* nSocksPerThread);

// The CPUs this process may run on (its affinity mask; the online count
// where that cannot be read): what the automatic values are sized for.
int usableCores();

// The automatic NCCLNET_SOCKET_SPIN_US for `cores` CPUs.
int autoSpinUs(int cores);

// The automatic NCCLNET_SOCKET_IDLE_SPIN_US for `cores` CPUs.
int autoIdleSpinUs(int cores);

// Applies NCCL's caps: threads <= 16, threads x sockets <= 64 (sockets per
// thread shrink first, as NCCL does).
void capThreads(int* nThreads, int* nSocksPerThread);

}  // namespace ncclnet::socket
