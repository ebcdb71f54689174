// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the state of a proxy
// operation while the progress thread drives it (NCCL's ncclProxyArgs and
// ncclProxySubArgs), and the two state machines.
//
// Counters count steps of the operation (0 .. nsteps) and advance by
// sliceSteps. Step k of a sub uses connection slot slotOf(base, k).
//
//   send sub:   done <= transmitted <= posted <= nsteps
//               posted - done <= maxDepth, transmitted - done <= kSteps
//               steps [done, transmitted) hold a plugin request in their slot
//   recv group: transmitted <= received <= posted          (shared by the group)
//               each sub: done <= min(transmitted, nsteps), posted - done <= maxDepth
//               group steps [transmitted, posted) hold an irecv or iflush request
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ncclnet/transport/proxy_op.hpp"
#include "transport_state.hpp"

namespace ncclnet::transport::detail {

struct SubProgress {
  ConnectionState* conn = nullptr;
  int nsteps = 0;
  uint64_t base = 0;
  int posted = 0;       // send only (receive keeps these per group)
  int transmitted = 0;  // send only
  int done = 0;
  int group = 0;          // receive: index of its RecvGroup
  int64_t transSize = 0;  // bytes of the last step sent or received
  // Registered user buffer (SIMPLE): step k at userBuffer + k * maxNetSize.
  char* userBuffer = nullptr;
  size_t userBytes = 0;
  void* userMhandle = nullptr;
  bool userReady = false;       // receive: the device said the buffer may be written
  void* requests[kSteps] = {};  // send: request of the step in each slot
  // Opaque per-step profiler handles handed to isend/irecv (never read).
  char phandles[kSteps] = {};
};

// Receive subs that share one recvComm, posted together as one grouped
// irecv of up to maxRecvs buffers.
struct RecvGroup {
  int first = 0;  // subs [first, first + count)
  int count = 0;
  int posted = 0;
  int received = 0;
  int transmitted = 0;
  void* requests[kSteps] = {};    // group step k at k % kSteps: irecv, then iflush
  uint64_t members[kSteps] = {};  // bit i: sub first + i took part in irecv k
  void* consumed[kSteps] = {};    // irecv request of step k, until irecvConsumed
  int consumedCount[kSteps] = {};
};

struct ProxyOpState {
  Direction direction = Direction::Send;
  Protocol protocol = Protocol::Simple;
  int sliceSteps = 1;
  int chunkSteps = 1;
  int maxDepth = kSteps;  // min(kSteps, kSharedSteps / nsubs): shared pool slots per sub
  bool started = false;
  int finished = 0;  // subs with done == nsteps
  std::vector<SubProgress> subs;
  std::vector<RecvGroup> groups;
  std::shared_ptr<OpCompletion> completion;
  // What the operation serializes on: a connection, or a (pool, channel).
  std::vector<std::pair<const void*, int>> keys;

  bool complete() const { return started && finished == static_cast<int>(subs.size()); }
};

// One pass over the operation, like one call of NCCL's progress function.
// *progressed tells whether anything moved.
ncclResult_t sendProgress(TransportState& core, ProxyOpState& op, bool* progressed);
ncclResult_t recvProgress(TransportState& core, ProxyOpState& op, bool* progressed);

// Where the step of a sub lives: the pool slot named in connFifo (shared
// SIMPLE) or the slot's part of the protocol buffer.
char* stepBuffer(const ConnectionState& c, Protocol p, int slot);
// Whether the producer finished writing a step, by the protocol's rule.
bool stepReady(const ConnectionState& c, Protocol p, const char* buff, int64_t size, uint64_t step);

std::string describe(const ProxyOpState& op);

}  // namespace ncclnet::transport::detail
