// SPDX-License-Identifier: Apache-2.0
// Nccl: the end-to-end tier. Real NCCL jobs over the plugin under test,
// wrapped by the checker, each rank a process of its own with its own
// NCCL_HOSTID so that NCCL treats them as separate hosts and every byte
// crosses the plugin, even on one GPU (tools/nccl-driver). A job passes
// when nccl-driver proves from NCCL's log that every channel used the
// plugin, every element of every output is exact, the checker saw no
// violation, and it ended within its time. The scenarios vary what NCCL
// varies: protocols, shared buffers and comms, GPUDirect, channel counts,
// p2p against collectives, communicator churn, abort and a dead rank; and
// what only a job that goes wrong shows: a user's size mismatch, which NCCL
// learns of only from the plugin, and a rank that destroys its
// communicator before its peers have read what it sent.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ncclnet/abi/net.h"  // NCCLNET_ABI_OLDEST, NEWEST: CollNet tables follow them
#include "scenario/nccl_job.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

struct Job {
  std::vector<std::string> args;  // nccl-driver's, besides what every job gets
  std::vector<std::pair<std::string, std::string>> env;
  bool wantsGdr = false;  // the scenario is about GPUDirect RDMA: NCCL must have used it
};

// Runs `argv` with `env` added, its output into `log`, for at most `limit`
// seconds. Returns the wait status, or -1 when it was killed at the limit.
int runFor(const std::vector<std::string>& argv,
           const std::vector<std::pair<std::string, std::string>>& env, const std::string& log,
           double limit) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The rule a checker line names ("... NET/check rule 35 CompletionReportsSizes: ..."),
// or `fallback`.
Rule ruleOfViolation(const std::string& text, Rule fallback) {
  size_t at = text.find("NET/check rule ");
  if (at == std::string::npos) return fallback;
  const RuleInfo* named = findRule(std::atoi(text.c_str() + at + 15));
  return named != nullptr ? named->rule : fallback;
}

// nccl-driver's verdict line for the job ("PASS job round 1 (..): ..." or
// "FAIL job round 1 (..): status: detail").
std::string verdictLine(const std::string& log) {
  std::ifstream in(log);
  std::string line, found;
  while (std::getline(in, line))
    if (line.rfind("PASS ", 0) == 0 || line.rfind("FAIL ", 0) == 0) found = line;
  return found;
}

void runJob(Ctx& c, Rule rule, const Job& job) {
  const NcclJobHost& host = ncclJobHost();
  if (!host.usable()) skip("requires a real NCCL job: %s", host.whyNot.c_str());
  char dirTemplate[] = "/tmp/ncclnet-conformance-nccl.XXXXXX";
  if (mkdtemp(dirTemplate) == nullptr) fail(rule, "cannot make a folder under /tmp");
  std::string dir = dirTemplate;
  std::string plugin = c.plugin().path();
  std::string name = c.plugin().name();
  std::vector<std::pair<std::string, std::string>> env = {{"NCCL_NET", name}};
  if (!host.checker.empty()) {
    env.push_back({"NCCL_NET_PLUGIN", host.checker});
    env.push_back({"NCCLNET_CHECK_PLUGIN", plugin});
  } else {
    env.push_back({"NCCL_NET_PLUGIN", plugin});
    c.note("the checker (libnccl-net-sdk-check.so) was not found: the job runs unwrapped");
  }
  // NCCL 2.28 dlcloses the plugin when its last communicator goes and
  // clears the name it was loaded by (src/plugin/net.cc ncclNetPluginUnload),
  // so a later communicator would look for libnccl-net.so: one reference
  // held for the process keeps the plugin NCCL_NET_PLUGIN named.
  env.push_back({"NCCL_NET_PLUGIN_REF_COUNT", "1"});
  for (const auto& e : job.env) env.push_back(e);

  // The driver's own limit ends its ranks well before this rank's deadline.
  double limit = c.syncLimit();
  std::vector<std::string> argv = {host.driver,      "--timeout", format("%.0f", limit * 0.75),
                                   "--run-dir",      dir,         "--json",
                                   dir + "/job.json"};
  argv.insert(argv.end(), job.args.begin(), job.args.end());
  std::string where = "(logs: " + dir + ")";
  std::string command;
  for (const auto& [k, v] : job.env) command += k + "=" + v + " ";
  for (size_t i = 1; i < argv.size(); i++) command += argv[i] + " ";
  c.activity("a real NCCL job: " + command);
  std::string log = dir + "/driver.log";
  int status = runFor(argv, env, log, limit);
  std::string verdict = verdictLine(log);
  if (status == -1)
    fail(rule, "nccl-driver was still running after %.0f s %s", limit, where.c_str());
  if (verdict.rfind("PASS ", 0) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    c.note(verdict.substr(5));
    std::error_code ignored;  // a passing job's folder holds nothing to keep
    std::filesystem::remove_all(dir, ignored);
    if (job.wantsGdr && verdict.find("GPUDirect RDMA") == std::string::npos)
      skip(
          "NCCL %s did not use GPUDirect RDMA through the plugin (its topology or the GPU "
          "refused it), so the job proved nothing about it: %s",
          host.ncclVersion.c_str(), verdict.c_str());
    return;
  }
  if (verdict.empty())
    fail(rule, "nccl-driver ended (status %d) without judging the job %s", status, where.c_str());
  std::string text = verdict.substr(5);
  // A checker violation is judged under the rule the checker names; the
  // fault scenarios under their own.
  Rule judged =
      text.find(": violation: ") != std::string::npos ? ruleOfViolation(text, rule) : rule;
  fail(judged, "NCCL %s: %s %s", host.ncclVersion.c_str(), text.c_str(), where.c_str());
}

