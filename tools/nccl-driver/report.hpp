// SPDX-License-Identifier: Apache-2.0
// What a run prints and writes: per job a verdict line; per point of every
// subject the median bus bandwidth over the rounds whose job passed, its
// interquartile range, and its ratio to the first subject taken round by
// round (ncclnet-bench's statistics, tools/ncclnet-bench/stats.hpp); the
// same as JSON with every job, point and proof.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "job.hpp"
#include "options.hpp"

namespace nccldriver {

struct PointSummary {
  Op op;
  size_t bytes;
  std::string subject;
  std::vector<double> busbw;  // GB/s, one per passing round (0 for a failed one)
  double median = 0, q1 = 0, q3 = 0;
  double ratioMedian = 0, ratioQ1 = 0, ratioQ3 = 0;  // against the first subject; 0 for it
};

std::vector<PointSummary> summarize(const Options& o, const std::vector<Subject>& subjects,
                                    const std::vector<JobOutcome>& jobs);

// One line per job: "PASS sdk-socket round 1: 32 of 32 channel connections via NET/sdk-socket".
void printJob(std::ostream& out, const JobOutcome& j);
// nccl-tests' columns for one job ("RESULT op bytes time_us algbw busbw ok").
void printResults(std::ostream& out, const Options& o, const JobOutcome& j);
// The side-by-side table.
void printTable(std::ostream& out, const std::vector<Subject>& subjects,
                const std::vector<PointSummary>& rows);
void writeJson(std::ostream& out, const Options& o, const std::vector<Subject>& subjects,
               const std::vector<JobOutcome>& jobs, const std::vector<PointSummary>& rows,
               bool mps);

}  // namespace nccldriver
