// SPDX-License-Identifier: Apache-2.0
// nccl-driver's command line: what to run (ops, sizes, ranks), against
// which subjects (plugins or NCCL's own transports, each an environment)
// for how many alternating rounds, and which fault to plant. The same
// options reach every rank's process, which adds --worker and --run-dir.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives.hpp"
#include "ncclnet_cli.hpp"

namespace nccldriver {

using EnvVar = std::pair<std::string, std::string>;

// A subject: one way of running the job (a plugin, NCCL's Socket at some
// setting), given as the environment its ranks get.
struct Subject {
  std::string name;
  std::vector<EnvVar> env;
  // The network NCCL must use on every channel: the subject's NCCL_NET,
  // else --expect-net, else the caller's NCCL_NET; empty accepts any
  // network (never P2P or SHM).
  std::string expectedNetwork(const std::string& fallback) const;
  // Whether NCCL_COLLNET_ENABLE, the subject's else `fallback` (the
  // caller's), turns CollNet on (NCCL reads it with strtol: init.cc).
  bool asksForCollNet(const std::string& fallback) const;
};

struct Options {
  int ranks = 2;
  std::vector<Op> ops = defaultOps();
  size_t minBytes = 8;
  size_t maxBytes = size_t(256) << 20;
  int factor = 4;  // sizes grow by this factor; maxBytes is always a point
  int iters = 10;
  int warmup = 2;
  std::string expectNet;
  std::vector<EnvVar> commonEnv;  // --env before the first --subject
  std::vector<Subject> subjects;  // empty: one subject, "job", the caller's environment
  int rounds = 1;
  bool mps = false;
  double timeoutSec = 600;  // a job's whole time, every rank's process included
  std::string jsonPath;
  std::string runDir;     // logs, id files and results; a fresh /tmp folder by default
  bool sameHost = false;  // leave NCCL_HOSTID alone (real hosts, or 2 GPUs of one)
  int initCycles = 0;     // init, one small all-reduce, destroy: this many times, then the ops
  int killRank = -1;      // this rank dies by SIGKILL killAfterMs into its traffic
  int killAfterMs = 500;
  double errorBoundSec = 60;  // survivors of a killed rank must fail within this
  int abortAfterMs = -1;      // every rank calls ncclCommAbort this far into its traffic
  // After the ops, a one-way 8 KiB broadcast that every rank but the root
  // starts this late, while the root destroys its communicator as soon as
  // its part is done: NCCL has no barrier in ncclCommDestroy, so the
  // root's closeSend meets bytes its peers have not read (rule 38).
  int tailSkewMs = -1;
  // Instead of the ops: a send/recv ring in which each rank sends 8 KiB and
  // its peer receives 4 KiB, a user's mismatch that NCCL learns of only
  // from the plugin's truncation error (rule 32). Passes when every rank
  // ends with NCCL's error.
  bool truncateP2p = false;
  int worker = -1;       // set in a rank's own process: its rank
  int workerIndex = 0;   // which job of the run the worker belongs to (its file names)
  bool version = false;  // --version: print the version, run nothing
  bool probe = false;    // --probe: print the NCCL and GPUs found, run nothing

  bool faultPlanted() const { return killRank >= 0 || abortAfterMs >= 0; }
  bool expectsNcclError() const { return truncateP2p; }
  // The sizes of one op's points, in order.
  std::vector<size_t> sizes() const;
  // The subjects to run, with the common environment in front of each.
  std::vector<Subject> effectiveSubjects() const;
};

// Parses argv (argv[0] excluded) into *out. kHelp carries the --help text;
// kError one line saying which argument and why.
ncclnet::cli::Parsed parseOptions(const std::vector<std::string>& args, Options* out);

// "64K" -> 65536; K, M and G are powers of 1024. nullopt on anything else.
std::optional<size_t> parseSize(const std::string& text);

}  // namespace nccldriver
