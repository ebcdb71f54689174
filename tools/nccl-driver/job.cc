// SPDX-License-Identifier: Apache-2.0
#include "job.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "run_files.hpp"
#include "worker.hpp"

namespace nccldriver {

namespace {

using Clock = std::chrono::steady_clock;

// The one piece of global state: a signal handler can only set a flag.
volatile std::sig_atomic_t gInterrupted = 0;
void onInterrupt(int) {
  gInterrupted = 1;
}

// Time the ranks get beyond the job's limit to notice it themselves.
constexpr double kGraceSec = 15;

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  bool exited = false;
  int status = 0;
  double exitAt = 0;  // seconds after the job started
};

// In the child: the rank's environment and log, then exec.
[[noreturn]] void execRank(const Options& o, const Subject& subject, int rank,
                           const RunFiles& files, const std::string& self,
                           std::vector<std::string> args) {
  setpgid(0, 0);
  for (const EnvVar& e : subject.env) setenv(e.first.c_str(), e.second.c_str(), 1);
  // One host per rank: NCCL compares host hashes (src/misc/utils.cc
  // getHostHash reads NCCL_HOSTID) before it tries P2P or SHM.
  if (!o.sameHost) setenv("NCCL_HOSTID", ("nccl-driver-host" + std::to_string(rank)).c_str(), 1);
  // The proof needs the channel lines (INIT) and the network's (NET).
  setenv("NCCL_DEBUG", "INFO", 1);
  std::string subsys = envOr("NCCL_DEBUG_SUBSYS", "");
  if (subsys.empty() || subsys[0] != '^') {
    subsys = subsys.empty() ? "INIT,NET" : subsys + ",INIT,NET";
    setenv("NCCL_DEBUG_SUBSYS", subsys.c_str(), 1);
  }
  unsetenv("NCCL_DEBUG_FILE");  // NCCL writes to stdout, which is the log
  int fd = open(files.log(rank).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
  }
  args.insert(args.begin(), self);
  for (const std::string& extra :
       {std::string("--worker"), std::to_string(rank), std::string("--worker-index"),
        std::to_string(files.job), std::string("--run-dir"), files.dir})
    args.push_back(extra);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(self.c_str(), argv.data());
  std::fprintf(stderr, "nccl-driver: exec %s: %s\n", self.c_str(), std::strerror(errno));
  _exit(kWorkerSetupFailed);
}

// What one rank's result file says.
struct RankResult {
  int version = 0;
  std::map<std::pair<int, size_t>, PointResult> points;
  std::vector<std::string> mismatches, errors, events;
  bool done = false;
};

RankResult readResult(const std::string& path) {
  RankResult r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    std::string rest = line.size() > kind.size() ? line.substr(kind.size() + 1) : "";
    if (kind == "VERSION") {
      words >> r.version;
    } else if (kind == "POINT") {
      std::string op, verdict;
      PointResult p;
      words >> op >> p.bytes >> p.us >> verdict;
      if (auto o = opByName(op)) p.op = *o;
      p.ok = verdict == "ok";
      r.points[{int(p.op), p.bytes}] = p;
    } else if (kind == "MISMATCH") {
      r.mismatches.push_back(rest);
    } else if (kind == "ERROR") {
      r.errors.push_back(rest);
    } else if (kind == "EVENT") {
      r.events.push_back(rest);
    } else if (kind == "DONE") {
      r.done = true;
    }
  }
  return r;
}

std::string describeExit(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

void setStatus(JobOutcome& j, const std::string& status, const std::string& detail) {
  if (!j.ok()) return;  // the first cause found is the one reported
  j.status = status;
  j.detail = detail;
}

void judgeProof(JobOutcome& job) {
  if (!job.proof.proven()) setStatus(job, "not-proven", job.proof.describe());
  if (!job.proof.violations.empty())
    setStatus(job, "violation",
              std::to_string(job.proof.violations.size()) +
                  " checker violation(s); first: " + job.proof.violations[0]);
}

}  // namespace

bool interrupted() {
  return gInterrupted != 0;
}

void catchInterrupts() {
  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
}

