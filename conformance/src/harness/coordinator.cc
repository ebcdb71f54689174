// SPDX-License-Identifier: Apache-2.0
// One scenario run: start, route, watch, conclude.
#include "harness/coordinator.hpp"

#include <sys/syscall.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "harness/crash_report.hpp"

namespace conformance {

namespace {
constexpr double kExitGraceSec = 5;    // after a deadline or a final EOF
constexpr int kLastPasses = 3;         // polls after every rank exited
constexpr double kStackWaitSec = 0.5;  // for ranks past the deadline to send their stacks
std::string seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f s", s);
  return buffer;
}
}  // namespace

struct Coordinator::Rank {
  int host = 0;  // world rank whose node runs it
  pid_t pid = -1;
  std::unique_ptr<Channel> channel;
  bool eof = false;
  bool exited = false;
  int status = 0;
  bool hasVerdict = false;
  double verdictAt = 0;  // ms since the epoch: the first rank to fail is usually the cause
  RankResult result;     // what it reported, when hasVerdict
  bool expectExit = false;
  std::string activity = "starting (loading the plugin, joining the control channel)";
  std::string crash;               // what its crash reporter said before it died
  bool crashInShouldStep = false;  // ... in the step a SHOULD scenario exercises
  double activitySince = 0;
  bool gathering = false;
  uint32_t gatherSeq = 0;
  std::string gatherLabel;
  std::string payload;
  double gatherDeadline = 0;
};

struct Coordinator::Run {
  uint64_t id = 0;
  std::vector<Rank> ranks;
  std::vector<std::unique_ptr<Channel>> unidentified;  // connected, no Hello yet
  std::set<uint32_t> failedGathers;
  std::string gatherFailure;
  std::vector<std::string> notes;
  std::map<std::string, uint64_t> counters;
  double start = 0;
  bool expired = false;  // the deadline passed: ranks are being stopped
};

Coordinator::~Coordinator() {
  shutdown();
  if (listenFd_ >= 0) close(listenFd_);
}

bool Coordinator::open(const std::string& bindHost, int port, const std::string& advertiseHost,
                       int worldSize, double agentWaitSec, std::string* error) {
  listenFd_ = listenTcp(bindHost, port, &port_, error);
  if (listenFd_ < 0) return false;
  closeInChildren(listenFd_);
  advertiseHost_ = advertiseHost;
  worldSize_ = worldSize;
  agents_.resize(static_cast<size_t>(worldSize));
  double deadline = nowSeconds() + agentWaitSec;
  int missing = worldSize - 1;
  while (missing > 0) {
    pollfd p{listenFd_, POLLIN, 0};
    if (nowSeconds() > deadline) {
      *error = std::to_string(missing) + " of " + std::to_string(worldSize - 1) +
               " agent ranks did not join the rendezvous at " + advertiseHost + ":" +
               std::to_string(port_) + " within " + seconds(agentWaitSec);
      return false;
    }
    if (poll(&p, 1, 100) <= 0) continue;
    int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    auto channel = std::make_unique<Channel>(fd);
    Frame frame;
    if (!channel->receive(&frame) || frame.type != Msg::AgentHello) continue;
    Reader reader(frame.body);
    uint32_t rank = reader.u32();
    if (!reader.ok() || rank == 0 || rank >= agents_.size() || agents_[rank]) continue;
    closeInChildren(fd);
    agents_[rank] = std::move(channel);
    missing--;
  }
  return true;
}

void Coordinator::shutdown() {
  for (auto& agent : agents_) {
    if (agent) agent->send(Msg::Quit);
    agent.reset();
  }
}

