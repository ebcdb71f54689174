// SPDX-License-Identifier: Apache-2.0
// Command-line and launcher-environment parsing.
#include "options.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

namespace conformance {

namespace {

std::optional<int> envInt(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0') return std::nullopt;
  return static_cast<int>(n);
}

bool toNumber(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && *out > 0;
}

bool toInt(const std::string& text, int* out) {
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  *out = static_cast<int>(n);
  return !text.empty() && *end == '\0' && n >= 0;
}

bool isFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// `text` in single quotes, which a POSIX shell takes literally; a quote
// inside closes them, is escaped, and opens them again.
std::string singleQuoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `text` as one shell word: as it is when no character in it means
// anything to the shell (the usual path or name), else quoted.
std::string shellWord(const std::string& text) {
  bool plain = !text.empty() && text.find_first_not_of(
                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789_@%+=:,./-") == std::string::npos;
  return plain ? text : singleQuoted(text);
}

// The shortest text that strtod reads back as `value` exactly: 0.5 prints
// as 0.5, not 0.50000000000000000, and 30 as 30, not 3e+01.
std::string exactNumber(double value) {
  char text[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof(text), "%.0f", value);
    return text;
  }
  for (int digits = 1; digits <= 17; digits++) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

}  // namespace

std::string installedProfilesDir() {
  // bin/ncclnet-conformance -> share/ncclnet-sdk/profiles, wherever the
  // prefix was moved (a .deb in /usr, a tarball in /opt/...).
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string exe(self, static_cast<size_t>(n));
    std::string bin = exe.substr(0, exe.rfind('/'));
    std::string dir =
        bin.substr(0, bin.rfind('/')) + "/" NCCLNET_INSTALL_DATADIR "/ncclnet-sdk/profiles";
    struct stat st {};
    if (stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return dir;
  }
  return "";  // not installed (a build tree)
}

std::string resolveProfile(const std::string& profile) {
  if (isFile(profile) || profile.find('/') != std::string::npos) return profile;
  std::string dir = installedProfilesDir();
  if (dir.empty()) return profile;
  for (const std::string& candidate : {dir + "/" + profile, dir + "/" + profile + ".yaml"}) {
    if (isFile(candidate)) return candidate;
  }
  return profile;
}

std::string qualifyFilter(const std::string& filter) {
  std::string out;
  size_t start = 0;
  bool negative = false;
  while (start <= filter.size()) {
    size_t end = filter.find_first_of(negative ? ":" : ":-", start);
    if (end == std::string::npos) end = filter.size();
    std::string pattern = filter.substr(start, end - start);
    bool named = pattern.empty() || pattern.find('/') != std::string::npos || pattern[0] == '*' ||
                 pattern[0] == '?';
    out += named ? pattern : "*/" + pattern;
    if (end == filter.size()) break;
    if (filter[end] == '-') negative = true;
    out += filter[end];
    start = end + 1;
  }
  return out;
}

std::string rerunCommand(const Options& run, const std::string& filter) {
  std::string line = "ncclnet-conformance";
  auto add = [&line](const char* option, const std::optional<std::string>& value) {
    if (value) line += std::string(" ") + option + " " + shellWord(*value);
  };
  add("--plugin", run.plugin);
  add("--net", run.netName);
  add("--profile", run.profilePath);
  add("--nccl", run.nccl);
  add("--abi", run.abi);
  add("--device", run.device);
  add("--replay", run.replayDir);
  if (run.timeScale) line += " --time-scale " + exactNumber(*run.timeScale);
  if (run.deadline) line += " --deadline " + exactNumber(*run.deadline);
  if (run.strict) line += " --strict";
  // Always quoted, as the documentation writes filters: `*` and `?` in one
  // are for gtest, never for the shell.
  if (!filter.empty()) line += " --gtest_filter=" + singleQuoted(filter);
  return line;
}

namespace {

constexpr const char* kSynopsis =
    "ncclnet-conformance --plugin NAME|PATH [options] [--gtest_filter=...]\n"
    "       ncclnet-conformance --summary [--verbose] REPORT.json...";

constexpr const char* kDescription =
    "Certifies an NCCL net plugin: every rule of docs/contract.md as a scenario, run\n"
    "through each ABI version NCCL would use.";

constexpr const char* kFooter =
    "--summary [--verbose] REPORT.json...\n"
    "                        print each JSON report's result line (verbose: and what did\n"
    "                        not pass, and the counters); exit 1 if one failed\n"
    "--gtest_filter=PATTERNS  run only matching tests; `Area.Scenario` patterns match\n"
    "                        every ABI version, `v12/Area.Scenario` one\n"
    "exit status: 0 certified (warnings listed); 1 a MUST rule failed; 2 usage error,\n"
    "             malformed profile or an empty selection";

// What the options are bound to before they are checked and put in Options.
struct Values {
  std::string plugin, net, profile, abi, nccl, device, replay;
  std::string timeScale, deadline, rank, size;  // checked as the suite always has
};

// The command line, its values bound to `o` and `v`.
std::unique_ptr<CLI::App> makeCommandLine(Options* o, Values* v) {
  auto app = ncclnet::cli::makeApp("ncclnet-conformance", kSynopsis, kDescription, kFooter);
  std::string profiles = installedProfilesDir().empty() ? "<prefix>/share/ncclnet-sdk/profiles"
                                                        : installedProfilesDir();
  app->add_option("--plugin", v->plugin,
                  "plugin to certify, as NCCL_NET_PLUGIN takes it (default: the\n"
                  "profile's 'plugin', else $NCCL_NET_PLUGIN)")
      ->type_name("NAME|PATH");
  app->add_option("--profile", v->profile,
                  "YAML profile; a NAME is one of the installed profiles\n(" + profiles +
                      ",\ne.g. sdk-socket); default.yaml there documents every key")
      ->type_name("FILE|NAME");
  app->add_option("--abi", v->abi,
                  "ABI versions to run the catalogue through (default: the one\nNCCL picks)")
      ->type_name("all|vN|vN+");
  app->add_option("--nccl", v->nccl,
                  "emulate an NCCL release (2.23, 2.28.9, ...): its ABI window and\n"
                  "how it reads NCCL_NET_PLUGIN (one name before 2.27.3)")
      ->type_name("RELEASE");
  app->add_option("--net", v->net, "NCCL_NET: only a table with this name")->type_name("NAME");
  app->add_option("--json", o->jsonPath, "JSON report")->type_name("FILE");
  app->add_option("--junit", o->junitPath, "JUnit XML report")->type_name("FILE");
  app->add_option("--time-scale", v->timeScale, "multiply every deadline")->type_name("X");
  app->add_option("--deadline", v->deadline, "default deadline in seconds")->type_name("S");
  app->add_flag("--strict", o->strict,
                "warnings (SHOULD rules broken) and scenarios that cannot run\n"
                "(NotRun) fail the run");
  app->add_option("--device", v->device,
                  "what plays NCCL's kernels in the Transport scenarios: a CPU\n"
                  "thread on host memory (default), or CUDA kernels on GPU\n"
                  "(rank % GPUs) with pinned and device memory")
      ->type_name("cpu|cuda");
  app->add_option("--replay", v->replay,
                  "replay the ncclnet-check traces of DIR (NCCLNET_CHECK_TRACE;\n"
                  "one rank per file) against the plugin: Replay.Recorded, nothing\n"
                  "else")
      ->type_name("DIR");
  app->add_flag("--list", o->list, "print the catalogue and exit");
  app->add_flag("--verbose", o->verbose, "one line per test");
  app->add_flag("--list-rules", o->listRules, "print the rules (docs/contract.md) and exit");
  app->add_flag("--print-env", o->printEnv, "print the profile's env (NAME=VALUE lines) and exit");
  app->add_option("--rank", v->rank,
                  "multi-node placement, with --size N and --rendezvous\n"
                  "(default: $OMPI_COMM_WORLD_RANK/SIZE, $SLURM_PROCID/$SLURM_NTASKS,\n"
                  "$NCCLNET_CONFORMANCE_RENDEZVOUS)")
      ->type_name("R");
  app->add_option("--size", v->size, "processes in the world")->type_name("N");
  app->add_option("--rendezvous", o->rendezvous, "rank 0's HOST:PORT")->type_name("HOST:PORT");
  app->add_flag("--no-progress", o->noProgress,
                "no progress line (also when stdout is no terminal or $CI is set)");
  app->add_flag("--version", o->version, "print the version and exit");
  app->add_option("--exec-worker", o->execWorker, "")->group("");  // the coordinator's own
  return app;
}

}  // namespace

std::string helpText() {
  Options o;
  Values v;
  return makeCommandLine(&o, &v)->help();
}

std::vector<std::string> splitGtestFlags(std::vector<std::string>* args) {
  std::vector<std::string> gtest, ours;
  for (std::string& arg : *args) {
    // gtest reads its flags with one or two dashes (testing::internal::ParseFlag).
    bool isGtest = arg.compare(0, 8, "--gtest_") == 0 || arg.compare(0, 7, "-gtest_") == 0;
    (isGtest ? gtest : ours).push_back(std::move(arg));
  }
  *args = std::move(ours);
  return gtest;
}

ncclnet::cli::Parsed parseOptions(int argc, char** argv, Options* out) {
  using ncclnet::cli::Parsed;
  auto fail = [](std::string what) { return Parsed{Parsed::Kind::kError, std::move(what)}; };
  Options o;
  if (auto r = envInt("OMPI_COMM_WORLD_RANK"))
    o.rank = *r;
  else if (auto s = envInt("SLURM_PROCID"))
    o.rank = *s;
  if (auto n = envInt("OMPI_COMM_WORLD_SIZE"))
    o.size = *n;
  else if (auto s = envInt("SLURM_NTASKS"))
    o.size = *s;
  if (const char* r = std::getenv("NCCLNET_CONFORMANCE_RENDEZVOUS")) o.rendezvous = r;
  Values v;
  std::unique_ptr<CLI::App> app = makeCommandLine(&o, &v);
  Parsed parsed = ncclnet::cli::tryParse(
      *app, std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc));
  if (parsed.kind != Parsed::Kind::kRun) return parsed;
  auto given = [&app](const char* name) { return app->count(name) > 0; };
  if (given("--plugin")) o.plugin = v.plugin;
  if (given("--net")) o.netName = v.net;
  if (given("--profile")) o.profilePath = resolveProfile(v.profile);
  if (given("--abi")) o.abi = v.abi;
  if (given("--nccl")) o.nccl = v.nccl;
  if (given("--replay")) o.replayDir = v.replay;
  if (given("--device")) {
    if (v.device != "cpu" && v.device != "cuda")
      return fail("--device takes cpu or cuda, not '" + v.device + "'");
    o.device = v.device;
  }
  for (auto [name, text] : {std::pair{"--time-scale", &v.timeScale}, {"--deadline", &v.deadline}}) {
    if (!given(name)) continue;
    double d = 0;
    if (!toNumber(*text, &d))
      return fail(std::string(name) + " needs a positive number, not '" + *text + "'");
    (text == &v.timeScale ? o.timeScale : o.deadline) = d;
  }
  for (auto [name, text] : {std::pair{"--rank", &v.rank}, {"--size", &v.size}}) {
    if (!given(name)) continue;
    int n = 0;
    if (!toInt(*text, &n))
      return fail(std::string(name) + " needs a non-negative integer, not '" + *text + "'");
    (text == &v.rank ? o.rank : o.size) = n;
  }
  if (o.size < 1 || o.rank >= o.size)
    return fail("rank " + std::to_string(o.rank) + " is outside a world of size " +
                std::to_string(o.size));
  if (o.size > 1 && o.rendezvous.empty())
    return fail("a world of " + std::to_string(o.size) +
                " processes needs --rendezvous HOST:PORT (or NCCLNET_CONFORMANCE_RENDEZVOUS): "
                "rank 0's address, reachable from every node");
  *out = o;
  return parsed;
}

}  // namespace conformance