LocalRanks localRanks(const Options& o) {
  for (auto [rankVar, sizeVar] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                  std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const char* r = std::getenv(rankVar);
    const char* s = std::getenv(sizeVar);
    if (r && s) return LocalRanks{std::atoi(r), 1, std::atoi(s)};
  }
  return LocalRanks{0, o.ranks, o.ranks};
}

JobOutcome runJob(const Options& o, const Subject& subject, int round, int jobIndex,
                  const std::string& self, const std::vector<std::string>& args) {
  JobOutcome job;
  job.subject = subject.name;
  job.round = round;
  RunFiles files{o.runDir, jobIndex};
  LocalRanks local = localRanks(o);
  Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  // A run folder given again holds the last run's ids: rank 0's launcher
  // clears them, so no rank joins a communicator that is gone.
  if (local.first == 0) {
    std::remove(files.uniqueId("main").c_str());
    for (int c = 0; c < o.initCycles; c++) std::remove(files.uniqueId(std::to_string(c)).c_str());
  }
  std::vector<RankProcess> ranks;
  for (int r = local.first; r < local.first + local.count; r++) {
    std::remove(files.result(r).c_str());
    pid_t pid = fork();
    if (pid == 0) execRank(o, subject, r, files, self, args);
    ranks.push_back(RankProcess{r, pid});
    job.logs.push_back(files.log(r));
  }

  // Wait: the job's limit for everyone; once a planted victim is gone, the
  // error bound for the survivors.
  double victimGoneAt = -1;
  bool hung = false, survivorsHung = false;
  for (;;) {
    bool all = true;
    for (RankProcess& p : ranks) {
      if (p.exited) continue;
      if (waitpid(p.pid, &p.status, WNOHANG) == p.pid) {
        p.exited = true;
        p.exitAt = elapsed();
        if (p.rank == o.killRank) victimGoneAt = p.exitAt;
      } else {
        all = false;
      }
    }
    if (all) break;
    bool late = elapsed() > o.timeoutSec + kGraceSec;
    bool survivorsLate = victimGoneAt >= 0 && elapsed() > victimGoneAt + o.errorBoundSec;
    if (late || survivorsLate || interrupted()) {
      hung = late;
      survivorsHung = survivorsLate && !late;
      for (RankProcess& p : ranks) {
        if (p.exited) continue;
        kill(-p.pid, SIGKILL);  // the rank's process group: whatever it started too
        kill(p.pid, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  job.seconds = elapsed();

  // Judge: the network first (a job that ran elsewhere proves nothing),
  // then the checker, results, and how each rank ended.
  std::vector<NetProof> proofs;
  std::vector<RankResult> results;
  std::string expected =
      subject.expectedNetwork(o.expectNet.empty() ? envOr("NCCL_NET", "") : o.expectNet);
  for (const RankProcess& p : ranks) {
    std::ifstream log(files.log(p.rank));
    proofs.push_back(proveNetwork(log, expected));
    results.push_back(readResult(files.result(p.rank)));
  }
  job.proof = mergeProofs(proofs);
  // What the ops must show: channels for NCCL's own operations, a GIN
  // plugin for the device API's.
  job.proof.needGin = std::count(o.ops.begin(), o.ops.end(), Op::GinAllToAll) > 0;
  job.proof.needChannels = !job.proof.needGin || o.ops.size() > 1;
  job.proof.needCollNet = subject.asksForCollNet(envOr("NCCL_COLLNET_ENABLE", ""));
  // The checker's lines about the caller: NCCL's own doing (an abort with
  // requests in flight, rule 51), reported, never held against the plugin.
  for (const std::string& c : job.proof.callerLines)
    job.events.push_back("checker, on NCCL's calls: " + c.substr(c.find("NET/check rule ")));
  if (interrupted()) setStatus(job, "interrupted", "stopped by a signal");
  if (hung)
    setStatus(job, "hang",
              "not done " + std::to_string(int(o.timeoutSec + kGraceSec)) +
                  " s after it started; every rank was killed");
  // With connections printed, a job that ran elsewhere proves nothing, so
  // the proof is judged first; with none, a rank's own failure (no GPU,
  // NCCL's init) is the cause and the proof only its consequence.
  if (job.proof.connections > 0 || job.proof.ginRanks > 0) judgeProof(job);
  for (size_t i = 0; i < ranks.size(); i++) {
    const RankProcess& p = ranks[i];
    const RankResult& r = results[i];
    std::string who = "rank " + std::to_string(p.rank) + ": ";
    if (r.version) job.ncclVersion = r.version;
    for (const std::string& e : r.events) job.events.push_back(who + e);
    if (!r.mismatches.empty()) setStatus(job, "wrong-result", who + r.mismatches[0]);
    bool victim = p.rank == o.killRank;
    if (victim) {
      if (!(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGKILL))
        setStatus(job, "fault-not-planted",
                  who + "was to die by SIGKILL, but " + describeExit(p.status));
      continue;
    }
    if (o.killRank >= 0) {
      // A survivor must fail with NCCL's error, within the bound.
      if (survivorsHung && WIFSIGNALED(p.status))
        setStatus(job, "survivor-hang",
                  who + "still running " + std::to_string(o.errorBoundSec) + " s after rank " +
                      std::to_string(o.killRank) + " died");
      else if (!WIFEXITED(p.status) || WEXITSTATUS(p.status) != kWorkerNcclError)
        setStatus(job, "survivor-no-error",
                  who + describeExit(p.status) + (r.errors.empty() ? "" : ": " + r.errors[0]) +
                      " instead of NCCL's error");
      else
        job.events.push_back(who + "failed " +
                             std::to_string(std::max(0.0, p.exitAt - victimGoneAt)).substr(0, 5) +
                             " s after its peer died: " + r.errors[0]);
      continue;
    }
    if (o.expectsNcclError()) {
      // Passes only with NCCL's error: success means the mismatch went
      // unnoticed, anything else is judged as usual.
      if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == kWorkerNcclError) {
        job.events.push_back(who +
                             "NCCL's error, as expected: " + (r.errors.empty() ? "" : r.errors[0]));
        continue;
      }
      if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == kWorkerWrongResult) {
        setStatus(job, "error-missing", who + (r.errors.empty() ? "" : r.errors[0]));
        continue;
      }
    }
    if (WIFSIGNALED(p.status) && !hung)
      setStatus(job, "crash", who + describeExit(p.status));
    else if (WIFEXITED(p.status) && WEXITSTATUS(p.status) != kWorkerOk) {
      int code = WEXITSTATUS(p.status);
      std::string why = who + describeExit(p.status) + (r.errors.empty() ? "" : ": " + r.errors[0]);
      // Any other code is not the driver's: the plugin or NCCL ended the
      // process (exit() from a signal handler, say).
      setStatus(job,
                code == kWorkerWrongResult   ? "wrong-result"
                : code == kWorkerNcclError   ? "nccl-error"
                : code == kWorkerDeadline    ? "hang"
                : code == kWorkerSetupFailed ? "setup-failed"
                                             : "exited",
                why);
    } else if (!hung && !r.done) {
      setStatus(job, "setup-failed", who + "ended without finishing its result file");
    } else if (o.abortAfterMs >= 0 && !hung &&
               std::none_of(r.events.begin(), r.events.end(),
                            [](const std::string& e) { return e.rfind("aborted", 0) == 0; })) {
      setStatus(job, "fault-not-planted", who + "ended without calling ncclCommAbort");
    }
  }
  judgeProof(job);
  // Points: the slowest rank's time, failed if any rank's check failed.
  std::map<std::pair<int, size_t>, PointResult> merged;
  for (const RankResult& r : results)
    for (const auto& [key, p] : r.points) {
      auto [it, fresh] = merged.emplace(key, p);
      if (!fresh) {
        it->second.us = std::max(it->second.us, p.us);
        it->second.ok = it->second.ok && p.ok;
      }
    }
  for (Op op : o.ops)
    for (size_t bytes : o.sizes()) {
      auto it = merged.find({int(op), bytes});
      if (it != merged.end()) job.points.push_back(it->second);
    }
  for (const PointResult& p : job.points)
    if (!p.ok)
      setStatus(job, "wrong-result",
                std::string(opName(p.op)) + " " + std::to_string(p.bytes) + " bytes");
  return job;
}

}  // namespace nccldriver
