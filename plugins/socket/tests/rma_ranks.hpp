// SPDX-License-Identifier: Apache-2.0
// sdk-socket tests: N ranks of an RMA / GIN-proxy communicator, one forked
// process per rank, as NCCL runs them. Each rank loads the built library,
// listens and hands its handle to the test process, which all-gathers the
// handles (NCCL uses its bootstrap for that) and then relays barriers
// between the ranks until they exit.
//
//   EXPECT_TRUE(runRanks(4, [](RankEnv& env) {
//     void* comm = env.comms[0];
//     ... env.rma->iput(...) ...
//     RANK_CHECK(env, something);
//     return env.barrier() ? 0 : 1;
//   }));
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"
#include "ncclnet/testing/channel.hpp"

namespace ncclnet::socket::testing {

// NCCL_GIN_HANDLE_MAXSIZE: what NCCL all-gathers per rank.
constexpr size_t kRankHandleBytes = 128;

struct RankEnv {
  int rank = 0;
  int nranks = 0;
  void* library = nullptr;  // dlopen'ed; closed after the body
  const ncclRma_v14_t* rma = nullptr;
  const ncclGin_v11_t* gin11 = nullptr;
  void* ctx = nullptr;                        // rma->init's (or gin11->init's)
  std::vector<void*> listens;                 // one per comm
  std::vector<std::vector<uint8_t>> handles;  // [comm][rank * 128 ...]: all-gathered
  ::ncclnet::testing::Channel* parent = nullptr;

  // Every rank arrives before any leaves (relayed by the test process).
  bool barrier(double seconds = 20);
};

struct RankOptions {
  int nranks = 2;
  int ncomms = 1;       // listens (and so collComms) per rank
  bool gin11 = false;   // drive ncclGinPlugin_v11 instead of ncclRmaPlugin_v14
  double seconds = 25;  // every rank must be done by then
};

// Runs `body` in every rank after listen and the handles' all-gather (the
// body connects: connect is the behaviour under test); true when every rank
// exited 0. The reason of a failure is on stderr.
bool runRanks(const RankOptions& options, const std::function<int(RankEnv&)>& body);

}  // namespace ncclnet::socket::testing

// In a rank's body: report and fail the rank.
#define RANK_CHECK(env, cond)                                                                    \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      std::fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", (env).rank, __FILE__, __LINE__, \
                   #cond);                                                                       \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)
#define RANK_OK(env, call) RANK_CHECK(env, (call) == ncclSuccess)
