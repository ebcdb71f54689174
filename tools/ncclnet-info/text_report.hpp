// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the report for operators: sections, aligned columns.
#pragma once

#include <ostream>

#include "inspection.hpp"

namespace ncclnet::info {

void printText(const Inspection& inspection, std::ostream& out);

}  // namespace ncclnet::info
