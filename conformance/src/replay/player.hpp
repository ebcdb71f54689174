// SPDX-License-Identifier: Apache-2.0
// Plays one rank's part of a replay plan against the plugin under test.
//
// Each comm's stream is played in its recorded order; the streams of a rank
// are interleaved as NCCL's proxy thread interleaves its connections (one
// non-blocking call per stream per pass), so a plugin that completes sends
// later than the recorded one (a receiver-driven one, say) cannot deadlock
// a replay recorded on an eager one. Every message's bytes come from the
// suite's patterns (scenario/buffer.hpp), and every wait has the scenario's
// wait limit. The first call that does not do what the recording did throws
// a Violation naming the trace line:
//
//   diverged from rank1.trace:57 (test r=12 done=1 sizes=4096 rc=0): buffer 0: test
//   reported 65536 bytes, the recording 4096
#pragma once

#include "replay/plan.hpp"
#include "scenario/ctx.hpp"

namespace conformance::replay {

// Plays plan.ranks[c.rank()]. The plan must have c.nranks() ranks.
void play(Ctx& c, const Plan& plan);

}  // namespace conformance::replay
