// SPDX-License-Identifier: Apache-2.0
// sdk-socket: reading and resolving the knobs.
#include "config.hpp"

#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ncclnet/nccl_protocols.hpp"
#include "stream.hpp"

namespace ncclnet::socketnet {

void autoThreads(int cores, int* nThreads, int* nSocksPerThread) {
  // Below 8 cores a helper thread has no core of its own: NCCL's progress
  // thread spins in test() and would compete with it, so the progress thread
  // moves the data itself over one socket (on 2 cores this matched raw TCP,
  // where 2 sockets or a helper thread lost 10-40%: docs/performance.md).
  // From 8 cores on, one socket per 10 cores, 1 to 4, each with a thread of
  // its own. One thread per socket: on loopback the sending thread's send()
  // also runs the receiving end's TCP work, so a thread serving two sockets
  // in turn halves a message's parallelism. Few threads: helpers stay awake
  // between messages (autoIdleSpinUs), and a rank has 4 comms on NCCL's 2
  // channels per NIC; on 32 cores with 2 ranks, 3 threads per comm led NCCL's
  // best tuned Socket by 1.10x, 2 by 1.08x, 4 by 1.02x, 1 trailed it.
  if (cores < 8) {
    *nThreads = 0;
    *nSocksPerThread = 1;
  } else {
    *nThreads = std::clamp(cores / 10, 1, 4);
    *nSocksPerThread = 1;
  }
}

int usableCores() {
  // In a container or under taskset the process gets fewer CPUs than the
  // machine has online, and helper threads (their count, and whether they
  // spin) must fit what it really gets.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

int autoSpinUs(int cores) {
  // A stalled stripe's bytes are on the way (its header arrived, or the
  // peer is draining the socket): retrying for them saves a wake-up from
  // poll(), 20 us and more on a many-core host, per stall. 2 ms bounds the
  // retrying when the peer stopped. Below 8 cores retrying helpers would
  // starve the progress thread (measured: 10x slower), so there they sleep
  // at once.
  return cores < 8 ? 0 : 2000;
}

int autoIdleSpinUs(int cores) {
  // NCCL hands each comm a message every 200 us or so during a collective;
  // a helper that sleeps in between is woken for every stripe, 15-25 us on
  // the GPU host, and a message waits for its slowest stripe. 1 ms keeps
  // helpers awake through a collective and lets them sleep soon after it
  // (2 threads per comm: 1.08x NCCL's best tuned Socket with it, 1.00x
  // without). Below 8 cores helpers have no core to spare.
  return cores < 8 ? 0 : 1000;
}

void capThreads(int* nThreads, int* nSocksPerThread) {
  *nThreads = std::min(*nThreads, kMaxThreads);
  *nSocksPerThread = std::max(*nSocksPerThread, 1);
  int drivers = std::max(*nThreads, 1);
  if (drivers * *nSocksPerThread > kMaxStreams) *nSocksPerThread = kMaxStreams / drivers;
}

Patience Config::patience() const {
  return Patience{std::chrono::microseconds(spinUs), std::chrono::microseconds(idleSpinUs)};
}

ncclResult_t Config::read(ParamTable& params, int cores, Config* out) {
  Config c;
  ncclResult_t res =
      params.readString("NCCL_SOCKET_IFNAME", "",
                        "interfaces to use: prefix list, '^' excludes, '=' matches exactly; "
                        "empty: ib* if any, else every interface but lo and docker*",
                        &c.ifname);
  if (res != ncclSuccess) return res;

  std::string family;
  res = params.readChoice("NCCL_SOCKET_FAMILY", "any", {"any", "AF_INET", "AF_INET6"},
                          "address family of the interfaces used", &family);
  if (res != ncclSuccess) return res;
  c.family = family == "AF_INET" ? AF_INET : family == "AF_INET6" ? AF_INET6 : AF_UNSPEC;

  int autoT = 1, autoS = 1;
  autoThreads(cores, &autoT, &autoS);
  int64_t value = 0;
  res = params.readInt("NCCL_SOCKET_NTHREADS", kAuto,
                       "helper threads per comm, 0..16 (0: the progress thread moves the data; "
                       "-2: automatic from the core count)",
                       &value, kAuto, kMaxThreads);
  if (res != ncclSuccess) return res;
  if (value == -1) value = kAuto;
  bool threadsSet = value != kAuto;
  c.nThreads = threadsSet ? static_cast<int>(value) : autoT;

  res = params.readInt("NCCL_NSOCKS_PERTHREAD", kAuto,
                       "data sockets per helper thread, 1..64 (threads x sockets <= 64; "
                       "-2: automatic)",
                       &value, kAuto, kMaxStreams);
  if (res != ncclSuccess) return res;
  if (value == -1 || value == 0) value = kAuto;
  c.nSocksPerThread = value == kAuto ? autoS : static_cast<int>(value);
  c.threadsAutomatic = !threadsSet && value == kAuto;
  capThreads(&c.nThreads, &c.nSocksPerThread);

  res = params.readInt("NCCL_SOCKET_INLINE", 4096,
                       "messages up to this many bytes travel with their header on the control "
                       "socket, skipping the helper threads",
                       &value, 0, 1 << 20);
  if (res != ncclSuccess) return res;
  c.inlineBytes = static_cast<size_t>(value);

  res = params.readInt("NCCL_SOCKET_MIN_TASKSIZE", 64 << 10,
                       "smallest stripe of a large message given a socket of its own (bytes)",
                       &value, 4096, 1 << 30);
  if (res != ncclSuccess) return res;
  c.minTaskBytes = static_cast<size_t>(value);

  res = params.readInt("NCCLNET_SOCKET_CONNECT_TIMEOUT_MS", 30000,
                       "connect gives up (ncclRemoteError) when the listener stays unreachable "
                       "this long",
                       &value, 100, 3600 * 1000);
  if (res != ncclSuccess) return res;
  c.connectTimeoutMs = static_cast<int>(value);

  res = params.readInt("NCCLNET_SOCKET_HANDSHAKE_TIMEOUT_MS", 10000,
                       "accept drops a connection that has not completed its hello this long "
                       "after arriving",
                       &value, 100, 3600 * 1000);
  if (res != ncclSuccess) return res;
  c.handshakeTimeoutMs = static_cast<int>(value);

  res = params.readInt("NCCLNET_SOCKET_PEER_TIMEOUT_MS", 30000,
                       "a peer that stops acknowledging data (or keepalives) this long is "
                       "declared dead (TCP_USER_TIMEOUT and keepalive)",
                       &value, 1000, 3600 * 1000);
  if (res != ncclSuccess) return res;
  c.peerTimeoutMs = static_cast<int>(value);

  res = params.readInt("NCCLNET_SOCKET_BUFFER_BYTES", 0,
                       "SO_SNDBUF/SO_RCVBUF of each data socket; 0 keeps the kernel's autotuning",
                       &value, 0, 1 << 30);
  if (res != ncclSuccess) return res;
  c.socketBufferBytes = static_cast<int>(value);

  res = params.readInt(
      "NCCLNET_SOCKET_SPIN_US", kAuto,
      "a helper thread whose stripe stalls (its socket full, or empty while "
      "bytes are due) retries this many microseconds before it sleeps in "
      "poll(), 0..10000 (-1 or -2: automatic, 0 below 8 cores, else 2000); none while "
      "the plugin runs more helper threads than there are cores or the machine more than "
      "1.5 runnable threads per CPU",
      &value, kAuto, 10000);
  if (res != ncclSuccess) return res;
  c.spinUs = value < 0 ? autoSpinUs(cores) : static_cast<int>(value);

  res = params.readInt("NCCLNET_SOCKET_IDLE_SPIN_US", kAuto,
                       "a helper thread with nothing queued looks for new stripes this many "
                       "microseconds before it sleeps, 0..10000 (0: it sleeps at once and "
                       "costs no CPU between messages; -1 or -2: automatic, 0 below 8 cores, else "
                       "1000); none where the stalled retry is off for crowding",
                       &value, kAuto, 10000);
  if (res != ncclSuccess) return res;
  c.idleSpinUs = value < 0 ? autoIdleSpinUs(cores) : static_cast<int>(value);

  res = params.readInt("NCCLNET_SOCKET_UNPACK", 0,
                       "1: offer NCCL's UNPACK device handle on receive comms (payload lands in "
                       "bounce pages the GPU copies into place); needs NCCL_PROTO=Simple and a "
                       "CUDA driver",
                       &value, 0, 1);
  if (res != ncclSuccess) return res;
  c.unpack = value == 1;
  res = params.readInt("NCCLNET_SOCKET_UNPACK_ARENA_MB", 8,
                       "bounce pages per UNPACK receive comm, in MiB (at least 4: the largest "
                       "receive)",
                       &value, 4, 256);
  if (res != ncclSuccess) return res;
  c.unpackArenaBytes = static_cast<size_t>(value) << 20;
  res = params.readInt("NCCLNET_SOCKET_UNPACK_COMMS", 32,
                       "UNPACK receive comms per process the bounce pool has room for (the pool "
                       "is pinned host memory of comms x arena, at most 4 GiB)",
                       &value, 1, 4096);
  if (res != ncclSuccess) return res;
  c.unpackComms = static_cast<int>(value);
  if (c.unpack && c.unpackArenaBytes * static_cast<size_t>(c.unpackComms) > (size_t(4) << 30)) {
    NCCLNET_WARN(params.logger(),
                 "NCCLNET_SOCKET_UNPACK_ARENA_MB x NCCLNET_SOCKET_UNPACK_COMMS = %zu MiB is over "
                 "the 4 GiB a bounce pool can address; lower one of them",
                 (c.unpackArenaBytes >> 20) * static_cast<size_t>(c.unpackComms));
    return ncclInvalidUsage;
  }
  if (c.unpack) {
    // NCCL's LL and LL128 receive kernels read the step buffer in place:
    // their payload cannot wait in bounce pages, so NCCL must use SIMPLE only.
    const char* proto = std::getenv("NCCL_PROTO");
    NcclProtocols enabled;
    if (!parseNcclProto(proto, &enabled) || !enabled.simpleOnly()) {
      NCCLNET_WARN(params.logger(),
                   "NCCLNET_SOCKET_UNPACK=1 ignored: NCCL_PROTO is '%s', and UNPACK needs "
                   "NCCL_PROTO=Simple (NCCL's LL and LL128 kernels read received data in place, "
                   "without an unpack step); receive comms stay in host mode",
                   proto != nullptr ? proto : "");
      c.unpack = false;
    }
  }

  // The machine's CPUs, not the process's: the runnable count is the machine's.
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  c.helperCensus = std::make_shared<HelperCensus>(
      cores, std::make_unique<MachineLoad>("/proc/loadavg",
                                           online > 0 ? static_cast<int>(online) : cores));

  res = params.readInt("NCCLNET_SOCKET_TIMELINE", 0,
                       "1: each comm logs, when it closes, how long its messages waited for the "
                       "peer, moved on the sockets, and waited for test(), and how long NCCL's "
                       "calls into it took (averages, INFO NET)",
                       &value, 0, 1);
  if (res != ncclSuccess) return res;
  c.timeline = value == 1;

  res = params.readString("NCCLNET_SOCKET_TRACE_DIR", "",
                          "a directory: each comm writes every message's time stamps there when "
                          "it closes (one file per comm; scripts/socket_trace.py reads them)",
                          &c.traceDir);
  if (res != ncclSuccess) return res;
  if (!c.traceDir.empty()) {
    struct stat st {};
    const char* why = nullptr;
    if (stat(c.traceDir.c_str(), &st) != 0) {
      why = std::strerror(errno);
    } else if (!S_ISDIR(st.st_mode)) {
      why = "not a directory";
    } else if (access(c.traceDir.c_str(), W_OK | X_OK) != 0) {
      why = std::strerror(errno);
    }
    if (why != nullptr) {
      NCCLNET_WARN(params.logger(),
                   "NCCLNET_SOCKET_TRACE_DIR=%s cannot take trace files (%s); create it, make it "
                   "writable, or unset the knob",
                   c.traceDir.c_str(), why);
      return ncclInvalidUsage;
    }
  }

  *out = c;
  return ncclSuccess;
}

}  // namespace ncclnet::socketnet
