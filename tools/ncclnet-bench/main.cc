// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: one-way bandwidth (a window of messages in flight) and
// ping-pong latency of net plugins side by side, each point measured for
// every subject in alternation: the plugins named, then a baseline between
// the same two processes (raw TCP with the same number of streams, or raw
// libfabric on the same provider with the same window).
//
//   ncclnet-bench --plugin ./libnccl-net-mine.so --against ./libnccl-net-ofi.so [--comms 4]
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "ncclnet/host/build_info.hpp"
#include "plugin_peer.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "tcp_peer.hpp"
#ifdef NCCLNET_BENCH_HAVE_FABRIC
#include "fabric_peer.hpp"
#endif

namespace ncclnet::bench {
namespace {

struct Options {
  // --plugin, then --against: the first is measured against the rest.
  std::vector<std::string> plugins;
  PluginOptions plugin;  // what every plugin shares (--net: the first only)
  size_t minSize = 8;
  size_t maxSize = 64 << 20;
  int window = 16;
  int runs = 5;
  int comms = 1;
  int tcpStreams = 0;  // 0: the plugin's (sdk-socket knobs), else 1
  std::string tcpHost = "127.0.0.1";
  std::vector<std::string> baselines = {"tcp"};  // tcp, fabric (raw libfabric); none
  std::string json;
  bool quick = false;
  int latencyIters = 0;  // 0: 20000, or 200 with --quick
  int iters = 0;         // messages per comm and point; 0: about 1 GiB (32 MiB with --quick)
};

void usage() {
  std::printf(
      "usage: ncclnet-bench --plugin PATH|NAME [--plugin PATH|NAME | --against PATH|NAME]... "
      "[options]\n"
      "  --plugin P        NCCL_NET_PLUGIN value used to load a plugin (a path or a name;\n"
      "                    at least one). Several: each point is measured for every\n"
      "                    plugin in alternation, and the first is compared with the rest\n"
      "  --against P       a plugin to compare the first with (same as a later --plugin)\n"
      "  --net NAME        NCCL_NET for the first plugin: only a table with this name\n"
      "  --abi N           load every plugin through ncclNetPlugin_vN only\n"
      "  --dev N           device (default 0)\n"
      "  --min SIZE        smallest message (default 8)\n"
      "  --max SIZE        largest message (default 64M)\n"
      "  --window N        messages in flight per comm (default 16)\n"
      "  --comms N         comm pairs driven at once, one thread each, as NCCL drives one\n"
      "                    per channel; bandwidth is their sum (default 1)\n"
      "  --runs N          alternating runs per point; figures are medians with the\n"
      "                    interquartile range, ratios are taken run by run (default 5)\n"
      "  --json FILE       also write every run, summary and ratio as JSON\n"
      "  --version         print the version and exit\n"
      "  --baseline LIST   tcp (default), fabric (raw libfabric tagged RDM on the provider\n"
      "                    FI_PROVIDER names, default tcp;ofi_rxm), tcp,fabric, or none\n"
      "  --tcp-streams N   raw TCP connections per comm (default: NCCL_SOCKET_NTHREADS x\n"
      "                    NCCL_NSOCKS_PERTHREAD when both are set, else 1)\n"
      "  --tcp-host ADDR   raw TCP address (default 127.0.0.1)\n"
      "  --no-tcp          no baseline (same as --baseline none)\n"
      "  --iters N         messages per comm at every size (default: about 1 GiB, at\n"
      "                    least 16 and at most 40000 messages)\n"
      "  --latency-iters N ping-pong round trips (default 20000, 200 with --quick)\n"
      "  --quick           fewer iterations (smoke test)\n"
      "Sizes take K, M, G suffixes (powers of 2). Every subject is opened once in both\n"
      "processes; in each run the first subject measured rotates.\n");
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

bool parseBaselines(const std::string& list, std::vector<std::string>* out) {
  out->clear();
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "none") continue;
    if (item != "tcp" && item != "fabric") return false;
    if (std::find(out->begin(), out->end(), item) == out->end()) out->push_back(item);
  }
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  std::vector<std::string> against;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--help" || a == "-h") return false;
    if (a == "--no-tcp") {
      o->baselines.clear();
      continue;
    }
    if (a == "--quick") {
      o->quick = true;
      continue;
    }
    if ((v = value()) == nullptr) return false;
    if (a == "--plugin")
      o->plugins.push_back(v);
    else if (a == "--against")
      against.push_back(v);
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
    else if (a == "--runs" || a == "--reps")
      o->runs = std::max(1, std::atoi(v));
    else if (a == "--comms")
      o->comms = std::clamp(std::atoi(v), 1, 256);
    else if (a == "--json")
      o->json = v;
    else if (a == "--tcp-streams")
      o->tcpStreams = std::max(1, std::atoi(v));
    else if (a == "--tcp-host")
      o->tcpHost = v;
    else if (a == "--baseline") {
      if (!parseBaselines(v, &o->baselines)) return false;
    } else if (a == "--iters")
      o->iters = std::max(1, std::atoi(v));
    else if (a == "--latency-iters")
      o->latencyIters = std::max(1, std::atoi(v));
    else
      return false;
  }
  o->plugins.insert(o->plugins.end(), against.begin(), against.end());
  return !o->plugins.empty() && o->minSize <= o->maxSize;
}

