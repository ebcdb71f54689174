// SPDX-License-Identifier: Apache-2.0
// Many registrations on one comm, then every one of them deregistered: the
// loop the Registration and GpuMemory scenarios share, whatever the memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "scenario/ctx.hpp"

namespace conformance {

// Registers `count` regions on `comm`, region i through `regOne(i)` (a call
// of Ctx::reg, regCuda or regDmaBuf, or a helper around one), then
// deregisters every handle: in registration order, or, with `shuffleSeed`,
// in the order std::mt19937(*shuffleSeed) shuffles them into, so that a
// plugin's registration table loses entries from anywhere and every run
// removes them alike.
void registerThenDeregister(Ctx& c, void* comm, int count, const std::function<void*(int)>& regOne,
                            std::optional<uint32_t> shuffleSeed = std::nullopt);

}  // namespace conformance
