// SPDX-License-Identifier: Apache-2.0
// What each rank of a replay does, worked out from the recorded traces (one
// process each, rank = file order): its listens, and one stream of steps
// per comm, in the order the process made those calls. Both ends of every
// connection are paired across processes by the listen handle's hash, and
// every message gets a seed both ends derive alone (the connection's hash,
// the tag, the message's ordinal among those of that tag), so the receiver
// can check each byte without being told what was sent.
//
//   Plan plan;
//   if (!makePlan(std::move(processes), &plan, &error)) ...  // "cannot replay: ..."
//   for (const Stream& s : plan.ranks[rank].streams) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "replay/trace_text.hpp"

namespace conformance::replay {

enum class Op {
  Connect,
  Accept,
  RegMr,
  DeregMr,
  Isend,
  Irecv,
  Iflush,
  Test,
  Consumed,
  CloseSend,
  CloseRecv,
  CloseListen
};

// One buffer of an isend, irecv or iflush: where it lies (registration and
// offset), its posted size and tag, and the seed of its bytes.
struct PlacedBuffer {
  uint64_t mr = 0;
  size_t offset = 0;
  size_t size = 0;
  int tag = 0;
  uint64_t seed = 0;
};

struct Step {
  Op op = Op::Test;
  int line = 0;      // in the rank's trace file
  std::string text;  // the recorded call, for divergence reports
  int dev = 0;
  uint64_t hash = 0;     // Connect: the listen handle it connects to
  uint64_t listen = 0;   // Accept, CloseListen: the listen comm's number
  uint64_t mr = 0;       // RegMr, DeregMr
  size_t size = 0;       // RegMr
  uint64_t request = 0;  // Isend, Irecv, Iflush, Test
  std::vector<PlacedBuffer> buffers;
  std::vector<long long> reported;  // Test: the sizes the recording reported
  int n = 0;                        // Consumed
};

// One comm's calls, in recorded order; begins with its Connect or Accept.
struct Stream {
  uint64_t comm = 0;
  bool send = false;
  std::vector<Step> steps;
};

struct ListenPlan {
  uint64_t id = 0;
  int dev = 0;
  uint64_t hash = 0;
  int line = 0;
  bool closedByStream = false;  // its closeListen follows the accept of a stream
};

struct RankPlan {
  std::string file;
  std::vector<ListenPlan> listens;
  std::vector<Stream> streams;
};

struct Plan {
  std::vector<RankPlan> ranks;
};

// False with one line, "cannot replay: <why>", when the traces are not
// replayable: a version without handle hashes, a connection whose other end
// is not in any trace, two ends claiming one listen, a data call on a comm
// the trace never opened.
bool makePlan(const std::vector<RecordedProcess>& processes, Plan* out, std::string* error);

// The pattern seed of a message, the same on both ends.
uint64_t messageSeed(uint64_t connection, int tag, uint64_t ordinal);

}  // namespace conformance::replay
