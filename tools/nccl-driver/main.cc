// SPDX-License-Identifier: Apache-2.0
// nccl-driver: real NCCL jobs over a network plugin, one process per rank,
// every result checked, proof from NCCL's own log that every channel went
// through the network asked for, and subjects (plugins, NCCL's transports)
// side by side in alternating rounds. `nccl-driver --help` says how.
//
// The launcher (this process) never touches CUDA: it starts the MPS daemon
// when asked, then each rank as `nccl-driver ... --worker R`.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "job.hpp"
#include "mps.hpp"
#include "ncclnet/host/build_info.hpp"
#include "options.hpp"
#include "report.hpp"
#include "worker.hpp"

namespace {

std::string selfPath(const char* argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return argv0;
  buf[n] = '\0';
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nccldriver;
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  ncclnet::cli::Parsed parsed = parseOptions(args, &o);
  if (parsed.kind == ncclnet::cli::Parsed::Kind::kHelp) {
    std::fputs(parsed.text.c_str(), stdout);
    return 0;
  }
  if (parsed.kind == ncclnet::cli::Parsed::Kind::kError)
    return ncclnet::cli::usageError("nccl-driver", parsed.text);
  if (o.version) {
    std::printf("%s\n", ncclnet::host::versionLine("nccl-driver").c_str());
    return 0;
  }
  if (o.probe) return printProbe();
  if (o.worker >= 0) return runWorker(o);

  LocalRanks local = localRanks(o);
  if (local.count != o.ranks) o.ranks = local.world;  // under mpirun the world decides
  if (o.runDir.empty()) {
    char dir[] = "/tmp/nccl-driver.XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      std::fprintf(stderr, "nccl-driver: cannot make a run folder under /tmp\n");
      return 2;
    }
    o.runDir = dir;
  } else {
    mkdir(o.runDir.c_str(), 0755);
  }
  catchInterrupts();
  MpsDaemon mps;
  if (o.mps && local.first == 0) {
    std::string why;
    if (!mps.start(&why)) {
      std::fprintf(stderr, "nccl-driver: --mps: %s\n", why.c_str());
      return 2;
    }
    std::fprintf(stderr, "nccl-driver: MPS daemon started\n");
  }
  // The ranks get the caller's arguments and their own --ranks (mpirun's).
  std::vector<std::string> rankArgs = args;
  rankArgs.push_back("--ranks");
  rankArgs.push_back(std::to_string(o.ranks));
  rankArgs.push_back("--run-dir");
  rankArgs.push_back(o.runDir);

  std::vector<Subject> subjects = o.effectiveSubjects();
  std::vector<JobOutcome> jobs;
  bool allOk = true;
  std::printf("nccl-driver: %d ranks, %zu subject(s), %d round(s), logs in %s\n", o.ranks,
              subjects.size(), o.rounds, o.runDir.c_str());
  for (int round = 0; round < o.rounds && !interrupted(); round++)
    for (const Subject& s : subjects) {
      if (interrupted()) break;
      JobOutcome j = runJob(o, s, round, int(jobs.size()), selfPath(argv[0]), rankArgs);
      printJob(std::cout, j);
      if (subjects.size() == 1 && o.rounds == 1) printResults(std::cout, o, j);
      std::cout.flush();
      allOk = allOk && j.ok();
      jobs.push_back(std::move(j));
    }
  if (!jobs.empty() && jobs.front().ncclVersion)
    std::printf("NCCL version code %d\n", jobs.front().ncclVersion);
  std::vector<PointSummary> rows = summarize(o, subjects, jobs);
  if (subjects.size() > 1 || o.rounds > 1) printTable(std::cout, subjects, rows);
  if (!o.jsonPath.empty()) {
    std::ofstream json(o.jsonPath);
    writeJson(json, o, subjects, jobs, rows, mps.running());
  }
  std::printf("SUMMARY %s\n", allOk && !interrupted() ? "ok" : "FAIL");
  return allOk && !interrupted() ? 0 : 1;
}
