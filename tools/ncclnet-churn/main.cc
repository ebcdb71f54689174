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
#include <optional>
#include <string>

#include "control.hpp"
#include "ncclnet/host/build_info.hpp"
#include "ncclnet/testing/child_process.hpp"
#include "ncclnet_cli.hpp"
#include "rank.hpp"

namespace ncclnet::churn {
namespace {

constexpr double kJoinSeconds = 60;

constexpr const char* kDescription =
    "Loads a net plugin in two processes and opens, uses and closes a connection\n"
    "thousands of times while sampling RSS, descriptors and threads (churn), or\n"
    "streams verified messages over one connection (--seconds).";

constexpr const char* kFooter =
    "exit status: 0 ok, 1 plugin error, 2 usage, 3 hang, 4 corruption,\n"
    "             5 resources grew, 6 control link lost";

// A number as strtod reads it, 0 or more; CLI11 prefixes the option's name.
const CLI::Validator kNonNegative(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      double number = std::strtod(text.c_str(), &end);
      bool ok = !text.empty() && *end == '\0' && number >= 0;
      return ok ? "" : "'" + text + "' is not a number of 0 or more";
    },
    "N");

// Parses argv; nullopt: run, else the exit status (after --version, --help
// or a usage error, printed). Numbers are read as strtod reads them (1e4 is
// a count) and must not be negative.
std::optional<int> parse(int argc, char** argv, RankOptions* o, int* rank,
                         std::string* rendezvous) {
  auto app = cli::makeApp("ncclnet-churn", "ncclnet-churn --plugin NAME|PATH [options]",
                          kDescription, kFooter);
  double cycles = double(o->cycles), size = double(o->size), pauseMs = o->pauseMs, dev = o->dev,
         warmup = double(o->warmup), sampleEvery = double(o->sampleEvery),
         rssKiB = double(o->tolerance.rssKiB), fds = o->tolerance.fds,
         threads = o->tolerance.threads, rankNumber = -1;
  bool version = false;
  auto number = [&](const char* name, double* value, const char* help) {
    app->add_option(name, *value, help)->type_name("N")->check(kNonNegative);
  };
  app->add_option("--plugin", o->plugin, "the plugin (default: $NCCL_NET_PLUGIN)")
      ->type_name("NAME|PATH");
  number("--cycles", &cycles, "connect/transfer/close cycles (default 1000)");
  number("--seconds", &o->seconds, "instead: stream messages over one connection for N s");
  number("--size", &size, "bytes per transfer (default 65536)");
  number("--pause-ms", &pauseMs, "stream: pause between messages in ms (default 0)");
  number("--stall", &o->stallSec, "a wait without progress for N s is a hang (default 60)");
  number("--dev", &dev, "device (default 0)");
  number("--warmup", &warmup, "cycles before the baseline sample (default cycles/10)");
  number("--sample-every", &sampleEvery, "cycles between samples (default cycles/100)");
  number("--tolerance-rss-kib", &rssKiB, "RSS growth allowed past the baseline (1024)");
  number("--tolerance-fds", &fds, "descriptor growth allowed (2)");
  number("--tolerance-threads", &threads, "thread growth allowed (2)");
  app->add_option("--samples", o->samplesPrefix,
                  "write PREFIX.rank<R>.csv (cycle, rss_kib, fds, threads)")
      ->type_name("PREFIX");
  number("--rank", &rankNumber,
         "run one rank (0 or 1) with --rendezvous; without them the\n"
         "tool forks rank 1 on 127.0.0.1");
  app->add_option("--rendezvous", *rendezvous, "rank 0 listens on HOST:PORT")
      ->type_name("HOST:PORT");
  app->add_flag("--version", version, "print the version and exit");
  if (std::optional<int> exit = cli::parse(*app, argc, argv)) return exit;
  if (version) {
    std::printf("%s\n", ncclnet::host::versionLine("ncclnet-churn").c_str());
    return kExitOk;
  }
  o->cycles = static_cast<uint64_t>(cycles);
  o->size = static_cast<size_t>(size);
  o->pauseMs = static_cast<int>(pauseMs);
  o->dev = static_cast<int>(dev);
  o->warmup = static_cast<uint64_t>(warmup);
  o->sampleEvery = static_cast<uint64_t>(sampleEvery);
  o->tolerance.rssKiB = static_cast<uint64_t>(rssKiB);
  o->tolerance.fds = static_cast<int>(fds);
  o->tolerance.threads = static_cast<int>(threads);
  if (app->count("--rank")) *rank = static_cast<int>(rankNumber);
  if (o->plugin.empty()) {
    if (const char* env = std::getenv("NCCL_NET_PLUGIN")) o->plugin = env;
  }
  auto usageError = [](const std::string& what) {
    return std::optional<int>(cli::usageError("ncclnet-churn", what));
  };
  if (o->plugin.empty()) return usageError("no plugin: give --plugin or NCCL_NET_PLUGIN");
  if (o->cycles == 0 && o->seconds <= 0) return usageError("--cycles must be at least 1");
  if (*rank > 1) return usageError("--rank is 0 or 1");
  if (*rank >= 0 && rendezvous->empty()) return usageError("--rank needs --rendezvous HOST:PORT");
  return std::nullopt;
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
  if (std::optional<int> exit = parse(argc, argv, &options, &rank, &rendezvous)) return *exit;
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
  return ncclnet::churn::run(argc, argv);
}
