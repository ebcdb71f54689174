// SPDX-License-Identifier: Apache-2.0
// sdk-socket tests: the forked ranks of rma_ranks.hpp.
#include "rma_ranks.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include <memory>

#include "ncclnet/testing/child_process.hpp"
#include "ncclnet/testing/log_lines.hpp"

namespace ncclnet::socket::testing {

using ::ncclnet::testing::Channel;
using ::ncclnet::testing::ChildProcess;
using ::ncclnet::testing::ExitStatus;

namespace {

constexpr char kArrive = 'b';
constexpr char kLeave = 'B';

int rankMain(int rank, const RankOptions& options, const std::function<int(RankEnv&)>& body,
             Channel& parent) {
  RankEnv env;
  env.rank = rank;
  env.nranks = options.nranks;
  env.parent = &parent;
  // Loopback unless the caller chose an interface. (Not in ctest's
  // environment: gtest_discover_tests passes only one variable intact.)
  ::setenv("NCCL_SOCKET_IFNAME", "lo", /*overwrite=*/0);
  // SDK_SOCKET_PLUGIN: where ctest says the library is (a staged tree).
  const char* path = std::getenv("SDK_SOCKET_PLUGIN");
  env.library = ::dlopen(path != nullptr ? path : SDK_SOCKET_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (env.library == nullptr) std::fprintf(stderr, "rank %d: dlopen: %s\n", rank, ::dlerror());
  RANK_CHECK(env, env.library != nullptr);
  int ndev = 0;
  if (options.gin11) {
    env.gin11 = static_cast<const ncclGin_v11_t*>(::dlsym(env.library, "ncclGinPlugin_v11"));
    RANK_CHECK(env, env.gin11 != nullptr);
    RANK_OK(env, env.gin11->init(&env.ctx, 0x5eed, ::ncclnet::testing::testLogger));
    RANK_OK(env, env.gin11->devices(&ndev));
  } else {
    env.rma = static_cast<const ncclRma_v14_t*>(::dlsym(env.library, "ncclRmaPlugin_v14"));
    RANK_CHECK(env, env.rma != nullptr);
    RANK_OK(env, env.rma->init(&env.ctx, 0x5eed, ::ncclnet::testing::testLogger));
    RANK_OK(env, env.rma->devices(&ndev));
  }
  RANK_CHECK(env, ndev >= 1);
  for (int c = 0; c < options.ncomms; c++) {
    uint8_t handle[kRankHandleBytes] = {};
    void* listen = nullptr;
    if (options.gin11) {
      RANK_OK(env, env.gin11->listen(env.ctx, 0, handle, &listen));
    } else {
      RANK_OK(env, env.rma->listen(env.ctx, 0, handle, &listen));
    }
    env.listens.push_back(listen);
    RANK_CHECK(env, parent.send(handle, sizeof(handle)));
  }
  for (int c = 0; c < options.ncomms; c++) {
    env.handles.emplace_back(kRankHandleBytes * options.nranks);
    RANK_CHECK(env, parent.receive(env.handles.back().data(), env.handles.back().size()));
  }
  int code = body(env);
  if (code != 0) return code;
  for (void* listen : env.listens) {
    ncclResult_t res =
        options.gin11 ? env.gin11->closeListen(listen) : env.rma->closeListen(listen);
    RANK_OK(env, res);
  }
  RANK_OK(env, options.gin11 ? env.gin11->finalize(env.ctx) : env.rma->finalize(env.ctx));
  ::dlclose(env.library);
  return 0;
}

}  // namespace

bool RankEnv::barrier(double seconds) {
  char c = kArrive;
  if (!parent->send(&c, 1)) return false;
  return parent->receive(&c, 1, seconds) && c == kLeave;
}

bool runRanks(const RankOptions& options, const std::function<int(RankEnv&)>& body) {
  const int n = options.nranks;
  std::vector<std::unique_ptr<ChildProcess>> ranks;
  for (int r = 0; r < n; r++) {
    ranks.push_back(std::make_unique<ChildProcess>(
        [r, &options, &body](Channel& parent) { return rankMain(r, options, body, parent); }));
  }
  // The all-gather: every rank's handles, then all of them to every rank.
  bool ok = true;
  std::vector<std::vector<uint8_t>> gathered(options.ncomms,
                                             std::vector<uint8_t>(kRankHandleBytes * n));
  for (int r = 0; r < n && ok; r++) {
    for (int c = 0; c < options.ncomms && ok; c++) {
      ok = ranks[r]->channel().receive(gathered[c].data() + r * kRankHandleBytes, kRankHandleBytes,
                                       options.seconds);
    }
  }
  for (int r = 0; r < n && ok; r++) {
    for (int c = 0; c < options.ncomms; c++) {
      ranks[r]->channel().send(gathered[c].data(), gathered[c].size());
    }
  }
  // Barriers: when every live rank has arrived, all may leave. A rank that
  // exits (its channel ends) leaves the relay.
  std::vector<bool> live(n, ok);
  while (ok) {
    int arrived = 0, alive = 0;
    for (int r = 0; r < n; r++) {
      if (!live[r]) continue;
      char c = 0;
      if (ranks[r]->channel().receive(&c, 1, options.seconds) && c == kArrive) {
        arrived++;
      } else {
        live[r] = false;
      }
    }
    for (int r = 0; r < n; r++) alive += live[r] ? 1 : 0;
    if (alive == 0) break;
    for (int r = 0; r < n; r++) {
      char c = kLeave;
      if (live[r]) ranks[r]->channel().send(&c, 1);
    }
    (void)arrived;
  }
  bool passed = ok;
  for (int r = 0; r < n; r++) {
    ExitStatus status = ranks[r]->wait(options.seconds);
    if (!status.succeeded()) {
      std::fprintf(stderr, "rank %d %s\n", r, status.describe().c_str());
      passed = false;
    }
  }
  return passed;
}

}  // namespace ncclnet::socket::testing
