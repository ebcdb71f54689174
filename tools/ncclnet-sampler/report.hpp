// SPDX-License-Identifier: Apache-2.0
// ncclnet-sampler: turns the samples of one process into its report.
#pragma once

#include <cstdio>

#include "samples.hpp"

namespace ncclnet::sampler {

// For each thread, most CPU first: its name, CPU seconds and share of the
// wall time, then the functions it ran in ("self": the innermost frame) and
// the functions it ran under ("total": anywhere on the stack), each with
// its library, most samples first, `top` of each.
void writeReport(const SampleStore& store, double wallSeconds, int top, std::FILE* out);

}  // namespace ncclnet::sampler
