// SPDX-License-Identifier: Apache-2.0
// Reports read back (`ncclnet-conformance --summary REPORT.json...`): each
// report's result line as the run that wrote it printed it, so that a job
// certifying several plugins relays the suite's counts instead of counting
// verdicts itself.
#pragma once

#include <string>
#include <vector>

#include "report/report.hpp"

namespace conformance {

// The results of a JSON report (what printSummary and passed() need).
// Returns false with the reason when the file is no such report.
bool readReport(const std::string& path, Report* out, std::string* error);

// One line a report: "<path>: PASS: 120 pass, 2 warn, ...". verbose: then
// every result that did not pass, with its reason, and the counters.
// Returns 0 when every report passed, 1 when one failed, 2 when one could
// not be read.
int printReportSummaries(const std::vector<std::string>& paths, bool verbose);

}  // namespace conformance
