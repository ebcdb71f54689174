// SPDX-License-Identifier: Apache-2.0
// The command line of ncclnet-conformance (gtest's own --gtest_* flags are
// split off first, splitGtestFlags, and keep their meaning).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ncclnet_cli.hpp"

namespace conformance {

struct Options {
  std::optional<std::string> plugin;   // --plugin NAME|PATH (else profile, else NCCL_NET_PLUGIN)
  std::optional<std::string> netName;  // --net NAME (NCCL_NET)
  std::optional<std::string> profilePath;  // --profile FILE
  std::optional<std::string> abi;          // --abi all|vN
  std::optional<std::string> nccl;         // --nccl 2.23|2.28|2.30
  std::string jsonPath;                    // --json FILE
  std::string junitPath;                   // --junit FILE
  std::optional<double> timeScale;         // --time-scale X
  std::optional<double> deadline;          // --deadline SECONDS
  std::optional<std::string> device;       // --device cpu|cuda (Transport scenarios)
  std::optional<std::string> replayDir;    // --replay DIR (Replay.Recorded only)
  bool strict = false;                     // --strict
  bool list = false;                       // --list
  bool listRules = false;                  // --list-rules
  bool printEnv = false;                   // --print-env
  bool verbose = false;                    // --verbose
  bool version = false;                    // --version
  bool noProgress = false;                 // --no-progress (also when $CI is set)
  // Placement: local by default; under mpirun/srun from their environment.
  int rank = 0;
  int size = 1;
  std::string rendezvous;  // --rendezvous HOST:PORT
  // --exec-worker SPEC (internal): this process is one rank of a scenario
  // that needs a process of its own, exec'd by the coordinator's fork.
  std::string execWorker;
};

// Parses argv (argv[0] is the program; gtest's flags already split off).
// kHelp carries the --help text; kError one line that says what is wrong.
ncclnet::cli::Parsed parseOptions(int argc, char** argv, Options* out);

// The --help text.
std::string helpText();

// Moves gtest's own flags (--gtest_*, as gtest spells them) from `args`
// into the result, keeping the order of both; the suite's options stay.
std::vector<std::string> splitGtestFlags(std::vector<std::string>* args);

// The command, for a POSIX shell, that runs again what `run` ran, limited
// to the tests `filter` names (none: every test): each option that changes
// what runs or how it is judged (--plugin, --net, --profile, --abi, --nccl,
// --time-scale, --deadline, --strict, --device, --replay), so that a failure
// shows again as it was. Left out: where results go (--json, --junit) and
// how progress shows (--verbose, --no-progress); the placement (--rank,
// --size, --rendezvous), which differs per process and comes again from the
// launcher; and what only one process is ever given (--exec-worker).
// parseOptions reads the line back into the same options (a test checks).
std::string rerunCommand(const Options& run, const std::string& filter);

// A gtest filter in which every pattern names a test as the catalogue and the
// profiles do (`Data.ZeroByteMessages`, `Faults.*`) also matches it in every
// ABI version: such patterns get a `*/` prefix. Patterns that already name a
// version (`v12/...`) or start with a wildcard are kept.
std::string qualifyFilter(const std::string& filter);

// --profile NAME (no '/', no file of that name here) is looked up among the
// installed profiles: <prefix>/share/ncclnet-sdk/profiles/NAME[.yaml], the
// prefix being the one this executable was installed under.
std::string resolveProfile(const std::string& profile);

// Where resolveProfile looks, for --help and error messages.
std::string installedProfilesDir();

}  // namespace conformance