Outcome Coordinator::run(const RunRequest& request) {
  Run run;
  run.id = nextRunId_++;
  run.start = nowSeconds();
  run.ranks.resize(static_cast<size_t>(request.ranks));
  for (int i = 0; i < request.ranks; i++) {
    Rank& r = run.ranks[i];
    r.host = i % worldSize_;
    r.activitySince = run.start;
    WorkerSpec spec{run.id, request.scenario, request.version, i, request.ranks, advertiseHost_,
                    port_};
    if (r.host == 0) {
      r.pid = forkWorker(spec, entry_);
      if (r.pid < 0) {
        r.eof = r.exited = true;
        r.status = 1 << 8;
        r.activity = "could not be forked";
      }
    } else {
      agents_[r.host]->send(Msg::Start, Writer()
                                            .u64(spec.runId)
                                            .str(spec.scenario)
                                            .u32(static_cast<uint32_t>(spec.version))
                                            .u32(static_cast<uint32_t>(spec.rank))
                                            .u32(static_cast<uint32_t>(spec.ranks))
                                            .str(spec.controlHost)
                                            .u32(static_cast<uint32_t>(spec.controlPort))
                                            .data());
    }
  }

  double deadline = run.start + request.deadlineSec;
  bool expired = false;
  double exitDeadline = 0;
  double killAt = 0;
  // Once every rank has exited, a few more passes collect what they wrote
  // last: a rank that skips at once can exit before its connection was even
  // accepted, with its verdict waiting in the socket.
  int lastPasses = 0;
  for (;;) {
    bool allExited = true;
    for (const Rank& r : run.ranks) allExited = allExited && r.exited;
    if (allExited && ++lastPasses > kLastPasses) break;
    double now = nowSeconds();
    if (!expired && now > deadline) {
      expired = true;
      run.expired = true;
      askForStacks(run);
      killAt = now + kStackWaitSec;
      exitDeadline = now + kExitGraceSec;
    }
    if (killAt != 0 && now > killAt) {
      killAt = 0;
      killAll(run);
    }
    if (expired && now > exitDeadline) break;  // unreapable: give up on it

    std::vector<pollfd> fds;
    std::vector<int> owner;  // >=0 rank, -1 listen, -2-i unidentified i, -100-h agent h
    fds.push_back(pollfd{listenFd_, POLLIN, 0});
    owner.push_back(-1);
    for (size_t i = 0; i < run.unidentified.size(); i++) {
      fds.push_back(pollfd{run.unidentified[i]->fd(), POLLIN, 0});
      owner.push_back(-2 - static_cast<int>(i));
    }
    for (size_t i = 0; i < run.ranks.size(); i++) {
      if (run.ranks[i].channel && !run.ranks[i].eof) {
        fds.push_back(pollfd{run.ranks[i].channel->fd(), POLLIN, 0});
        owner.push_back(static_cast<int>(i));
      }
    }
    for (size_t h = 1; h < agents_.size(); h++) {
      if (agents_[h]) {
        fds.push_back(pollfd{agents_[h]->fd(), POLLIN, 0});
        owner.push_back(-100 - static_cast<int>(h));
      }
    }
    poll(fds.data(), fds.size(), allExited ? 0 : 20);
    std::vector<size_t> identified;
    for (size_t i = 0; i < fds.size(); i++) {
      if (fds[i].revents == 0) continue;
      int who = owner[i];
      if (who == -1) {
        acceptConnection(run);
      } else if (who <= -100) {
        Channel& agent = *agents_[static_cast<size_t>(-100 - who)];
        bool alive = agent.readAvailable();
        Frame frame;
        while (agent.next(&frame)) handleAgentFrame(run, frame);
        if (!alive) {
          run.notes.push_back("the agent of world rank " + std::to_string(-100 - who) + " left");
          agents_[static_cast<size_t>(-100 - who)].reset();
        }
      } else if (who <= -2) {
        auto& channel = run.unidentified[static_cast<size_t>(-2 - who)];
        bool alive = channel->readAvailable();
        Frame frame;
        if (channel->next(&frame) && frame.type == Msg::Hello) {
          Reader reader(frame.body);
          uint64_t id = reader.u64();
          uint32_t rank = reader.u32();
          if (reader.ok() && id == run.id && rank < run.ranks.size() && !run.ranks[rank].channel) {
            run.ranks[rank].channel = std::move(channel);
            // Frames that followed the Hello in the same read.
            while (run.ranks[rank].channel->next(&frame))
              handleFrame(run, static_cast<int>(rank), frame);
          }
          identified.push_back(static_cast<size_t>(-2 - who));
        } else if (!alive) {
          identified.push_back(static_cast<size_t>(-2 - who));  // stale worker of an old run
        }
      } else {
        Rank& r = run.ranks[static_cast<size_t>(who)];
        bool alive = r.channel->readAvailable();
        Frame frame;
        while (r.channel->next(&frame)) handleFrame(run, who, frame);
        if (!alive) {
          r.eof = true;
          r.gathering = false;
        }
      }
    }
    for (auto it = identified.rbegin(); it != identified.rend(); ++it) {
      run.unidentified.erase(run.unidentified.begin() + static_cast<long>(*it));
    }
    reap(run);
    progressGathers(run);
  }
  return conclude(run, request, expired);
}

void Coordinator::acceptConnection(Run& run) {
  int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  closeInChildren(fd);
  run.unidentified.push_back(std::make_unique<Channel>(fd));
}

