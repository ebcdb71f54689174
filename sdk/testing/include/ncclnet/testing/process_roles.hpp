// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: two roles of a test (say, a receiver and a sender),
// each in a forked child of its own, joined by a Channel; the test process
// itself loads nothing, so no plugin or provider state ever crosses a fork.
// A role returns "" when all went well, else what failed (the ROLE_* macros
// of role_check.hpp write that string).
//
//   std::string failed = runRoles(
//       [](Channel& peer) { ... listen; peer.send(handle ...); accept; receive ...; return ""; },
//       [](Channel& peer) { ... peer.receive(handle ...); connect; send ...; return ""; },
//       30);
//   EXPECT_EQ(failed, "");
#pragma once

#include <functional>
#include <string>

#include "ncclnet/testing/channel.hpp"

namespace ncclnet::testing {

using Role = std::function<std::string(Channel& peer)>;

// Runs `first` and `second` at once (only `second` when `first` is empty),
// each in its own child. "" when both returned "" and exited cleanly; else
// one line per role that failed, "first role: ..." / "second role: ..."
// ("role: ..." when alone): what it returned, "killed by signal N", or that
// it was still running after `seconds` (then killed).
std::string runRoles(const Role& first, const Role& second, double seconds = 30);

}  // namespace ncclnet::testing