// Sizes: every protocol's range (NCCL's tuning picks LL for the smallest,
// LL128 and Simple above) and several chunks per channel, up to 32 MiB.
const std::vector<std::string> kSweep = {"--min-bytes", "8", "--max-bytes", "32M", "--factor", "16",
                                         "--iters",     "3", "--warmup",    "1"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

void everyOp(Ctx& c) {
  runJob(c, Rule::NcclJobsSucceed, {kSweep, {}});
}

template <const char* kProto>
void protocol(Ctx& c) {
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "allreduce,allgather,sendrecv"}), {{"NCCL_PROTO", kProto}}});
}
constexpr char kSimple[] = "Simple";
constexpr char kLL[] = "LL";
constexpr char kLL128[] = "LL128";

void sharedBuffersOff(Ctx& c) {
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "sendrecv,alltoall"}), {{"NCCL_NET_SHARED_BUFFERS", "0"}}});
}

void sharedCommsOff(Ctx& c) {
  runJob(
      c, Rule::NcclJobsSucceed,
      {with(kSweep, {"--ops", "sendrecv,alltoall,allreduce"}), {{"NCCL_NET_SHARED_COMMS", "0"}}});
}

void hostMemory(Ctx& c) {  // GPUDirect off: NCCL stages through host memory
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "allreduce,sendrecv"}), {{"NCCL_NET_GDR_LEVEL", "LOC"}}});
}

void gpuDirect(Ctx& c) {  // CUDA memory registered with regMr
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "allreduce,sendrecv"}),
          {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_NET_GDR_READ", "1"}, {"NCCL_DMABUF_ENABLE", "0"}},
          true});
}

void gpuDirectDmaBuf(Ctx& c) {  // CUDA memory registered with regMrDmaBuf
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "allreduce,sendrecv"}),
          {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_NET_GDR_READ", "1"}, {"NCCL_DMABUF_ENABLE", "1"}},
          true});
}

void oneChannel(Ctx& c) {
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "allreduce,sendrecv"}), {{"NCCL_MAX_NCHANNELS", "1"}}});
}

void manyChannels(Ctx& c) {
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "allreduce,sendrecv"}),
          {{"NCCL_MIN_NCHANNELS", "32"}, {"NCCL_NCHANNELS_PER_NET_PEER", "32"}}});
}

void largeMessages(Ctx& c) {
  runJob(c, Rule::NcclJobsSucceed,
         {{"--ops", "allreduce,sendrecv", "--min-bytes", "256M", "--max-bytes", "1G", "--factor",
           "4", "--iters", "2", "--warmup", "0"},
          {}});
}

void initDestroy(Ctx& c) {
  runJob(c, Rule::InitPerCommunicator,
         {{"--init-cycles", "100", "--ops", "allreduce", "--min-bytes", "1M", "--max-bytes", "1M"},
          {}});
}

void abortDuringTraffic(Ctx& c) {
  runJob(c, Rule::CloseWithRequestsInFlight,
         {{"--abort-after-ms", "1500", "--ops", "allreduce,sendrecv", "--min-bytes", "1M",
           "--max-bytes", "64M", "--factor", "8"},
          {}});
}

void truncation(Ctx& c) {
  runJob(c, Rule::TruncationReported, {{"--truncate-p2p"}, {}});
}

void senderDestroysFirst(Ctx& c) {
  runJob(c, Rule::SendsOutliveClose,
         {{"--ops", "allreduce,sendrecv", "--min-bytes", "8", "--max-bytes", "64K", "--factor",
           "64", "--tail-skew-ms", "700"},
          {}});
}

void rankKilled(Ctx& c) {
  runJob(c, Rule::PeerDeathSurfaces,
         {{"--kill-rank", "1", "--kill-after-ms", "1500", "--error-bound", "60", "--ops",
           "allreduce,sendrecv", "--min-bytes", "1M", "--max-bytes", "64M", "--factor", "8"},
          {}});
}

