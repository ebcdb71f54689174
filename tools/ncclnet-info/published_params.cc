// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the knobs a plugin library publishes in its file.
#include "published_params.hpp"

#include <unistd.h>

#include "ncclnet/host/published_knobs.hpp"

namespace ncclnet::info {
namespace {

// The file whose table speaks for the plugin: the one selected, else the
// first opened, else a path (with a '/') that did not open, e.g. for a
// missing dependency: its knobs are still in the file.
std::string libraryToRead(const host::LoadReport& report) {
  for (const host::LibraryAttempt& a : report.attempts)
    if (a.selected && !a.path.empty()) return a.path;
  for (const host::LibraryAttempt& a : report.attempts)
    if (a.opened && !a.path.empty()) return a.path;
  for (const host::LibraryAttempt& a : report.attempts)
    if (a.file.find('/') != std::string::npos && ::access(a.file.c_str(), R_OK) == 0) return a.file;
  return "";
}

}  // namespace

void readPublishedParams(Inspection* in) {
  std::string path = libraryToRead(in->report);
  if (path.empty()) return;
  std::vector<host::PublishedKnob> knobs;
  if (!host::readPublishedKnobs(path, &knobs, &in->paramsError)) return;
  if (knobs.empty()) return;
  std::vector<Param> params;
  for (const host::PublishedKnob& k : knobs) {
    host::KnobReading r = host::readFromEnvironment(k);
    Param p;
    p.name = k.name;
    p.value = r.value;
    p.defaultValue = r.defaultValue;
    p.source = r.refused ? "refused" : r.fromEnv ? "env" : "default";
    p.help = r.help;
    params.push_back(std::move(p));
  }
  in->params = std::move(params);
  in->paramsLibrary = path;
}

}  // namespace ncclnet::info
