// SPDX-License-Identifier: Apache-2.0
// The JUnit XML report, written from the run's results (not by gtest), so
// that it exists whatever happened: a plugin that does not load is one
// failed test case. Per test case: the rule, its severity and the verdict
// as properties; a failure element for fail (and, under --strict, for
// warn and notrun); skipped for notrun and excluded; a warning's finding
// in system-out of a passing case.
#pragma once

#include <string>

#include "report/report.hpp"

namespace conformance {

bool writeJunit(const Report& report, const std::string& path, std::string* error);

}  // namespace conformance
