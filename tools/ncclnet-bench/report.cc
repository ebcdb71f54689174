// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "ncclnet/host/json_writer.hpp"
#include "stats.hpp"

namespace ncclnet::bench {

namespace {

using ncclnet::host::JsonWriter;

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

void writeSummary(JsonWriter& w, const Summary& s) {
  w.beginObject();
  w.key("median").value(s.median);
  w.key("q1").value(s.q1);
  w.key("q3").value(s.q3);
  w.key("min").value(s.min);
  w.key("max").value(s.max);
  w.endObject();
}

void writeRuns(JsonWriter& w, const std::vector<double>& runs) {
  w.beginArray();
  for (double v : runs) w.value(v);
  w.endArray();
}

void writeRatios(JsonWriter& w, const std::vector<SubjectResult>& results, size_t i,
                 std::vector<std::vector<double>> SubjectResult::*series) {
  w.key("ratios").beginArray();
  for (size_t s = 1; s < results.size(); s++) {
    auto ratios = pairedRatios((results[0].*series)[i], (results[s].*series)[i]);
    w.beginObject();
    w.key("of").value(results[0].label);
    w.key("to").value(results[s].label);
    w.key("runs");
    writeRuns(w, ratios);
    w.key("summary");
    writeSummary(w, summarize(ratios));
    w.endObject();
  }
  w.endArray();
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
  JsonWriter w(out);
  w.beginObject();
  w.key("tool").value("ncclnet-bench");
  w.key("version").value(info.version);
  w.key("command").beginArray();
  for (const auto& a : info.command) w.value(a);
  w.endArray();
  w.key("machine").beginObject();
  w.key("cpus").value(info.cpus);
  w.key("kernel").value(info.kernel);
  w.key("load_average_before").value(info.loadAverageBefore);
  w.key("load_average_after").value(info.loadAverageAfter);
  w.endObject();
  w.key("settings").beginObject();
  w.key("window").value(schedule.window);
  w.key("comms").value(schedule.comms);
  w.key("runs").value(schedule.runs);
  w.key("latency_round_trips").value(schedule.latencyIters);
  w.endObject();
  w.key("subjects").beginArray();
  for (const auto& r : results) {
    w.beginObject();
    w.key("label").value(r.label);
    w.key("description").value(r.description);
    w.endObject();
  }
  w.endArray();
  w.key("bandwidth").beginArray();
  for (size_t i = 0; i < schedule.sizes.size(); i++) {
    w.beginObject();
    w.key("size").value(static_cast<uint64_t>(schedule.sizes[i]));
    w.key("messages_per_comm").value(schedule.iters[i]);
    w.key("subjects").beginArray();
    for (const auto& r : results) {
      Summary s = summarize(r.gbps[i]);
      w.beginObject();
      w.key("label").value(r.label);
      w.key("gbps_runs");
      writeRuns(w, r.gbps[i]);
      w.key("gbps");
      writeSummary(w, s);
      w.key("messages_per_second_median").value(messagesPerSecond(s.median, schedule.sizes[i]));
      w.endObject();
    }
    w.endArray();
    writeRatios(w, results, i, &SubjectResult::gbps);
    w.endObject();
  }
  w.endArray();
  w.key("latency").beginArray();
  for (size_t i = 0; i < schedule.latencySizes.size(); i++) {
    w.beginObject();
    w.key("size").value(static_cast<uint64_t>(schedule.latencySizes[i]));
    w.key("subjects").beginArray();
    for (const auto& r : results) {
      w.beginObject();
      w.key("label").value(r.label);
      w.key("us_runs");
      writeRuns(w, r.latencyUs[i]);
      w.key("us");
      writeSummary(w, summarize(r.latencyUs[i]));
      w.endObject();
    }
    w.endArray();
    writeRatios(w, results, i, &SubjectResult::latencyUs);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  out << "\n";
  if (!out) {
    *why = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace ncclnet::bench
