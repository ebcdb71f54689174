// SPDX-License-Identifier: Apache-2.0
// The agent: what a non-zero world rank (another node under mpirun or srun)
// runs. It joins the rendezvous and starts the workers the coordinator asks
// for, kills them when told, and reports how they ended.
#pragma once

#include <string>

#include "harness/launch.hpp"

namespace conformance {

// Returns the process exit code: 0 after a clean Quit.
int runAgent(const std::string& host, int port, int worldRank, double joinTimeoutSec,
             const WorkerEntry& entry);

}  // namespace conformance
