// SPDX-License-Identifier: Apache-2.0
// ncclnet-info --json: the same information as the text report, as one
// JSON object (layout in docs/tools.md).
#pragma once

#include <ostream>

#include "inspection.hpp"

namespace ncclnet::info {

void printJson(const Inspection& inspection, std::ostream& out);

}  // namespace ncclnet::info
