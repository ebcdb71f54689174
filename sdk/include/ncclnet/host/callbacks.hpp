// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host side): the two functions NCCL hands every plugin's
// init, for hosts that are not NCCL. NCCL always passes its logger
// (ncclDebugLog) and, through v10+ tables, its profiler callback
// (ncclProfilerCallback, src/plugin/profiler.cc); a plugin may call either
// without a NULL check, so a host that stands in for NCCL passes both:
//
//   net.init(&ctx, commId, &config, ncclnet::host::stderrLogger(),
//            ncclnet::host::profilerCallback());
#pragma once

#include <cstdint>
#include <string>

#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"

namespace ncclnet::host {

// A logger with ncclDebugLog's signature: "NCCL WARN <message>" on stderr
// for every level up to NCCL_DEBUG (WARN when unset or not understood).
ncclDebugLogger_t stderrLogger();
// `logger`'s function, or stderrLogger() where it has none: what to hand a
// plugin's init.
ncclDebugLogger_t loggerFunction(const Logger& logger);

// NCCL's profiler callback as it behaves with no profiler plugin loaded: it
// accepts every event and returns ncclSuccess. It also counts the events
// and records what NCCL would crash on once a profiler is loaded: an event
// type outside start/stop/update/updateAndStop, a NULL eHandle (NCCL
// passes it to the profiler's startEvent, and reads *eHandle on the
// others), or a start event with a NULL pHandle (NCCL reads the proxy step
// through the phandle it handed isend/irecv).
ncclProfilerCallback_t profilerCallback();

struct ProfilerTally {
  uint64_t start = 0;
  uint64_t stop = 0;
  uint64_t update = 0;
  uint64_t updateAndStop = 0;
  uint64_t findings = 0;     // malformed events
  std::string firstFinding;  // what the first malformed event was
};
// What profilerCallback() saw in this process so far. The callback has no
// argument to carry state in, so the tally is process-wide.
ProfilerTally profilerTally();

}  // namespace ncclnet::host