void Coordinator::handleFrame(Run& run, int rank, const Frame& frame) {
  Rank& r = run.ranks[static_cast<size_t>(rank)];
  Reader reader(frame.body);
  switch (frame.type) {
    case Msg::Activity:
      r.activity = frame.body;
      r.activitySince = nowSeconds();
      break;
    case Msg::Note: run.notes.push_back("rank " + std::to_string(rank) + ": " + frame.body); break;
    case Msg::ExpectExit: r.expectExit = true; break;
    case Msg::Crash:
      // The first report is the cause (a library's handler may exit() after).
      if (r.crash.empty()) {
        r.crash = crash::describe(frame.body);
        r.crashInShouldStep = crash::inShouldStep(frame.body);
      }
      break;
    case Msg::Counters: {
      uint32_t n = reader.u32();
      for (uint32_t i = 0; i < n && reader.ok(); i++) {
        std::string name = reader.str();
        uint64_t value = reader.u64();
        if (reader.ok()) run.counters[name] += value;
      }
      break;
    }
    case Msg::Verdict:
      // Past the deadline a rank was interrupted for its stack: what it
      // concludes after that is an artefact of the interruption.
      if (run.expired) break;
      r.result.end = static_cast<RankEnd>(reader.u32());
      r.result.rule = static_cast<Rule>(reader.u32());
      r.result.alwaysFails = reader.u32() != 0;
      r.result.text = reader.str();
      r.verdictAt = static_cast<double>(reader.u64());  // when the rank saw it fail
      r.hasVerdict = reader.ok();
      if (r.verdictAt == 0) r.verdictAt = 1e299;  // no failure of its own
      break;
    case Msg::Gather: {
      uint32_t seq = reader.u32();
      uint32_t timeoutMs = reader.u32();
      std::string label = reader.str();
      std::string payload = reader.str();
      if (!reader.ok()) break;
      r.activity = "waiting for every rank at '" + label + "'";
      r.activitySince = nowSeconds();
      if (run.failedGathers.count(seq)) {
        r.channel->send(Msg::GatherFailed, Writer().str(run.gatherFailure).data());
        break;
      }
      r.gathering = true;
      r.gatherSeq = seq;
      r.gatherLabel = label;
      r.payload = std::move(payload);
      r.gatherDeadline = nowSeconds() + timeoutMs / 1000.0;
      break;
    }
    default: break;
  }
}

void Coordinator::handleAgentFrame(Run& run, const Frame& frame) {
  if (frame.type != Msg::Exited) return;
  Reader reader(frame.body);
  uint64_t id = reader.u64();
  uint32_t rank = reader.u32();
  uint32_t status = reader.u32();
  if (!reader.ok() || id != run.id || rank >= run.ranks.size()) return;
  run.ranks[rank].exited = true;
  run.ranks[rank].status = static_cast<int>(status);
}

void Coordinator::reap(Run& run) {
  for (size_t i = 0; i < run.ranks.size(); i++) {
    Rank& r = run.ranks[i];
    if (r.exited || r.pid <= 0) continue;
    int status = 0;
    if (waitpid(r.pid, &status, WNOHANG) == r.pid) {
      r.exited = true;
      r.status = status;
      // What it wrote just before exiting (its verdict) may have arrived
      // after this round's poll: read it before closing the books on it.
      if (r.channel && !r.eof) {
        r.channel->readAvailable();
        Frame frame;
        while (r.channel->next(&frame)) handleFrame(run, static_cast<int>(i), frame);
      }
      r.eof = true;  // a dead process has nothing more to say
    }
  }
}

void Coordinator::failGather(Run& run, const std::string& why) {
  for (Rank& r : run.ranks) {
    if (!r.gathering) continue;
    run.failedGathers.insert(r.gatherSeq);
    r.gathering = false;
    r.channel->send(Msg::GatherFailed, Writer().str(why).data());
  }
  run.gatherFailure = why;
}

void Coordinator::progressGathers(Run& run) {
  // A rank that is gone without announcing it can never arrive: the others
  // learn at once, instead of at their timeout.
  bool anyWaiting = false;
  for (const Rank& r : run.ranks) anyWaiting = anyWaiting || r.gathering;
  if (!anyWaiting) return;
  for (size_t i = 0; i < run.ranks.size(); i++) {
    const Rank& r = run.ranks[i];
    if (!r.eof || r.expectExit) continue;
    std::string why = "rank " + std::to_string(i) + " is gone";
    if (r.hasVerdict && r.result.end == RankEnd::BrokeRule)
      why = "rank " + std::to_string(i) + " failed: " + r.result.text;
    else if (r.hasVerdict && r.result.end == RankEnd::Skipped)
      why = "rank " + std::to_string(i) + " skipped";
    else if (r.exited)
      why += " (it " + describeWaitStatus(r.status) + " while " + r.activity + ")";
    failGather(run, why);
    return;
  }
  // Complete a gather when every rank still taking part is waiting in it.
  bool complete = true;
  uint32_t seq = 0;
  double earliest = 1e300;
  for (const Rank& r : run.ranks) {
    if (r.eof && r.expectExit) continue;
    if (!r.gathering) {
      complete = false;
      continue;
    }
    seq = r.gatherSeq;
    earliest = std::min(earliest, r.gatherDeadline);
  }
  if (complete) {
    Writer all;
    all.u32(static_cast<uint32_t>(run.ranks.size()));
    for (const Rank& r : run.ranks) all.str(r.gathering ? r.payload : "");
    for (Rank& r : run.ranks) {
      if (!r.gathering) continue;
      r.gathering = false;
      r.channel->send(Msg::Gathered, all.data());
    }
    return;
  }
  (void)seq;
  if (nowSeconds() < earliest) return;
  std::string why;
  for (size_t i = 0; i < run.ranks.size(); i++) {
    const Rank& r = run.ranks[i];
    if (r.gathering || (r.eof && r.expectExit)) continue;
    std::string label;
    for (const Rank& w : run.ranks) {
      if (w.gathering) label = w.gatherLabel;
    }
    if (!why.empty()) why += "; ";
    why += "rank " + std::to_string(i) + " did not reach '" + label + "': it was " + r.activity +
           " (for " + seconds(nowSeconds() - r.activitySince) + ")";
  }
  failGather(run, why);
}

