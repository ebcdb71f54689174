// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: one-way bandwidth (a window of messages in flight) and
// ping-pong latency of any net plugin, each next to a baseline between the
// same two processes: raw TCP with the same number of streams, or raw
// libfabric on the same provider with the same window.
//
//   ncclnet-bench --plugin ./libnccl-net-sdk-socket.so [--tcp-streams 2]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ncclnet/host/build_info.hpp"
#include "pair.hpp"
#include "plugin_peer.hpp"
#include "tcp_peer.hpp"
#ifdef NCCLNET_BENCH_HAVE_FABRIC
#include "fabric_peer.hpp"
#endif

namespace bench {
namespace {

struct Options {
  PluginOptions plugin;
  size_t minSize = 8;
  size_t maxSize = 64 << 20;
  int window = 16;
  int reps = 3;
  int tcpStreams = 0;  // 0: the plugin's (sdk-socket knobs), else 1
  std::string tcpHost = "127.0.0.1";
  bool tcp = true;               // run a baseline at all
  std::string baseline = "tcp";  // tcp, or fabric (raw libfabric; needs libfabric)
  bool quick = false;
  int latencyIters = 20000;
};

void usage() {
  std::printf(
      "usage: ncclnet-bench --plugin PATH|NAME [options]\n"
      "  --plugin P        NCCL_NET_PLUGIN value used to load the plugin (required)\n"
      "  --net NAME        NCCL_NET: only a table with this name\n"
      "  --abi N           load through ncclNetPlugin_vN only\n"
      "  --dev N           device (default 0)\n"
      "  --min SIZE        smallest message (default 8)\n"
      "  --max SIZE        largest message (default 64M)\n"
      "  --window N        messages in flight (default 16)\n"
      "  --reps N          best of N runs per point (default 3)\n"
      "  --version         print the version and exit\n"
      "  --tcp-streams N   baseline connections (default: NCCL_SOCKET_NTHREADS x\n"
      "                    NCCL_NSOCKS_PERTHREAD when both are set, else 1)\n"
      "  --tcp-host ADDR   baseline address (default 127.0.0.1)\n"
      "  --baseline tcp|fabric  raw TCP (default), or raw libfabric tagged RDM on the\n"
      "                    provider FI_PROVIDER names (default tcp;ofi_rxm)\n"
      "  --no-tcp          skip the baseline\n"
      "  --latency-iters N ping-pong round trips (default 20000)\n"
      "  --quick           fewer iterations (smoke test)\n"
      "Sizes take K, M, G suffixes (powers of 2).\n");
}

bool parseSize(const char* text, size_t* out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text) return false;
  switch (*end) {
    case 'K':
    case 'k':
      v <<= 10;
      end++;
      break;
    case 'M':
    case 'm':
      v <<= 20;
      end++;
      break;
    case 'G':
    case 'g':
      v <<= 30;
      end++;
      break;
    default: break;
  }
  if (*end != '\0') return false;
  *out = v;
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--help" || a == "-h") return false;
    if (a == "--no-tcp") {
      o->tcp = false;
      continue;
    }
    if (a == "--quick") {
      o->quick = true;
      continue;
    }
    if ((v = value()) == nullptr) return false;
    if (a == "--plugin")
      o->plugin.pluginList = v;
    else if (a == "--net")
      o->plugin.netName = std::string(v);
    else if (a == "--abi")
      o->plugin.abi = std::atoi(v);
    else if (a == "--dev")
      o->plugin.dev = std::atoi(v);
    else if (a == "--min") {
      if (!parseSize(v, &o->minSize)) return false;
    } else if (a == "--max") {
      if (!parseSize(v, &o->maxSize)) return false;
    } else if (a == "--window")
      o->window = std::max(1, std::atoi(v));
    else if (a == "--reps")
      o->reps = std::max(1, std::atoi(v));
    else if (a == "--tcp-streams")
      o->tcpStreams = std::max(1, std::atoi(v));
    else if (a == "--tcp-host")
      o->tcpHost = v;
    else if (a == "--baseline") {
      o->baseline = v;
      if (o->baseline != "tcp" && o->baseline != "fabric") return false;
    } else if (a == "--latency-iters")
      o->latencyIters = std::max(1, std::atoi(v));
    else
      return false;
  }
  return !o->plugin.pluginList.empty() && o->minSize <= o->maxSize;
}

std::vector<size_t> sizesFor(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = std::max<size_t>(o.minSize, 1); s < o.maxSize; s *= 4) sizes.push_back(s);
  sizes.push_back(o.maxSize);
  return sizes;
}

int itersFor(const Options& o, size_t size) {
  double target = o.quick ? double(32 << 20) : double(1u << 30);
  int cap = o.quick ? 2000 : 40000;
  return std::clamp(static_cast<int>(target / double(size)), o.quick ? 4 : 16, cap);
}

const std::vector<size_t> kLatencySizes = {8, 1024, 65536};

struct Results {
  std::string name;
  std::vector<double> gbps;       // per size, best of reps
  std::vector<double> latencyUs;  // per latency size: half round trip, best of reps
};