// CollNet in a real job: NCCL_COLLNET_ENABLE=1 with two fake hosts (each
// rank its own NCCL_HOSTID, so nNodes = 2 = NCCL_COLLNET_NODE_THRESHOLD),
// all-reduce forced onto CollNetChain, the one CollNet algorithm that needs
// neither NVSwitch (CollNetDirect) nor NVLS (graph/tuning.cc). nccl-driver
// fails the job unless every rank's log shows CollNet connections through
// the plugin: NCCL otherwise falls back to point-to-point without a warning
// (init.cc, "Cannot initialize CollNet").
void collNetChain(Ctx& c) {
  bool exported = false;
  for (int v = NCCLNET_ABI_OLDEST; v <= NCCLNET_ABI_NEWEST; ++v)
    exported = exported || c.plugin().symbol(format("ncclCollNetPlugin_v%d", v).c_str()) != nullptr;
  if (!exported) skip("the library exports no ncclCollNetPlugin_vN: NCCL has no CollNet from it");
  runJob(c, Rule::NcclJobsSucceed,
         {with(kSweep, {"--ops", "allreduce"}),
          {{"NCCL_COLLNET_ENABLE", "1"}, {"NCCL_ALGO", "CollNetChain"}}});
}

}  // namespace

void addNcclScenarios(std::vector<Scenario>& out) {
  // One rank each: the job starts its own ranks. minDeadline covers NCCL's
  // set-up on a busy host; a profile may give more.
  auto job = [&](const char* name, Rule rule, void (*run)(Ctx&), const char* summary,
                 double minDeadline, Requirements needs = {}) {
    needs.ncclJob = true;
    out.push_back({.area = "Nccl",
                   .name = name,
                   .rule = rule,
                   .ranks = 1,
                   .needs = needs,
                   .run = run,
                   .summary = summary,
                   .minDeadlineSec = minDeadline});
  };
  job("EveryOperation", Rule::NcclJobsSucceed, everyOp,
      "all-reduce, all-gather, reduce-scatter, broadcast, send/recv, all-to-all, 8 B to 32 MiB, "
      "exact",
      240);
  job("ProtocolSimple", Rule::NcclJobsSucceed, protocol<kSimple>, "NCCL_PROTO=Simple, exact", 180);
  job("ProtocolLL", Rule::NcclJobsSucceed, protocol<kLL>, "NCCL_PROTO=LL, exact", 180);
  job("ProtocolLL128", Rule::NcclJobsSucceed, protocol<kLL128>, "NCCL_PROTO=LL128, exact", 180);
  job("SharedBuffersOff", Rule::NcclJobsSucceed, sharedBuffersOff,
      "NCCL_NET_SHARED_BUFFERS=0: p2p with a buffer per connection, exact", 180);
  job("SharedCommsOff", Rule::NcclJobsSucceed, sharedCommsOff,
      "NCCL_NET_SHARED_COMMS=0: a comm per channel, exact", 180);
  job("HostMemory", Rule::NcclJobsSucceed, hostMemory,
      "GPUDirect off (NCCL_NET_GDR_LEVEL=LOC): NCCL stages through host memory, exact", 180);
  job("GpuDirect", Rule::NcclJobsSucceed, gpuDirect,
      "GPUDirect RDMA on CUDA memory through regMr (NCCL_DMABUF_ENABLE=0), exact", 180,
      {.cudaMemory = true});
  job("GpuDirectDmaBuf", Rule::NcclJobsSucceed, gpuDirectDmaBuf,
      "GPUDirect RDMA on CUDA memory through regMrDmaBuf, exact", 180, {.dmaBuf = true});
  job("OneChannel", Rule::NcclJobsSucceed, oneChannel, "NCCL_MAX_NCHANNELS=1, exact", 180);
  job("CollNetChain", Rule::NcclJobsSucceed, collNetChain,
      "NCCL_COLLNET_ENABLE=1: all-reduce on CollNetChain through the library's CollNet table, "
      "8 B to 32 MiB, exact, every rank's log showing CollNet connections through it",
      180);
  job("ManyChannels", Rule::NcclJobsSucceed, manyChannels,
      "32 channels per peer through the plugin, exact", 180);
  job("LargeMessages", Rule::NcclJobsSucceed, largeMessages,
      "all-reduce and send/recv of 256 MiB and 1 GiB, exact", 300);
  job("InitDestroyCycles", Rule::InitPerCommunicator, initDestroy,
      "100 communicators created, used and destroyed in turn, then traffic", 400);
  job("AbortDuringTraffic", Rule::CloseWithRequestsInFlight, abortDuringTraffic,
      "ncclCommAbort on every rank 1.5 s into traffic returns, and the job ends", 180);
  job("TruncationFailsTheJob", Rule::TruncationReported, truncation,
      "each rank sends 8 KiB to a peer that receives 4 KiB (a user's mismatch): NCCL's error on "
      "every rank, from the plugin's truncation error",
      120);
  job("SenderDestroysFirst", Rule::SendsOutliveClose, senderDestroysFirst,
      "a broadcast's root destroys its communicator while the others start their part 0.7 s late: "
      "every byte still arrives",
      120);
  job("RankKilled", Rule::PeerDeathSurfaces, rankKilled,
      "a rank killed 1.5 s into traffic: the other gets NCCL's error within 60 s, not a hang", 180);
}

}  // namespace conformance
