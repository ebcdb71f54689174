// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: the lines a plugin logs in this process, for tests
// that assert on them. testLogger() records every line through the SDK's
// capturing logger (ncclnet/host/log_capture.hpp) and also prints the WARN
// ones on stderr, with the pid, so that a failing test shows them (set
// NCCLNET_TEST_QUIET to silence that).
//
//   size_t mark = logMark();
//   ... a call that must warn ...
//   EXPECT_EQ(warningsSince(mark).size(), 1u);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ncclnet/host/log_capture.hpp"

namespace ncclnet::testing {

using ncclnet::host::LogLine;

// The logger to hand to init() (PluginSession's default).
void testLogger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                const char* fmt, ...) __attribute__((format(printf, 5, 6)));

// A position in the record; the lines logged after it.
size_t logMark();
std::vector<LogLine> logSince(size_t mark);
// The text of the WARN lines since `mark`.
std::vector<std::string> warningsSince(size_t mark);
// Recorded lines, at any level, whose text contains `needle`.
int countLogged(const std::string& needle);

}  // namespace ncclnet::testing
