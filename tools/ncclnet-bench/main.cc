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
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ncclnet/host/build_info.hpp"
#include "ncclnet_cli.hpp"
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

constexpr const char* kDescription =
    "One-way bandwidth and ping-pong latency of net plugins side by side, each point\n"
    "measured for every subject in alternation: the plugins named, then a baseline\n"
    "between the same two processes (raw TCP, or raw libfabric).";

constexpr const char* kFooter =
    "Sizes take K, M, G suffixes (powers of 2). Every subject is opened once in both\n"
    "processes; in each run the first subject measured rotates.\n"
    "exit status: 0 ok, 1 the run failed, 2 usage error";

// Parses argv into *o; nullopt: run, else the exit status (after --help or
// a usage error, printed).
std::optional<int> parse(int argc, char** argv, Options* o) {
  std::vector<std::string> against;
  std::string minText, maxText, baselineText;
  bool noTcp = false, version = false;
  auto app = cli::makeApp(
      "ncclnet-bench",
      "ncclnet-bench --plugin PATH|NAME [--plugin PATH|NAME | --against PATH|NAME]... [options]",
      kDescription, kFooter);
  cli::repeatable(app->add_option("--plugin", o->plugins,
                                  "NCCL_NET_PLUGIN value used to load a plugin (a path or a\n"
                                  "name; at least one). Several: each point is measured for\n"
                                  "every plugin in alternation, and the first is compared\n"
                                  "with the rest"))
      ->type_name("P");
  cli::repeatable(app->add_option("--against", against,
                                  "a plugin to compare the first with (same as a later --plugin)"))
      ->type_name("P");
  std::string net;
  app->add_option("--net", net, "NCCL_NET for the first plugin: only a table with this name")
      ->type_name("NAME");
  int abi = 0, dev = 0;
  app->add_option("--abi", abi, "load every plugin through ncclNetPlugin_vN only")->type_name("N");
  app->add_option("--dev", dev, "device (default 0)")->type_name("N");
  app->add_option("--min", minText, "smallest message (default 8)")->type_name("SIZE");
  app->add_option("--max", maxText, "largest message (default 64M)")->type_name("SIZE");
  app->add_option("--window", o->window, "messages in flight per comm (default 16)")
      ->type_name("N");
  app->add_option("--comms", o->comms,
                  "comm pairs driven at once, one thread each, as NCCL drives one\n"
                  "per channel; bandwidth is their sum (default 1)")
      ->type_name("N");
  app->add_option("--runs,--reps", o->runs,
                  "alternating runs per point; figures are medians with the\n"
                  "interquartile range, ratios are taken run by run (default 5)")
      ->type_name("N");
  app->add_option("--json", o->json, "also write every run, summary and ratio as JSON")
      ->type_name("FILE");
  app->add_flag("--version", version, "print the version and exit");
  app->add_option("--baseline", baselineText,
                  "tcp (default), fabric (raw libfabric tagged RDM on the provider\n"
                  "FI_PROVIDER names, default tcp;ofi_rxm), tcp,fabric, or none")
      ->type_name("LIST");
  app->add_option("--tcp-streams", o->tcpStreams,
                  "raw TCP connections per comm (default: NCCL_SOCKET_NTHREADS x\n"
                  "NCCL_NSOCKS_PERTHREAD when both are set, else 1)")
      ->type_name("N");
  app->add_option("--tcp-host", o->tcpHost, "raw TCP address (default 127.0.0.1)")
      ->type_name("ADDR");
  app->add_flag("--no-tcp", noTcp, "no baseline (same as --baseline none)");
  app->add_option("--iters", o->iters,
                  "messages per comm at every size (default: about 1 GiB, at\n"
                  "least 16 and at most 40000 messages)")
      ->type_name("N");
  app->add_option("--latency-iters", o->latencyIters,
                  "ping-pong round trips (default 20000, 200 with --quick)")
      ->type_name("N");
  app->add_flag("--quick", o->quick, "fewer iterations (smoke test)");
  if (std::optional<int> exit = cli::parse(*app, argc, argv)) return exit;
  if (version) {
    std::printf("%s\n", ncclnet::host::versionLine("ncclnet-bench").c_str());
    return 0;
  }
  auto usageError = [](const std::string& what) { return cli::usageError("ncclnet-bench", what); };
  if (app->count("--net")) o->plugin.netName = net;
  if (app->count("--abi")) o->plugin.abi = abi;
  o->plugin.dev = dev;
  if (app->count("--min") && !parseSize(minText.c_str(), &o->minSize))
    return usageError("--min " + minText + ": a size (K, M, G suffixes)");
  if (app->count("--max") && !parseSize(maxText.c_str(), &o->maxSize))
    return usageError("--max " + maxText + ": a size (K, M, G suffixes)");
  if (app->count("--baseline") && !parseBaselines(baselineText, &o->baselines))
    return usageError("--baseline " + baselineText + ": tcp, fabric, tcp,fabric or none");
  if (noTcp) o->baselines.clear();
  // Counts below 1 mean the least that runs, as they always have.
  o->window = std::max(1, o->window);
  o->runs = std::max(1, o->runs);
  o->comms = std::clamp(o->comms, 1, 256);
  if (app->count("--tcp-streams")) o->tcpStreams = std::max(1, o->tcpStreams);
  if (app->count("--iters")) o->iters = std::max(1, o->iters);
  if (app->count("--latency-iters")) o->latencyIters = std::max(1, o->latencyIters);
  o->plugins.insert(o->plugins.end(), against.begin(), against.end());
  if (o->plugins.empty()) return usageError("no plugin: give --plugin");
  if (o->minSize > o->maxSize) return usageError("--min is larger than --max");
  return std::nullopt;
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
  Options o;
  if (std::optional<int> exit = parse(argc, argv, &o)) return *exit;
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
