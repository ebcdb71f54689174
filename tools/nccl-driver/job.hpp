// SPDX-License-Identifier: Apache-2.0
// One job: every rank of one subject in one round, each rank a process of
// its own started from this executable (--worker), with the subject's
// environment, its own NCCL_HOSTID and NCCL's log captured. The launcher
// waits with the job's deadline, then judges the job from the exit codes,
// the result files and the logs (net_proof.hpp).
#pragma once

#include <string>
#include <vector>

#include "net_proof.hpp"
#include "options.hpp"

namespace nccldriver {

struct PointResult {
  Op op = Op::AllReduce;
  size_t bytes = 0;
  double us = 0;  // the slowest rank's time per iteration
  bool ok = true;
};

struct JobOutcome {
  std::string subject;
  int round = 0;
  // ok, wrong-result, not-proven, violation, nccl-error, hang, crash,
  // setup-failed, survivor-hang, survivor-no-error
  std::string status = "ok";
  std::string detail;  // one line: why, and which rank
  NetProof proof;
  std::vector<PointResult> points;
  int ncclVersion = 0;
  double seconds = 0;
  std::vector<std::string> events;  // "rank 1: aborted 0.012", ...
  std::vector<std::string> logs;    // each rank's log file

  bool ok() const { return status == "ok"; }
};

// `self`: this executable; `args`: the command line the ranks get, before
// the worker's own options.
JobOutcome runJob(const Options& o, const Subject& subject, int round, int jobIndex,
                  const std::string& self, const std::vector<std::string>& args);

// The ranks this process launches: all of them, or under mpirun the one
// whose OMPI_COMM_WORLD_RANK (or PMI_RANK) this is.
struct LocalRanks {
  int first = 0;
  int count = 0;
  int world = 0;
};
LocalRanks localRanks(const Options& o);

// Set by SIGINT/SIGTERM: the launcher kills its ranks and stops.
bool interrupted();
void catchInterrupts();

}  // namespace nccldriver
