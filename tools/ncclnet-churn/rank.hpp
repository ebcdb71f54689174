// SPDX-License-Identifier: Apache-2.0
// ncclnet-churn: one rank's side. Rank 1 listens and receives, rank 0
// connects and sends; every received byte is checked against the pattern
// of its message, and every wait gives up after the stall bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "control.hpp"
#include "ncclnet/host/loader.hpp"
#include "sampler.hpp"

namespace ncclnet::churn {

// Exit codes, so that a script can tell the outcomes apart.
enum Exit : int {
  kExitOk = 0,
  kExitPluginError = 1,  // the plugin returned an error (allowed under a fault)
  kExitUsage = 2,
  kExitStall = 3,    // a wait made no progress within the stall bound: a hang
  kExitCorrupt = 4,  // wrong bytes, size or order arrived
  kExitGrew = 5,     // RSS, descriptors or threads grew past their tolerance
  kExitControl = 6,  // the other rank vanished from the control link
};

struct Failure {
  int code;
  std::string message;
};

struct RankOptions {
  std::string plugin;
  int dev = 0;
  uint64_t cycles = 1000;    // churn: connect/transfer/close cycles
  double seconds = 0;        // > 0: stream for this long on one connection instead
  size_t size = 64 * 1024;   // bytes per transfer
  int pauseMs = 0;           // stream: pause between transfers
  double stallSec = 60;      // a wait without progress longer than this is a hang
  uint64_t warmup = 0;       // churn: cycles before the baseline sample (0: cycles/10)
  uint64_t sampleEvery = 0;  // churn: cycles between samples (0: cycles/100)
  Tolerance tolerance;
  std::string samplesPrefix;  // write <prefix>.rank<R>.csv
};

class Rank {
 public:
  Rank(int rank, const RankOptions& options, Control& control);
  ~Rank();
  Rank(const Rank&) = delete;
  Rank& operator=(const Rank&) = delete;

  // Runs the churn cycles or the stream; prints one summary line. Returns
  // an Exit code.
  int run();

 private:
  void load();
  void churn();
  void stream();
  void oneCycle(uint64_t cycle);
  void* connectOrAccept();
  void wait(void* request, const std::string& what, size_t expectSize);
  void* postSend(void* comm, void* mhandle, size_t size);
  void* postRecv(void* comm, void* mhandle, size_t size);
  void verify(uint64_t seq, size_t offset);
  void exchangeVerdict(bool ok);
  [[noreturn]] void fail(int code, const std::string& message);

  int rank_;
  RankOptions options_;
  Control& control_;
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin_;
  ncclnet::host::NetView* net_ = nullptr;
  void* ctx_ = nullptr;
  std::vector<char> buffer_;    // registered: what is sent or received
  std::vector<char> expected_;  // what a received message must hold
  bool failed_ = false;
  double lastProgress_ = 0;  // when a wait last completed (seconds since start)
  double maxGap_ = 0;        // the longest time between two completions
  uint64_t transfers_ = 0;
};

}  // namespace ncclnet::churn
