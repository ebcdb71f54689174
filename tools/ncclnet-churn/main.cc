// SPDX-License-Identifier: Apache-2.0
// ncclnet-churn: loads a net plugin through the SDK loader in two processes
// and either opens, uses and closes a connection thousands of times while
// sampling RSS, descriptors and threads (churn), or streams verified
// messages over one connection for a while (what network faults are
// injected into). Locally it forks its peer; across hosts or network
// namespaces each rank is started with --rank and --rendezvous.
//
//   ncclnet-churn --plugin sdk-socket --cycles 10000
//   ns1$ ncclnet-churn --plugin sdk-socket --rank 1 --rendezvous 10.200.2.1:29600 --seconds 30
//   ns0$ ncclnet-churn --plugin sdk-socket --rank 0 --rendezvous 10.200.2.1:29600 --seconds 30
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "control.hpp"
#include "ncclnet/host/build_info.hpp"
#include "ncclnet/testing/child_process.hpp"
#include "rank.hpp"

namespace ncclnet::churn {
namespace {

constexpr double kJoinSeconds = 60;

const char* kUsage =
    "usage: ncclnet-churn --plugin NAME|PATH [options]\n"
    "  --cycles N            connect/transfer/close cycles (default 1000)\n"
    "  --seconds T           instead: stream messages over one connection for T s\n"
    "  --size BYTES          bytes per transfer (default 65536)\n"
    "  --pause-ms MS         stream: pause between messages (default 0)\n"
    "  --stall S             a wait without progress for S s is a hang (default 60)\n"
    "  --dev D               device (default 0)\n"
    "  --warmup N            cycles before the baseline sample (default cycles/10)\n"
    "  --sample-every N      cycles between samples (default cycles/100)\n"
    "  --tolerance-rss-kib K, --tolerance-fds N, --tolerance-threads N\n"
    "                        growth allowed past the baseline (1024, 2, 2)\n"
    "  --samples PREFIX      write PREFIX.rank<R>.csv (cycle, rss_kib, fds, threads)\n"
    "  --rank R --rendezvous HOST:PORT\n"
    "                        run one rank (0 or 1); rank 0 listens on HOST:PORT.\n"
    "                        Without them the tool forks rank 1 on 127.0.0.1.\n"
    "exit: 0 ok, 1 plugin error, 2 usage, 3 hang, 4 corruption, 5 resources grew,\n"
    "      6 control link lost\n";

bool parse(int argc, char** argv, RankOptions* o, int* rank, std::string* rendezvous,
           std::string* error) {
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (i + 1 >= argc) {
      *error = arg == "--help" ? "" : arg + " needs a value";
      return false;
    }
    std::string v = argv[++i];
    char* end = nullptr;
    double number = std::strtod(v.c_str(), &end);
    bool numeric = !v.empty() && *end == '\0' && number >= 0;
    auto count = [&]() { return static_cast<uint64_t>(number); };
    if (arg == "--plugin")
      o->plugin = v;
    else if (arg == "--rendezvous")
      *rendezvous = v;
    else if (arg == "--samples")
      o->samplesPrefix = v;
    else if (!numeric) {
      *error = arg == "--help" ? "" : "unknown argument or not a number: " + arg + " " + v;
      return false;
    } else if (arg == "--cycles")
      o->cycles = count();
    else if (arg == "--seconds")
      o->seconds = number;
    else if (arg == "--size")
      o->size = static_cast<size_t>(number);
    else if (arg == "--pause-ms")
      o->pauseMs = static_cast<int>(number);
    else if (arg == "--stall")
      o->stallSec = number;
    else if (arg == "--dev")
      o->dev = static_cast<int>(number);
    else if (arg == "--warmup")
      o->warmup = count();
    else if (arg == "--sample-every")
      o->sampleEvery = count();
    else if (arg == "--tolerance-rss-kib")
      o->tolerance.rssKiB = count();
    else if (arg == "--tolerance-fds")
      o->tolerance.fds = static_cast<int>(number);
    else if (arg == "--tolerance-threads")
      o->tolerance.threads = static_cast<int>(number);
    else if (arg == "--rank")
      *rank = static_cast<int>(number);
    else {
      *error = "unknown argument " + arg;
      return false;
    }
  }
  if (o->plugin.empty()) {
    if (const char* env = std::getenv("NCCL_NET_PLUGIN")) o->plugin = env;
  }
  if (o->plugin.empty())
    *error = "no plugin: give --plugin or NCCL_NET_PLUGIN";
  else if (o->cycles == 0 && o->seconds <= 0)
    *error = "--cycles must be at least 1";
  else if (*rank > 1)
    *error = "--rank is 0 or 1";
  else if (*rank >= 0 && rendezvous->empty())
    *error = "--rank needs --rendezvous HOST:PORT";
  return error->empty();
}

// Rank 1 forked on this host: its exit status, or kExitStall when it does not
// end within `seconds` after rank 0 did (the kit's wait then kills it).
int reap(ncclnet::testing::ChildProcess& child, double seconds) {
  ncclnet::testing::ExitStatus status = child.wait(seconds);
  switch (status.kind) {
    case ncclnet::testing::ExitStatus::Kind::Exited: return status.code;
    case ncclnet::testing::ExitStatus::Kind::TimedOut:
      std::printf("rank 1: did not end within %.0f s after rank 0; killed\n", seconds);
      return kExitStall;
    default: std::printf("rank 1: %s\n", status.describe().c_str()); return kExitPluginError;
  }
}

int run(int argc, char** argv) {
  RankOptions options;
  int rank = -1;
  std::string rendezvous, error;
  if (!parse(argc, argv, &options, &rank, &rendezvous, &error)) {
    if (!error.empty()) std::fprintf(stderr, "ncclnet-churn: %s\n", error.c_str());
    std::fprintf(stderr, "%s", kUsage);
    return kExitUsage;
  }
  std::string host = "127.0.0.1";
  int port = 0;
  if (rank >= 0 && !splitHostPort(rendezvous, &host, &port)) {
    std::fprintf(stderr, "ncclnet-churn: '%s' is not HOST:PORT\n", rendezvous.c_str());
    return kExitUsage;
  }
  Control control;
  if (rank == 1) {
    if (!control.connect(host, port, kJoinSeconds, &error)) {
      std::printf("rank 1: FAILED (control link): %s\n", error.c_str());
      return kExitControl;
    }
    return Rank(1, options, control).run();
  }
  if (!control.listen(host, port, &error)) {
    std::printf("rank 0: FAILED (control link): %s\n", error.c_str());
    return kExitControl;
  }
  // Rank 1 on this host; it meets rank 0 over the control link, as across
  // hosts, so the kit's channel stays unused.
  std::unique_ptr<ncclnet::testing::ChildProcess> child;
  if (rank < 0) {
    pid_t parent = getpid();
    child =
        std::make_unique<ncclnet::testing::ChildProcess>([&](ncclnet::testing::Channel&) -> int {
          prctl(PR_SET_PDEATHSIG, SIGKILL);
          if (getppid() != parent) return kExitControl;
          Control toParent;
          return toParent.connect("127.0.0.1", control.boundPort(), kJoinSeconds, &error)
                     ? Rank(1, options, toParent).run()
                     : kExitControl;
        });
  }
  int code = control.accept(kJoinSeconds, &error) ? Rank(0, options, control).run() : kExitControl;
  if (code == kExitControl && !error.empty())
    std::printf("rank 0: FAILED (control link): %s\n", error.c_str());
  if (child) {
    int childCode = reap(*child, options.stallSec + 10);
    if (code == kExitOk) code = childCode;
  }
  return code;
}

}  // namespace
}  // namespace ncclnet::churn

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("%s\n", ncclnet::host::versionLine("ncclnet-churn").c_str());
    return 0;
  }
  return ncclnet::churn::run(argc, argv);
}
