// SPDX-License-Identifier: Apache-2.0
// ncclnet-pattern-recorder: one of NCCL's traffic patterns, driven by the
// reference transport between two processes on one plugin, small enough
// that the calls it makes fit a short trace. Wrapped in ncclnet-check
// (NCCLNET_CHECK_TRACE), it records the traces the suite ships
// (conformance/traces/README.md).
//
//   ncclnet-pattern-recorder --plugin PATH --pattern ring-simple|ring-ll|ring-ll128|p2p-shared
//                            [--channels 2] [--rounds 2] [--max-bytes 60000]
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "ncclnet/transport/workload.hpp"
#include "ncclnet_cli.hpp"

namespace rt = ncclnet::transport;

namespace {

struct Options {
  std::string plugin;
  std::string pattern;
  int channels = 2;
  int rounds = 2;
  size_t maxBytes = 60000;
};

constexpr const char* kPatterns[] = {"ring-simple", "ring-ll", "ring-ll128", "p2p-shared"};

// Parses argv; nullopt: run, else the exit status (after --help or a usage
// error, printed).
std::optional<int> parse(int argc, char** argv, Options* o) {
  auto app = ncclnet::cli::makeApp(
      "ncclnet-pattern-recorder",
      "ncclnet-pattern-recorder --plugin PATH --pattern PATTERN [--channels N] [--rounds N]\n"
      "                                [--max-bytes N]",
      "One of NCCL's traffic patterns, driven by the reference transport between two\n"
      "processes on one plugin; wrapped in ncclnet-check, it records a trace.",
      "exit status: 0 done, 1 a process failed, 2 usage error");
  app->add_option("--plugin", o->plugin, "the plugin (NCCL_NET_PLUGIN syntax)")->type_name("PATH");
  app->add_option("--pattern", o->pattern, "ring-simple, ring-ll, ring-ll128 or p2p-shared")
      ->type_name("PATTERN");
  app->add_option("--channels", o->channels, "channels (default 2)")->type_name("N");
  app->add_option("--rounds", o->rounds, "rounds (default 2)")->type_name("N");
  app->add_option("--max-bytes", o->maxBytes, "largest message (default 60000)")->type_name("N");
  if (std::optional<int> exit = ncclnet::cli::parse(*app, argc, argv)) return exit;
  auto usageError = [](const std::string& what) {
    return std::optional<int>(ncclnet::cli::usageError("ncclnet-pattern-recorder", what));
  };
  if (o->plugin.empty()) return usageError("no plugin: give --plugin");
  if (std::find(std::begin(kPatterns), std::end(kPatterns), o->pattern) == std::end(kPatterns))
    return usageError("--pattern '" + o->pattern +
                      "': one of ring-simple, ring-ll, ring-ll128, p2p-shared");
  if (o->channels <= 0) return usageError("--channels must be at least 1");
  if (o->rounds <= 0) return usageError("--rounds must be at least 1");
  return std::nullopt;
}

// The pattern's links and phases, as the suite's Transport scenarios set
// them up (conformance/src/scenarios/transport.cc), with fewer rounds.
bool workloadOf(const Options& o, rt::Workload* w) {
  using rt::Protocol;
  using rt::RoundOptions;
  w->rounds = o.rounds;
  w->maxBytes = o.maxBytes;
  if (o.pattern == "ring-simple") {
    w->links = rt::twoRankRing(o.channels, false);
    w->phases = {RoundOptions{.protocol = Protocol::Simple},
                 RoundOptions{.protocol = Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4}};
  } else if (o.pattern == "ring-ll") {
    w->links = rt::twoRankRing(o.channels, false);
    w->phases = {RoundOptions{.protocol = Protocol::LL}};
  } else if (o.pattern == "ring-ll128") {
    w->links = rt::twoRankRing(o.channels, false);
    w->phases = {RoundOptions{.protocol = Protocol::LL128}};
  } else if (o.pattern == "p2p-shared") {
    w->links = rt::twoRankRing(o.channels, true);
    w->phases = {RoundOptions{}};
  } else {
    return false;
  }
  return true;
}

void warnOnly(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (level > NCCL_LOG_WARN) return;
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
}

bool writeAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool readAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// One process of the pair; `fd` is its end of the socket pair to the other.
int runProcess(const Options& o, const rt::Workload& w, int me, int fd) {
  ncclnet::host::LoaderOptions lo;
  lo.pluginList = o.plugin;
  lo.netName = std::string();
  lo.checkInit = false;
  lo.logger = ncclnet::Logger(warnOnly, "ncclnet-pattern-recorder");
  ncclnet::host::Loader loader(lo);
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin;
  if (loader.load(&plugin) != ncclSuccess) {
    std::fprintf(stderr, "process %d: cannot load %s: %s\n", me, o.plugin.c_str(),
                 loader.report().outcome.c_str());
    return 1;
  }
  rt::RankOptions options;
  options.transport.config = rt::TransportConfig::shrunk();
  options.transport.commId = 0x7e57c0de00ull + static_cast<uint64_t>(me);
  // The plugin's warnings (and, wrapped in ncclnet-check, its findings) on stderr.
  options.transport.logger = ncclnet::Logger(warnOnly, "NET/transport");
  rt::Rank rank;
  if (rt::makeRank(plugin->net(), std::move(options), &rank) != ncclSuccess) {
    std::fprintf(stderr, "process %d: the reference transport's set-up failed\n", me);
    return 1;
  }
  rt::ProcessHooks hooks;
  hooks.exchange = [&](const std::vector<rt::NetHandle>& mine, std::vector<rt::NetHandle>* all) {
    std::vector<rt::NetHandle> theirs(mine.size());
    size_t bytes = mine.size() * sizeof(rt::NetHandle);
    if (!writeAll(fd, mine.data(), bytes) || !readAll(fd, theirs.data(), bytes))
      return ncclSystemError;
    *all = mine;
    for (size_t i = 0; i < w.links.size(); i++) {
      if (w.links[i].recvProcess != me) (*all)[i] = theirs[i];
    }
    return ncclSuccess;
  };
  hooks.barrier = [&] {
    char byte = 1;
    return writeAll(fd, &byte, 1) && readAll(fd, &byte, 1) ? ncclSuccess : ncclSystemError;
  };
  std::string why;
  ncclResult_t res = rt::runWorkloadProcess(rank, w, me, hooks, &why);
  if (res != ncclSuccess) {
    std::fprintf(stderr, "process %d: %s\n", me, why.c_str());
    return 1;
  }
  rank = rt::Rank();
  plugin.reset();  // finalize and unload: the checker flushes its trace
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  rt::Workload w;
  if (std::optional<int> exit = parse(argc, argv, &o)) return *exit;
  if (!workloadOf(o, &w)) return 2;  // parse accepts only the patterns workloadOf knows
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    std::perror("socketpair");
    return 1;
  }
  pid_t pids[2];
  for (int me = 0; me < 2; me++) {
    pids[me] = fork();
    if (pids[me] == 0) {
      alarm(120);  // a pattern of a few hundred calls never takes this long
      close(fds[1 - me]);
      _exit(runProcess(o, w, me, fds[me]));
    }
  }
  close(fds[0]);
  close(fds[1]);
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
  }
  std::printf("%s: %s\n", o.pattern.c_str(), failed ? "FAILED" : "done");
  return failed ? 1 : 0;
}
