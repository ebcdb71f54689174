// SPDX-License-Identifier: Apache-2.0
// Loads replayed traces from a directory or from the shipped set.
#include "replay/sources.hpp"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace conformance::replay {

namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool opensConnections(const RecordedProcess& p) {
  for (const RecordedCall& call : p.calls) {
    if (call.call == "listen" || call.call == "connect") return true;
  }
  return false;
}

}  // namespace

bool planFromDirectory(const std::string& dir, Plan* out, std::string* error) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    *error = "cannot replay: cannot open the trace directory " + dir;
    return false;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    if (endsWith(e->d_name, ".trace")) names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    *error = "cannot replay: " + dir + " holds no *.trace file (NCCLNET_CHECK_TRACE writes them)";
    return false;
  }
  std::vector<RecordedProcess> processes;
  for (const std::string& name : names) {
    std::ifstream in(dir + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof()) {
      *error = "cannot replay: cannot read " + dir + "/" + name;
      return false;
    }
    RecordedProcess p;
    if (!parseTrace(name, text.str(), &p, error)) {
      *error = "cannot replay: " + *error;
      return false;
    }
    // A process that never opened a connection (a probe that only loaded
    // the plugin, as NCCL's and the suite's do) takes no part.
    if (opensConnections(p)) processes.push_back(std::move(p));
  }
  if (processes.empty()) {
    *error = "cannot replay: no trace in " + dir + " opens a connection";
    return false;
  }
  return makePlan(processes, out, error);
}

bool planFromShipped(const std::string& name, Plan* out, std::string* error) {
  for (const ShippedTrace& trace : shippedTraces()) {
    if (name != trace.name) continue;
    std::vector<RecordedProcess> processes(trace.files.size());
    for (size_t i = 0; i < trace.files.size(); i++) {
      if (!parseTrace(name + "/" + trace.files[i].first, trace.files[i].second, &processes[i],
                      error)) {
        *error = "cannot replay: " + *error;
        return false;
      }
    }
    return makePlan(processes, out, error);
  }
  *error = "cannot replay: no shipped trace '" + name + "' was compiled in (conformance/traces/)";
  return false;
}

}  // namespace conformance::replay
