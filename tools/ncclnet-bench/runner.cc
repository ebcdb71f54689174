// SPDX-License-Identifier: Apache-2.0
#include "runner.hpp"

#include <atomic>
#include <cstdio>
#include <thread>

#include "ncclnet/testing/child_process.hpp"
#include "stats.hpp"

namespace ncclnet::bench {

namespace {

using Channels = std::vector<std::unique_ptr<Peer>>;

// Runs `work` on every comm at once, one thread each (the caller's thread
// takes the first, so one comm runs exactly as before --comms existed).
bool onEveryComm(const Channels& comms, const std::function<bool(Peer&)>& work) {
  std::atomic<bool> ok{true};
  std::vector<std::thread> threads;
  for (size_t c = 1; c < comms.size(); c++) {
    threads.emplace_back([&, c] {
      if (!work(*comms[c])) ok = false;
    });
  }
  if (!work(*comms[0])) ok = false;
  for (auto& t : threads) t.join();
  return ok;
}

bool openAll(const std::vector<Opener>& subjects, Pair& pair, std::vector<Channels>* opened,
             const char* side) {
  for (size_t s = 0; s < subjects.size(); s++) {
    std::string why;
    Channels comms = subjects[s](pair, &why);
    if (comms.empty()) {
      std::fprintf(stderr, "ncclnet-bench%s: subject %zu: %s\n", side, s + 1, why.c_str());
      return false;
    }
    opened->push_back(std::move(comms));
  }
  return true;
}

int serve(const Schedule& schedule, const std::vector<Opener>& subjects, Pair& pair) {
  std::vector<Channels> opened;
  if (!openAll(subjects, pair, &opened, " (receiver)")) return 1;
  int count = static_cast<int>(opened.size());
  char done = 'd';
  for (size_t i = 0; i < schedule.sizes.size(); i++) {
    for (int r = 0; r < schedule.runs; r++) {
      for (int s : runOrder(count, r)) {
        bool ok = pair.barrier() && onEveryComm(opened[s], [&](Peer& p) {
                    return p.stream(false, schedule.sizes[i], schedule.iters[i], schedule.window);
                  });
        if (!ok || !pair.send(&done, 1)) return 2;
      }
    }
  }
  for (size_t size : schedule.latencySizes) {
    for (int r = 0; r < schedule.runs; r++) {
      for (int s : runOrder(count, r)) {
        bool ok = pair.barrier() && onEveryComm(opened[s], [&](Peer& p) {
                    return p.pingpong(false, size, schedule.latencyIters);
                  });
        if (!ok) return 3;
      }
    }
  }
  return 0;
}

}  // namespace

std::vector<int> runOrder(int subjects, int run) {
  std::vector<int> order;
  for (int k = 0; k < subjects; k++) order.push_back((run + k) % subjects);
  return order;
}

bool measureSideBySide(const Schedule& schedule, const std::vector<Opener>& subjects,
                       std::vector<SubjectResult>* out) {
  ncclnet::testing::ChildProcess child([&](ncclnet::testing::Channel& parent) {
    Pair p(parent, true);
    return serve(schedule, subjects, p);
  });
  if (!child.started()) return false;
  Pair pair(child.channel(), false);
  std::vector<Channels> opened;
  if (!openAll(subjects, pair, &opened, "")) return false;
  int count = static_cast<int>(opened.size());
  out->assign(count, SubjectResult{});
  for (int s = 0; s < count; s++) {
    SubjectResult& result = (*out)[s];
    result.label = opened[s][0]->label();
    result.description = opened[s][0]->describe();
    // Two subjects of one name (the same plugin twice) stay apart.
    for (int t = 0; t < s; t++) {
      if ((*out)[t].label == result.label) result.label += " #" + std::to_string(s + 1);
    }
    result.gbps.assign(schedule.sizes.size(), {});
    result.latencyUs.assign(schedule.latencySizes.size(), {});
  }
  for (size_t i = 0; i < schedule.sizes.size(); i++) {
    size_t size = schedule.sizes[i];
    int iters = schedule.iters[i];
    for (int r = 0; r < schedule.runs; r++) {
      for (int s : runOrder(count, r)) {
        char done = 0;
        if (!pair.barrier()) return false;
        auto start = Clock::now();
        // Done when every comm's last send completed and the receiver
        // confirmed every byte of every comm.
        bool ok = onEveryComm(
            opened[s], [&](Peer& p) { return p.stream(true, size, iters, schedule.window); });
        if (!ok || !pair.recv(&done, 1, 600)) return false;
        double seconds = secondsSince(start);
        (*out)[s].gbps[i].push_back(aggregateGbps(size, iters, schedule.comms, seconds));
      }
    }
  }
  for (size_t i = 0; i < schedule.latencySizes.size(); i++) {
    size_t size = schedule.latencySizes[i];
    for (int r = 0; r < schedule.runs; r++) {
      for (int s : runOrder(count, r)) {
        if (!pair.barrier()) return false;
        auto start = Clock::now();
        // With several comms each ping-pongs at once; the figure is the
        // slowest comm's.
        bool ok = onEveryComm(
            opened[s], [&](Peer& p) { return p.pingpong(true, size, schedule.latencyIters); });
        if (!ok) return false;
        (*out)[s].latencyUs[i].push_back(
            halfRoundTripUs(secondsSince(start), schedule.latencyIters));
      }
    }
  }
  opened.clear();
  return child.wait(60).succeeded();
}

}  // namespace ncclnet::bench