std::vector<size_t> sizesFor(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = std::max<size_t>(o.minSize, 1); s < o.maxSize; s *= 4) sizes.push_back(s);
  sizes.push_back(o.maxSize);
  return sizes;
}

int itersFor(const Options& o, size_t size) {
  if (o.iters > 0) return o.iters;
  double target = o.quick ? double(32 << 20) : double(1u << 30);
  int cap = o.quick ? 2000 : 40000;
  return std::clamp(static_cast<int>(target / double(size)), o.quick ? 4 : 16, cap);
}

const std::vector<size_t> kLatencySizes = {8, 1024, 65536};

Schedule scheduleFor(const Options& o) {
  Schedule s;
  s.sizes = sizesFor(o);
  for (size_t size : s.sizes) s.iters.push_back(itersFor(o, size));
  s.latencySizes = kLatencySizes;
  s.latencyIters = o.latencyIters > 0 ? o.latencyIters : o.quick ? 200 : 20000;
  s.window = o.window;
  s.runs = o.runs;
  s.comms = o.comms;
  return s;
}

int defaultTcpStreams() {
  const char* threads = std::getenv("NCCL_SOCKET_NTHREADS");
  const char* socks = std::getenv("NCCL_NSOCKS_PERTHREAD");
  if (threads == nullptr || socks == nullptr) return 1;
  return std::clamp(std::max(std::atoi(threads), 1) * std::max(std::atoi(socks), 1), 1, 64);
}

}  // namespace
}  // namespace ncclnet::bench

int main(int argc, char** argv) {
  using namespace ncclnet::bench;
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("%s\n", ncclnet::host::versionLine("ncclnet-bench").c_str());
    return 0;
  }
  Options o;
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
#ifndef NCCLNET_BENCH_HAVE_FABRIC
  if (std::find(o.baselines.begin(), o.baselines.end(), "fabric") != o.baselines.end()) {
    std::fprintf(stderr, "ncclnet-bench: this ncclnet-bench was built without libfabric\n");
    return 2;
  }
#endif
  if (o.tcpStreams == 0) o.tcpStreams = defaultTcpStreams();
  o.plugin.maxSize = std::max(o.maxSize, kLatencySizes.back());
  o.plugin.buffers = std::clamp(o.window, 1, 4);
  size_t bufferBytes = o.plugin.maxSize;

  std::vector<Opener> subjects;
  for (size_t k = 0; k < o.plugins.size(); k++) {
    PluginOptions options = o.plugin;
    options.pluginList = o.plugins[k];
    if (k > 0) options.netName.reset();
    subjects.push_back([options, comms = o.comms](Pair& p, std::string* why) {
      return PluginPeer::open(options, comms, p, why);
    });
  }
  for (const std::string& baseline : o.baselines) {
    subjects.push_back([&o, baseline, bufferBytes](Pair& p, std::string* why) {
      std::vector<std::unique_ptr<Peer>> comms;
      for (int c = 0; c < o.comms; c++) {
        std::unique_ptr<Peer> peer;
#ifdef NCCLNET_BENCH_HAVE_FABRIC
        if (baseline == "fabric") peer = FabricPeer::open(bufferBytes, o.window, p, why);
#endif
        if (baseline == "tcp") peer = TcpPeer::open(o.tcpHost, o.tcpStreams, bufferBytes, p, why);
        if (!peer) return std::vector<std::unique_ptr<Peer>>{};
        comms.push_back(std::move(peer));
      }
      return comms;
    });
  }

  // A JSON file that cannot be written fails now, not after the run.
  if (!o.json.empty()) {
    std::FILE* probe = std::fopen(o.json.c_str(), "w");
    if (probe == nullptr) {
      std::fprintf(stderr, "ncclnet-bench: --json %s: %s\n", o.json.c_str(), std::strerror(errno));
      return 2;
    }
    std::fclose(probe);
  }

  Schedule schedule = scheduleFor(o);
  RunInfo info = describeMachine(argc, argv);
  info.version = ncclnet::host::versionLine("ncclnet-bench");
  std::vector<SubjectResult> results;
  if (!measureSideBySide(schedule, subjects, &results)) {
    std::fprintf(stderr, "ncclnet-bench: the run failed\n");
    return 1;
  }
  info.loadAverageAfter = loadAverage();
  printText(schedule, results, info);
  std::string why;
  if (!o.json.empty() && !writeJson(o.json, schedule, results, info, &why)) {
    std::fprintf(stderr, "ncclnet-bench: %s\n", why.c_str());
    return 1;
  }
  return 0;
}
