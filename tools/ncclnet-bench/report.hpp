// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: the results as a table for people (every subject's median
// and interquartile range, and the first subject's ratio to each other one,
// taken run by run) and as JSON for machines (the same, plus every run).
#pragma once

#include <string>
#include <vector>

#include "runner.hpp"

namespace ncclnet::bench {

struct RunInfo {
  std::string version;               // the tool's version line
  std::vector<std::string> command;  // argv
  std::string loadAverageBefore;     // /proc/loadavg's first three fields
  std::string loadAverageAfter;
  int cpus = 0;  // CPUs this process may run on
  std::string kernel;
};

RunInfo describeMachine(int argc, char** argv);
std::string loadAverage();

std::string humanSize(size_t size);

void printText(const Schedule& schedule, const std::vector<SubjectResult>& results,
               const RunInfo& info);
bool writeJson(const std::string& path, const Schedule& schedule,
               const std::vector<SubjectResult>& results, const RunInfo& info, std::string* why);

}  // namespace ncclnet::bench
