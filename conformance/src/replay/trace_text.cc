// SPDX-License-Identifier: Apache-2.0
// Reads an ncclnet-check trace back.
#include "replay/trace_text.hpp"

#include <cstdlib>
#include <sstream>

namespace conformance::replay {

namespace {

bool toNumber(const std::string& text, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  // Hashes are hex (h=...), everything else decimal.
  *out = std::strtoll(text.c_str(), &end, 10);
  return *end == '\0';
}

}  // namespace

long long RecordedCall::number(const std::string& key, long long fallback) const {
  auto it = keys.find(key);
  long long value = 0;
  if (it == keys.end() || !toNumber(it->second, &value)) return fallback;
  return value;
}

std::vector<long long> RecordedCall::numbers(const std::string& key) const {
  std::vector<long long> out;
  auto it = keys.find(key);
  if (it == keys.end() || it->second == "-") return out;
  std::stringstream in(it->second);
  for (std::string item; std::getline(in, item, ',');) {
    long long value = 0;
    out.push_back(toNumber(item, &value) ? value : 0);
  }
  return out;
}

bool parseTrace(const std::string& name, const std::string& text, RecordedProcess* out,
                std::string* error) {
  out->name = name;
  std::stringstream in(text);
  std::string line;
  int number = 0;
  const std::string magic = "# ncclnet-check trace ";
  while (std::getline(in, line)) {
    number++;
    if (line.empty()) continue;
    std::stringstream words(line);
    if (number == 1) {
      if (line.compare(0, magic.size(), magic) != 0) {
        *error = name + ":1: not an ncclnet-check trace (no '" + magic + "<version>' header)";
        return false;
      }
      words.seekg(static_cast<std::streamoff>(magic.size()));
      words >> out->version;
      for (std::string word; words >> word;) {
        size_t eq = word.find('=');
        if (eq == std::string::npos) continue;
        if (word.compare(0, eq, "plugin") == 0) out->plugin = word.substr(eq + 1);
        if (word.compare(0, eq, "abi") == 0) out->abi = std::atoi(word.c_str() + eq + 1);
      }
      continue;
    }
    if (line[0] == '#') continue;
    RecordedCall call;
    call.line = number;
    std::string stamp;
    words >> stamp >> call.call;
    if (call.call.empty()) {
      *error = name + ":" + std::to_string(number) + ": expected '<microseconds> <call> ...'";
      return false;
    }
    size_t at = line.find(call.call, stamp.size());
    call.text = line.substr(at);
    for (std::string word; words >> word;) {
      size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0) {
        *error = name + ":" + std::to_string(number) + ": '" + word + "' is not key=value";
        return false;
      }
      call.keys[word.substr(0, eq)] = word.substr(eq + 1);
    }
    if (!call.has("rc")) {
      *error = name + ":" + std::to_string(number) + ": the line has no rc= (cut short?)";
      return false;
    }
    out->calls.push_back(std::move(call));
  }
  if (number == 0) {
    *error = name + ": empty";
    return false;
  }
  return true;
}

}  // namespace conformance::replay
