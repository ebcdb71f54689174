// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): buffer choice and readiness of one
// step, kept apart from the counters that decide when to look.
#include <cinttypes>
#include <cstdio>

#include "ncclnet/transport/lines.hpp"
#include "ncclnet/transport/steps.hpp"
#include "proxy_progress.hpp"

namespace ncclnet::transport::detail {

char* stepBuffer(const ConnectionState& c, Protocol p, int slot) {
  char* base = c.buffers[index(p)];
  if (p == Protocol::Simple && c.shared) {
    return base + c.recvMem->connFifo[slot].offset.load(std::memory_order_acquire);
  }
  return base + static_cast<size_t>(slot) * c.stepSize(p);
}

// SIMPLE: the tail the caller checked is enough. LL: every line carries the
// step's flag twice. LL128: with GDR the data is in device memory and the
// GPU's fence covered it; in host memory every line's flag word must be set.
bool stepReady(const ConnectionState& c, Protocol p, const char* buff, int64_t size,
               uint64_t step) {
  switch (p) {
    case Protocol::Simple: return true;
    case Protocol::LL: return llReady(buff, divUp(size, kLLLineBytes), llFlag(step));
    case Protocol::LL128:
      if (c.spec.useGdr) return true;
      return ll128Ready(buff, divUp(size, kLL128LineBytes), ll128Flag(step));
  }
  return false;
}

std::string describe(const ProxyOpState& op) {
  std::string out;
  char line[256];
  for (size_t s = 0; s < op.subs.size(); s++) {
    const SubProgress& sub = op.subs[s];
    const ConnectionState& c = *sub.conn;
    if (!op.started) {
      std::snprintf(line, sizeof(line), "%s %s sub %zu (ch %d, peer %d): not started, nsteps %d\n",
                    directionName(op.direction), protocolName(op.protocol), s, c.spec.channelId,
                    c.spec.tpRemoteRank, sub.nsteps);
    } else if (op.direction == Direction::Send) {
      std::snprintf(line, sizeof(line),
                    "%s %s sub %zu (ch %d, peer %d): base %" PRIu64
                    " nsteps %d posted %d transmitted %d done %d\n",
                    directionName(op.direction), protocolName(op.protocol), s, c.spec.channelId,
                    c.spec.tpRemoteRank, sub.base, sub.nsteps, sub.posted, sub.transmitted,
                    sub.done);
    } else {
      const RecvGroup& g = op.groups[sub.group];
      std::snprintf(line, sizeof(line),
                    "%s %s sub %zu (ch %d, peer %d, group %d): base %" PRIu64
                    " nsteps %d posted %d received %d transmitted %d done %d\n",
                    directionName(op.direction), protocolName(op.protocol), s, c.spec.channelId,
                    c.spec.tpRemoteRank, sub.group, sub.base, sub.nsteps, g.posted, g.received,
                    g.transmitted, sub.done);
    }
    out += line;
  }
  return out;
}

}  // namespace ncclnet::transport::detail
