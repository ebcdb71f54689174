// SPDX-License-Identifier: Apache-2.0
// The human view: a live progress line (rewritten in place on a terminal,
// a line per failure and every tenth of the run otherwise) and a compact
// summary at the end. Replaces gtest's verbose printer.
#pragma once

#include <gtest/gtest.h>

#include "report/report.hpp"

namespace conformance {

class Progress : public testing::EmptyTestEventListener {
 public:
  // redraw: one progress line rewritten in place (a terminal); otherwise
  // plain lines only, one per tenth of the run.
  Progress(const Report& report, bool verbose, bool redraw);
  void OnTestProgramStart(const testing::UnitTest& unit) override;
  void OnTestStart(const testing::TestInfo& info) override;
  void OnTestEnd(const testing::TestInfo& info) override;

 private:
  const Report& report_;
  bool verbose_;
  bool redraw_;
  int total_ = 0;
  int done_ = 0;
  int failed_ = 0;
};

// The run's verdict and its counts, one line: "PASS: 120 pass, 2 warn, ...".
std::string resultLine(const Report& report);

void printSummary(const Report& report, const std::string& jsonPath, const std::string& junitPath);

}  // namespace conformance
