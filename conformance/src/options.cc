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

const char* usage() {
  static const std::string text =
      "usage: ncclnet-conformance --plugin NAME|PATH [options] [--gtest_filter=...]\n"
      "  --plugin NAME|PATH   plugin to certify, as NCCL_NET_PLUGIN takes it (default: the\n"
      "                       profile's 'plugin', else $NCCL_NET_PLUGIN)\n"
      "  --profile FILE|NAME  YAML profile; a NAME is one of the installed profiles\n"
      "                       (" +
      (installedProfilesDir().empty() ? std::string("<prefix>/share/ncclnet-sdk/profiles")
                                      : installedProfilesDir()) +
      ",\n"
      "                       e.g. sdk-socket); default.yaml there documents every key\n"
      "  --abi all|vN|vN+     ABI versions to run the catalogue through (default: the one NCCL "
      "picks)\n"
      "  --nccl RELEASE       emulate an NCCL release (2.23, 2.28.9, ...): its ABI window and\n"
      "                       how it reads NCCL_NET_PLUGIN (one name before 2.27.3)\n"
      "  --net NAME           NCCL_NET: only a table with this name\n"
      "  --json FILE          JSON report     --junit FILE   JUnit XML report\n"
      "  --time-scale X       multiply every deadline     --deadline S   default deadline\n"
      "  --strict             warnings (SHOULD rules broken) and scenarios that cannot run\n"
      "                       (NotRun) fail the run\n"
      "  --device cpu|cuda    what plays NCCL's kernels in the Transport scenarios: a CPU\n"
      "                       thread on host memory (default), or CUDA kernels on GPU\n"
      "                       (rank % GPUs) with pinned and device memory\n"
      "  --replay DIR         replay the ncclnet-check traces of DIR (NCCLNET_CHECK_TRACE; one\n"
      "                       rank per file) against the plugin: Replay.Recorded, nothing else\n"
      "  --list               print the catalogue and exit     --verbose   one line per test\n"
      "  --list-rules         print the rules (docs/contract.md) and exit\n"
      "  --print-env          print the profile's env (NAME=VALUE lines) and exit\n"
      "  --summary [--verbose] REPORT.json...\n"
      "                       print each JSON report's result line (verbose: and what did\n"
      "                       not pass, and the counters); exit 1 if one failed\n"
      "  --rank R --size N --rendezvous HOST:PORT\n"
      "                       multi-node placement (default: $OMPI_COMM_WORLD_RANK/SIZE,\n"
      "                       $SLURM_PROCID/$SLURM_NTASKS, $NCCLNET_CONFORMANCE_RENDEZVOUS)\n"
      "  --no-progress        no progress line (also when stdout is no terminal or $CI is set)\n"
      "  --version            print the version and exit\n"
      "  --gtest_filter=PATTERNS  run only matching tests; `Area.Scenario` patterns match\n"
      "                       every ABI version, `v12/Area.Scenario` one\n";
  return text.c_str();
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

bool parseOptions(int argc, char** argv, Options* out, std::string* error) {
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

  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    std::string value;
    size_t eq = arg.find('=');
    bool inlineValue = arg.compare(0, 2, "--") == 0 && eq != std::string::npos;
    if (inlineValue) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto need = [&](std::string* v) {
      if (inlineValue) {
        *v = value;
        return true;
      }
      if (i + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      *v = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--strict")
      o.strict = true;
    else if (arg == "--list")
      o.list = true;
    else if (arg == "--list-rules")
      o.listRules = true;
    else if (arg == "--print-env")
      o.printEnv = true;
    else if (arg == "--verbose")
      o.verbose = true;
    else if (arg == "--no-progress")
      o.noProgress = true;
    else if (arg == "--plugin") {
      if (!need(&v)) return false;
      o.plugin = v;
    } else if (arg == "--net") {
      if (!need(&v)) return false;
      o.netName = v;
    } else if (arg == "--profile") {
      if (!need(&v)) return false;
      o.profilePath = resolveProfile(v);
    } else if (arg == "--abi") {
      if (!need(&v)) return false;
      o.abi = v;
    } else if (arg == "--device") {
      if (!need(&v)) return false;
      if (v != "cpu" && v != "cuda") {
        *error = "--device takes cpu or cuda, not '" + v + "'";
        return false;
      }
      o.device = v;
    } else if (arg == "--replay") {
      if (!need(&v)) return false;
      o.replayDir = v;
    } else if (arg == "--nccl") {
      if (!need(&v)) return false;
      o.nccl = v;
    } else if (arg == "--json") {
      if (!need(&v)) return false;
      o.jsonPath = v;
    } else if (arg == "--junit") {
      if (!need(&v)) return false;
      o.junitPath = v;
    } else if (arg == "--exec-worker") {
      if (!need(&o.execWorker)) return false;
    } else if (arg == "--rendezvous") {
      if (!need(&v)) return false;
      o.rendezvous = v;
    } else if (arg == "--time-scale" || arg == "--deadline") {
      double d = 0;
      if (!need(&v)) return false;
      if (!toNumber(v, &d)) {
        *error = arg + " needs a positive number, not '" + v + "'";
        return false;
      }
      if (arg == "--time-scale")
        o.timeScale = d;
      else
        o.deadline = d;
    } else if (arg == "--rank" || arg == "--size") {
      int n = 0;
      if (!need(&v)) return false;
      if (!toInt(v, &n)) {
        *error = arg + " needs a non-negative integer, not '" + v + "'";
        return false;
      }
      (arg == "--rank" ? o.rank : o.size) = n;
    } else {
      *error = "unknown argument '" + std::string(argv[i]) + "'";
      return false;
    }
  }
  if (o.size < 1 || o.rank >= o.size) {
    *error =
        "rank " + std::to_string(o.rank) + " is outside a world of size " + std::to_string(o.size);
    return false;
  }
  if (o.size > 1 && o.rendezvous.empty()) {
    *error =
        "a world of " + std::to_string(o.size) +
        " processes needs --rendezvous HOST:PORT (or NCCLNET_CONFORMANCE_RENDEZVOUS): rank 0's "
        "address, reachable from every node";
    return false;
  }
  *out = o;
  return true;
}

}  // namespace conformance
