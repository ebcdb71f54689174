// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "json_text.hpp"
#include "stats.hpp"

namespace ncclnet::bench {

namespace {

using json::Json;

// `digits` significant digits without an exponent (8 B messages move
// 0.0001 GB/s and 64 MiB ones 5 GB/s), at most 6 decimals.
std::string format(double value, int digits) {
  int magnitude = value > 0 ? static_cast<int>(std::floor(std::log10(value))) : 0;
  int decimals = std::clamp(digits - 1 - magnitude, 0, 6);
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

// "median (q1-q3)".
std::string cell(const Summary& s, int digits) {
  return format(s.median, digits) + " (" + format(s.q1, digits) + "-" + format(s.q3, digits) + ")";
}

void printTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); c++) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); c++) {
      std::string padding(widths[c] - row[c].size(), ' ');
      // The size column reads left to right, numbers line up on the right.
      line += c == 0 ? row[c] + padding : "   " + padding + row[c];
    }
    std::printf("%s\n", line.c_str());
  }
}

// One table: a row per size, a column per subject, then the first
// subject's ratio to each other subject.
void printSection(const std::vector<size_t>& sizes, const char* firstHeader, const char* unit,
                  int digits, const std::vector<SubjectResult>& results,
                  std::vector<std::vector<double>> SubjectResult::*series) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {firstHeader};
  for (const auto& r : results) header.push_back(r.label + " " + unit);
  for (size_t s = 1; s < results.size(); s++) {
    header.push_back(results[0].label + " / " + results[s].label);
  }
  rows.push_back(header);
  for (size_t i = 0; i < sizes.size(); i++) {
    std::vector<std::string> row = {humanSize(sizes[i])};
    for (const auto& r : results) row.push_back(cell(summarize((r.*series)[i]), digits));
    for (size_t s = 1; s < results.size(); s++) {
      auto ratios = pairedRatios((results[0].*series)[i], (results[s].*series)[i]);
      row.push_back(cell(summarize(ratios), 3));
    }
    rows.push_back(row);
  }
  printTable(rows);
}

Json summaryJson(const Summary& s) {
  return {{"median", s.median}, {"q1", s.q1}, {"q3", s.q3}, {"min", s.min}, {"max", s.max}};
}

Json ratiosJson(const std::vector<SubjectResult>& results, size_t i,
                std::vector<std::vector<double>> SubjectResult::*series) {
  Json ratios = Json::array();
  for (size_t s = 1; s < results.size(); s++) {
    std::vector<double> runs = pairedRatios((results[0].*series)[i], (results[s].*series)[i]);
    ratios.push_back({{"of", results[0].label},
                      {"to", results[s].label},
                      {"runs", runs},
                      {"summary", summaryJson(summarize(runs))}});
  }
  return ratios;
}

}  // namespace

std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return in ? one + " " + five + " " + fifteen : "unknown";
}

RunInfo describeMachine(int argc, char** argv) {
  RunInfo info;
  for (int i = 0; i < argc; i++) info.command.push_back(argv[i]);
  cpu_set_t set;
  CPU_ZERO(&set);
  info.cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
  utsname name{};
  if (uname(&name) == 0) info.kernel = std::string(name.sysname) + " " + name.release;
  info.loadAverageBefore = loadAverage();
  return info;
}

std::string humanSize(size_t size) {
  char text[32];
  if (size >= (1u << 20) && size % (1u << 20) == 0)
    std::snprintf(text, sizeof(text), "%zu MiB", size >> 20);
  else if (size >= 1024 && size % 1024 == 0)
    std::snprintf(text, sizeof(text), "%zu KiB", size >> 10);
  else
    std::snprintf(text, sizeof(text), "%zu B", size);
  return text;
}

void printText(const Schedule& schedule, const std::vector<SubjectResult>& results,
               const RunInfo& info) {
  for (size_t s = 0; s < results.size(); s++) {
    std::printf("%zu. %s: %s\n", s + 1, results[s].label.c_str(), results[s].description.c_str());
  }
  std::printf(
      "two processes, window %d, %d comm%s, %d alternating run%s per point: median "
      "(interquartile range)%s\n",
      schedule.window, schedule.comms, schedule.comms > 1 ? "s (one thread each)" : "",
      schedule.runs, schedule.runs > 1 ? "s" : "",
      results.size() > 1 ? "; ratios taken run by run" : "");
  std::printf("%d CPUs, %s; load average %s before, %s after\n\n", info.cpus, info.kernel.c_str(),
              info.loadAverageBefore.c_str(), info.loadAverageAfter.c_str());
  printSection(schedule.sizes, "size", "GB/s", 3, results, &SubjectResult::gbps);
  std::printf("\n");
  printSection(schedule.latencySizes, "ping-pong", "us", 3, results, &SubjectResult::latencyUs);
  std::printf(
      "(bandwidth: 1 GB/s = 1e9 bytes/s, all comms together; latency: half a round trip, the "
      "slowest comm's)\n");
}

bool writeJson(const std::string& path, const Schedule& schedule,
               const std::vector<SubjectResult>& results, const RunInfo& info, std::string* why) {
  std::ofstream out(path);
  if (!out) {
    *why = "cannot write " + path;
    return false;
  }
  Json j = Json::object();
  j["tool"] = "ncclnet-bench";
  j["version"] = info.version;
  j["command"] = info.command;
  j["machine"] = {{"cpus", info.cpus},
                  {"kernel", info.kernel},
                  {"load_average_before", info.loadAverageBefore},
                  {"load_average_after", info.loadAverageAfter}};
  j["settings"] = {{"window", schedule.window},
                   {"comms", schedule.comms},
                   {"runs", schedule.runs},
                   {"latency_round_trips", schedule.latencyIters}};
  Json subjects = Json::array();
  for (const auto& r : results) {
    subjects.push_back({{"label", r.label}, {"description", r.description}});
  }
  j["subjects"] = subjects;
  Json bandwidth = Json::array();
  for (size_t i = 0; i < schedule.sizes.size(); i++) {
    Json rows = Json::array();
    for (const auto& r : results) {
      Summary s = summarize(r.gbps[i]);
      rows.push_back(
          {{"label", r.label},
           {"gbps_runs", r.gbps[i]},
           {"gbps", summaryJson(s)},
           {"messages_per_second_median", messagesPerSecond(s.median, schedule.sizes[i])}});
    }
    bandwidth.push_back({{"size", static_cast<uint64_t>(schedule.sizes[i])},
                         {"messages_per_comm", schedule.iters[i]},
                         {"subjects", rows},
                         {"ratios", ratiosJson(results, i, &SubjectResult::gbps)}});
  }
  j["bandwidth"] = bandwidth;
  Json latency = Json::array();
  for (size_t i = 0; i < schedule.latencySizes.size(); i++) {
    Json rows = Json::array();
    for (const auto& r : results) {
      rows.push_back({{"label", r.label},
                      {"us_runs", r.latencyUs[i]},
                      {"us", summaryJson(summarize(r.latencyUs[i]))}});
    }
    latency.push_back({{"size", static_cast<uint64_t>(schedule.latencySizes[i])},
                       {"subjects", rows},
                       {"ratios", ratiosJson(results, i, &SubjectResult::latencyUs)}});
  }
  j["latency"] = latency;
  out << json::jsonText(j);
  out << "\n";
  if (!out) {
    *why = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace ncclnet::bench
