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

#include "closing_sockets.hpp"
#include "ncclnet/nccl_protocols.hpp"
#include "ncclnet/published_knobs.hpp"
#include "stream.hpp"

namespace ncclnet::socket {

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
  // channels per NIC; inside NCCL, 2 to 4 threads per comm led NCCL's best
  // tuned Socket and 1 trailed it (docs/performance.md, eighth round).
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
  // retrying when the peer stopped. Below 8 cores retrying helpers starve
  // the progress thread (docs/performance.md), so there they sleep at once.
  return cores < 8 ? 0 : 2000;
}

int autoIdleSpinUs(int cores) {
  // NCCL hands each comm a message every 200 us or so during a collective;
  // a helper that sleeps in between is woken for every stripe, 15-25 us on
  // the GPU host, and a message waits for its slowest stripe. 1 ms keeps
  // helpers awake through a collective and lets them sleep soon after it
  // (docs/performance.md, eighth round). Below 8 cores helpers have no core
  // to spare.
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

namespace {

constexpr KnobChoice kFamilies[] = {
    {"any", AF_UNSPEC}, {"AF_INET", AF_INET}, {"AF_INET6", AF_INET6}};

// NCCL's Socket transport knobs keep its names and meanings; NCCLNET_* are
// this plugin's own. Counts and spins take kAuto (or -1) for "automatic",
// resolved by read() below.
constexpr Knob<Config> kKnobs[] = {
    stringKnob("NCCL_SOCKET_IFNAME", &Config::ifname, "",
               "interfaces to use: prefix list, '^' excludes, '=' matches exactly; "
               "empty: ib* if any, else every interface but lo and docker*"),
    enumKnob("NCCL_SOCKET_FAMILY", &Config::family, "any", kFamilies,
             "address family of the interfaces used"),
    intKnob("NCCL_SOCKET_NTHREADS", &Config::nThreads, kAuto, kAuto, kMaxThreads,
            "helper threads per comm (0: the progress thread moves the data; "
            "-2: automatic from the core count)"),
    intKnob("NCCL_NSOCKS_PERTHREAD", &Config::nSocksPerThread, kAuto, kAuto, kMaxStreams,
            "data sockets per helper thread (threads x sockets <= 64; -2, -1 or 0: automatic)"),
    sizeKnob("NCCL_SOCKET_INLINE", &Config::inlineBytes, 4096, 0, 1 << 20,
             "messages up to this many bytes travel with their header on the control "
             "socket, skipping the helper threads (unset: 65536 when comms have no helper "
             "thread, the automatic choice below 8 cores)"),
    sizeKnob("NCCL_SOCKET_MIN_TASKSIZE", &Config::minTaskBytes, 64 << 10, 4096, 1 << 30,
             "smallest stripe of a large message given a socket of its own (bytes)"),
    intKnob("NCCLNET_SOCKET_CONNECT_TIMEOUT_MS", &Config::connectTimeoutMs, 30000, 100, 3600 * 1000,
            "connect gives up (ncclRemoteError) when the listener stays unreachable this long"),
    intKnob("NCCLNET_SOCKET_HANDSHAKE_TIMEOUT_MS", &Config::handshakeTimeoutMs, 10000, 100,
            3600 * 1000,
            "accept drops a connection that has not completed its hello this long after "
            "arriving"),
    intKnob("NCCLNET_SOCKET_PEER_TIMEOUT_MS", &Config::peerTimeoutMs, 30000, 1000, 3600 * 1000,
            "a peer that stops acknowledging data (or keepalives) this long is declared dead "
            "(TCP_USER_TIMEOUT and keepalive)"),
    intKnob("NCCLNET_SOCKET_BUFFER_BYTES", &Config::socketBufferBytes, 0, 0, 1 << 30,
            "SO_SNDBUF/SO_RCVBUF of each data socket; 0 keeps the kernel's autotuning"),
    intKnob("NCCLNET_SOCKET_SPIN_US", &Config::spinUs, kAuto, kAuto, 10000,
            "a helper thread whose stripe stalls (its socket full, or empty while bytes are "
            "due) retries this many microseconds before it sleeps in poll() (-1 or -2: "
            "automatic, 0 below 8 cores, else 2000); none while the plugin runs more helper "
            "threads than there are cores or the machine more than 1.5 runnable threads per CPU"),
    intKnob("NCCLNET_SOCKET_IDLE_SPIN_US", &Config::idleSpinUs, kAuto, kAuto, 10000,
            "a helper thread with nothing queued looks for new stripes this many microseconds "
            "before it sleeps (0: it sleeps at once and costs no CPU between messages; -1 or "
            "-2: automatic, 0 below 8 cores, else 1000); none where the stalled retry is off "
            "for crowding"),
    flagKnob("NCCLNET_SOCKET_UNPACK", &Config::unpack, false,
             "1: offer NCCL's UNPACK device handle on receive comms (payload lands in bounce "
             "pages the GPU copies into place); needs NCCL_PROTO=Simple, NCCL_PAT_ENABLE=0 and a "
             "CUDA driver"),
    intKnob("NCCLNET_SOCKET_UNPACK_ARENA_MB", &Config::unpackArenaMiB, 8, 4, 256,
            "bounce pages per UNPACK receive comm, in MiB (at least 4: the largest receive)"),
    intKnob("NCCLNET_SOCKET_UNPACK_COMMS", &Config::unpackComms, 32, 1, 4096,
            "UNPACK receive comms per process the bounce pool has room for (the pool is "
            "pinned host memory of comms x arena, at most 4 GiB)"),
    flagKnob("NCCLNET_SOCKET_TIMELINE", &Config::timeline, false,
             "1: each comm logs, when it closes, how long its messages waited for the peer, "
             "moved on the sockets, and waited for test(), and how long NCCL's calls into it "
             "took (averages, INFO NET)"),
    stringKnob("NCCLNET_SOCKET_TRACE_DIR", &Config::traceDir, "",
               "a directory: each comm writes every message's time stamps there when it closes "
               "(one file per comm; scripts/socket_trace.py reads them)"),
};
// Listed by `ncclnet-info --params` from the library file, without init.
NCCLNET_PUBLISH_KNOBS(kKnobs);

// Counts and spins left automatic (negative, or 0 sockets) take the values
// for `cores`; NCCL's caps apply to what the user gave as well.
void resolveAutomatic(int cores, Config* c) {
  int autoT = 1, autoS = 1;
  autoThreads(cores, &autoT, &autoS);
  bool threadsSet = c->nThreads >= 0;
  bool socksSet = c->nSocksPerThread > 0;
  if (!threadsSet) c->nThreads = autoT;
  if (!socksSet) c->nSocksPerThread = autoS;
  c->threadsAutomatic = !threadsSet && !socksSet;
  capThreads(&c->nThreads, &c->nSocksPerThread);
  if (c->spinUs < 0) c->spinUs = autoSpinUs(cores);
  if (c->idleSpinUs < 0) c->idleSpinUs = autoIdleSpinUs(cores);
  c->unpackArenaBytes = static_cast<size_t>(c->unpackArenaMiB) << 20;
}

// A trace directory must exist and take files before the first comm closes.
ncclResult_t checkTraceDir(const Logger& log, const std::string& dir) {
  if (dir.empty()) return ncclSuccess;
  struct stat st {};
  const char* why = nullptr;
  if (stat(dir.c_str(), &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISDIR(st.st_mode)) {
    why = "not a directory";
  } else if (access(dir.c_str(), W_OK | X_OK) != 0) {
    why = std::strerror(errno);
  }
  if (why == nullptr) return ncclSuccess;
  NCCLNET_WARN(log,
               "NCCLNET_SOCKET_TRACE_DIR=%s cannot take trace files (%s); create it, make it "
               "writable, or unset the knob",
               dir.c_str(), why);
  return ncclInvalidUsage;
}

}  // namespace

ncclResult_t Config::read(ParamTable& params, int cores, Config* out) {
  Config c;
  ncclResult_t res = readKnobs(params, kKnobs, &c);
  if (res != ncclSuccess) return res;
  resolveAutomatic(cores, &c);
  // Without helper threads the caller moves every byte anyway: a message up
  // to a stripe's worth then goes in one sendmsg() with its header rather
  // than as a header and a stripe on two sockets, a higher message rate up
  // to 64 KiB (docs/performance.md, ninth round).
  bool inlineSet = false;
  for (const ParamInfo& p : params.all()) {
    if (p.name == "NCCL_SOCKET_INLINE") inlineSet = p.fromEnv;
  }
  if (!inlineSet && c.nThreads == 0) c.inlineBytes = kInlineWithoutHelpers;
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
  if (c.unpack) {
    // NCCL's PAT kernels (allgather and reduce-scatter with one rank per
    // node) read the step buffer in place too, and NCCL 2.24 to 2.30 do not
    // keep PAT off for an UNPACK device by themselves (ncclnet/nccl_protocols.hpp).
    const char* pat = std::getenv("NCCL_PAT_ENABLE");
    if (!ncclPatOff(pat)) {
      NCCLNET_WARN(params.logger(),
                   "NCCLNET_SOCKET_UNPACK=1 ignored: NCCL_PAT_ENABLE is '%s', and UNPACK needs "
                   "NCCL_PAT_ENABLE=0 (NCCL's PAT kernels read received data in place, and NCCL "
                   "2.24 to 2.30 pick PAT for an UNPACK device when each node has one rank); "
                   "receive comms stay in host mode",
                   pat != nullptr ? pat : "");
      c.unpack = false;
    }
  }

  // The machine's CPUs, not the process's: the runnable count is the machine's.
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  c.helperCensus = std::make_shared<HelperCensus>(
      cores, std::make_unique<MachineLoad>("/proc/loadavg",
                                           online > 0 ? static_cast<int>(online) : cores));

  c.closingSockets = std::make_shared<ClosingSockets>();

  res = checkTraceDir(params.logger(), c.traceDir);
  if (res != ncclSuccess) return res;

  *out = c;
  return ncclSuccess;
}

std::vector<Interface> findDevices(const Config& config, const Logger& log) {
  return findInterfaces(config.ifname, config.family, Loopback::OnlyWhenNamed, log);
}

}  // namespace ncclnet::socket
