// SPDX-License-Identifier: Apache-2.0
// Several connections at once: set up interleaved, and a message on each
// that tells the receiver which connection it really came from.
#pragma once

#include <vector>

#include "scenario/ctx.hpp"

namespace conformance {

// `count` connections from rank src to rank dst. The connects are polled
// round-robin and the accepts in reverse order, as NCCL's proxy interleaves
// them; listens are closed once accepted. Returns this rank's ends.
std::vector<void*> linkMany(Ctx& c, int src, int dst, int count, const std::string& label);

// Sends message i (its own size and seed) on connection i, all posted
// before any is waited for, and checks that connection i received message i.
void checkEachConnection(Ctx& c, const std::vector<void*>& comms, int src, int dst, Rule rule);

}  // namespace conformance