void Coordinator::askForStacks(Run& run) {
  for (Rank& r : run.ranks) {
    // The main thread of a forked rank has the process's id.
    if (!r.exited && r.pid > 0) syscall(SYS_tgkill, r.pid, r.pid, crash::stackSignal());
  }
}

void Coordinator::killAll(Run& run) {
  for (Rank& r : run.ranks) {
    if (r.exited) continue;
    if (r.pid > 0) kill(r.pid, SIGKILL);  // by recorded pid, never by name
  }
  for (size_t h = 1; h < agents_.size(); h++) {
    if (agents_[h]) agents_[h]->send(Msg::Stop, Writer().u64(run.id).data());
  }
}

std::string Coordinator::pendingReport(const Run& run) const {
  std::string report;
  double now = nowSeconds();
  for (size_t i = 0; i < run.ranks.size(); i++) {
    const Rank& r = run.ranks[i];
    if (r.hasVerdict || (r.eof && r.expectExit)) continue;
    if (!report.empty()) report += "; ";
    report += "rank " + std::to_string(i) + ": " + r.activity + " (for " +
              seconds(now - r.activitySince) + ")";
    if (!r.crash.empty()) report += " [" + r.crash + "]";
  }
  return report;
}

Outcome Coordinator::conclude(Run& run, const RunRequest& request, bool expired) {
  Outcome out;
  out.seconds = nowSeconds() - run.start;
  out.notes = run.notes;
  out.counters = run.counters;
  std::vector<size_t> order(run.ranks.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  // Earliest verdict first: later failures are mostly the peers of a rank
  // that failed and left.
  // A rank that crashed comes before all: the others only lost it.
  auto when = [](const Rank& r) {
    if (!r.hasVerdict && !r.crash.empty() && !r.expectExit) return 0.0;
    return r.hasVerdict ? r.verdictAt : 1e300;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return when(run.ranks[a]) < when(run.ranks[b]); });
  // A crash or an expired deadline breaks the scenario's own rule.
  const std::string label = ruleLabel(request.rule);
  auto ownRule = [&](const std::string& text, bool alwaysFails = false) {
    return RankResult{RankEnd::BrokeRule, request.rule, alwaysFails, label + ": " + text};
  };
  std::vector<RankResult> results;
  for (size_t i : order) {
    const Rank& r = run.ranks[i];
    std::string who = "rank " + std::to_string(i);
    if (r.hasVerdict) {
      results.push_back(r.result);
      continue;
    }
    if (r.expectExit || expired) continue;
    std::string how = r.exited ? describeWaitStatus(r.status) : "vanished";
    if (!r.crash.empty() && isShould(request.rule) && !r.crashInShouldStep) {
      // A SHOULD scenario's setup (connect, regMr, a transfer) is NCCL's
      // ordinary path: a crash there breaks NCCL.
      results.push_back(ownRule(who + " " + how +
                                    " without a verdict, outside the step this SHOULD scenario "
                                    "exercises (so it counts as a MUST failure): " +
                                    r.crash,
                                /*alwaysFails=*/true));
    } else if (!r.crash.empty()) {
      results.push_back(ownRule(who + " " + how + " without a verdict: " + r.crash));
    } else {
      results.push_back(ownRule(who + " " + how + " without a verdict, while " + r.activity));
    }
  }
  if (expired) {
    // After what the ranks found themselves: a rank's own message is sharper.
    results.push_back(ownRule("the deadline of " + seconds(request.deadlineSec) +
                              " expired; pending: " + pendingReport(run)));
  }
  out.verdict = judge(results, &out.reason);
  return out;
}

}  // namespace conformance