// Runs the whole schedule over the peers `make` builds in both processes.
// The parent sends and measures; the child receives and confirms.
bool measure(const Options& o,
             const std::function<std::unique_ptr<Peer>(Pair&, std::string*)>& make, Results* out) {
  std::vector<size_t> sizes = sizesFor(o);
  int latencyIters = o.quick ? 200 : o.latencyIters;
  Pair pair([&](Pair& p) {
    std::string why;
    std::unique_ptr<Peer> peer = make(p, &why);
    if (!peer) {
      std::fprintf(stderr, "ncclnet-bench (receiver): %s\n", why.c_str());
      return 1;
    }
    char done = 'd';
    for (size_t size : sizes) {
      for (int r = 0; r < o.reps; r++) {
        if (!p.barrier() || !peer->stream(false, size, itersFor(o, size), o.window) ||
            !p.send(&done, 1)) {
          return 2;
        }
      }
    }
    for (size_t size : kLatencySizes) {
      for (int r = 0; r < o.reps; r++) {
        if (!p.barrier() || !peer->pingpong(false, size, latencyIters)) return 3;
      }
    }
    return 0;
  });
  if (!pair.ok()) return false;
  std::string why;
  std::unique_ptr<Peer> peer = make(pair, &why);
  if (!peer) {
    std::fprintf(stderr, "ncclnet-bench: %s\n", why.c_str());
    return false;
  }
  out->name = peer->describe();
  for (size_t size : sizes) {
    int iters = itersFor(o, size);
    double best = 0;
    for (int r = 0; r < o.reps; r++) {
      char done = 0;
      if (!pair.barrier()) return false;
      auto start = Clock::now();
      if (!peer->stream(true, size, iters, o.window) || !pair.recv(&done, 1, 600)) return false;
      best = std::max(best, double(size) * iters / secondsSince(start) / 1e9);
    }
    out->gbps.push_back(best);
  }
  for (size_t size : kLatencySizes) {
    double best = 1e300;
    for (int r = 0; r < o.reps; r++) {
      if (!pair.barrier()) return false;
      auto start = Clock::now();
      if (!peer->pingpong(true, size, latencyIters)) return false;
      best = std::min(best, secondsSince(start) / latencyIters / 2 * 1e6);
    }
    out->latencyUs.push_back(best);
  }
  peer.reset();
  return pair.join() == 0;
}

std::string human(size_t size) {
  char text[32];
  if (size >= (1u << 20) && size % (1u << 20) == 0)
    std::snprintf(text, sizeof(text), "%zu MiB", size >> 20);
  else if (size >= 1024 && size % 1024 == 0)
    std::snprintf(text, sizeof(text), "%zu KiB", size >> 10);
  else
    std::snprintf(text, sizeof(text), "%zu B", size);
  return text;
}

int defaultTcpStreams() {
  const char* threads = std::getenv("NCCL_SOCKET_NTHREADS");
  const char* socks = std::getenv("NCCL_NSOCKS_PERTHREAD");
  if (threads == nullptr || socks == nullptr) return 1;
  return std::clamp(std::max(std::atoi(threads), 1) * std::max(std::atoi(socks), 1), 1, 64);
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  using namespace bench;
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("%s\n", ncclnet::host::versionLine("ncclnet-bench").c_str());
    return 0;
  }
  Options o;
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  if (o.tcpStreams == 0) o.tcpStreams = defaultTcpStreams();
  o.plugin.maxSize = std::max(o.maxSize, kLatencySizes.back());
  o.plugin.buffers = std::clamp(o.window, 1, 4);
  size_t bufferBytes = o.plugin.maxSize;

  Results plugin, tcp;
  if (!measure(
          o,
          [&](Pair& p, std::string* why) -> std::unique_ptr<Peer> {
            return PluginPeer::open(o.plugin, p, why);
          },
          &plugin)) {
    std::fprintf(stderr, "ncclnet-bench: the plugin run failed\n");
    return 1;
  }
  auto openBaseline = [&](Pair& p, std::string* why) -> std::unique_ptr<Peer> {
#ifdef NCCLNET_BENCH_HAVE_FABRIC
    if (o.baseline == "fabric") return FabricPeer::open(bufferBytes, o.window, p, why);
#endif
    if (o.baseline == "fabric") {
      *why = "this ncclnet-bench was built without libfabric";
      return nullptr;
    }
    return TcpPeer::open(o.tcpHost, o.tcpStreams, bufferBytes, p, why);
  };
  if (o.tcp && !measure(o, openBaseline, &tcp)) {
    std::fprintf(stderr, "ncclnet-bench: the %s baseline run failed\n", o.baseline.c_str());
    return 1;
  }

  std::printf("plugin:   %s\n", plugin.name.c_str());
  if (o.tcp) std::printf("baseline: %s\n", tcp.name.c_str());
  std::printf("two processes, window %d, best of %d\n\n", o.window, o.reps);
  std::printf("%-10s %14s %14s %8s\n", "size", "plugin GB/s", "baseline GB/s", "ratio");
  std::vector<size_t> sizes = sizesFor(o);
  for (size_t i = 0; i < sizes.size(); i++) {
    if (o.tcp) {
      std::printf("%-10s %14.3f %14.3f %8.2f\n", human(sizes[i]).c_str(), plugin.gbps[i],
                  tcp.gbps[i], plugin.gbps[i] / tcp.gbps[i]);
    } else {
      std::printf("%-10s %14.3f %14s %8s\n", human(sizes[i]).c_str(), plugin.gbps[i], "-", "-");
    }
  }
  std::printf("\n%-10s %14s %14s %8s\n", "ping-pong", "plugin us", "baseline us", "ratio");
  for (size_t i = 0; i < kLatencySizes.size(); i++) {
    if (o.tcp) {
      std::printf("%-10s %14.2f %14.2f %8.2f\n", human(kLatencySizes[i]).c_str(),
                  plugin.latencyUs[i], tcp.latencyUs[i], plugin.latencyUs[i] / tcp.latencyUs[i]);
    } else {
      std::printf("%-10s %14.2f %14s %8s\n", human(kLatencySizes[i]).c_str(), plugin.latencyUs[i],
                  "-", "-");
    }
  }
  std::printf("(latency: half a round trip; bandwidth: 1 GB/s = 1e9 bytes/s)\n");
  return 0;
}
