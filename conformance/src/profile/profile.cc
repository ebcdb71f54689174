// SPDX-License-Identifier: Apache-2.0
// YAML profile parsing and validation.
#include "profile/profile.hpp"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>

#include "ncclnet/abi/net.h"

namespace conformance {

namespace {

// Thrown inside the parser; becomes "<path>:<line>: <reason>".
struct ProfileError {
  int line;
  std::string reason;
};

int lineOf(const YAML::Node& node) {
  return node.Mark().line + 1;
}

[[noreturn]] void reject(const YAML::Node& node, const std::string& reason) {
  throw ProfileError{lineOf(node), reason};
}

void onlyKeys(const YAML::Node& map, const std::string& where,
              const std::set<std::string>& allowed) {
  if (!map.IsMap()) reject(map, "'" + where + "' must be a mapping");
  for (const auto& item : map) {
    std::string key = item.first.as<std::string>();
    if (allowed.count(key)) continue;
    std::string list;
    for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
    reject(item.first,
           "unknown key '" + key + "' in " + where + " (expected one of: " + list + ")");
  }
}

std::string asString(const YAML::Node& node, const std::string& what) {
  if (!node.IsScalar()) reject(node, "'" + what + "' must be a string");
  return node.as<std::string>();
}

double asNumber(const YAML::Node& node, const std::string& what, double min, double max) {
  if (!node.IsScalar()) reject(node, "'" + what + "' must be a number");
  std::string text = node.as<std::string>();
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) {
    reject(node, "'" + what + "' must be a number, not '" + text + "'");
  }
  if (v < min || v > max) {
    std::ostringstream range;
    range << "'" << what << "' = " << text << " is outside [" << min << ", " << max << "]";
    reject(node, range.str());
  }
  return v;
}

bool asBool(const YAML::Node& node, const std::string& what) {
  std::string text = asString(node, what);
  if (text == "true" || text == "yes") return true;
  if (text == "false" || text == "no") return false;
  reject(node, "'" + what + "' must be true or false, not '" + text + "'");
}

const std::set<std::string>& numericFields() {
  static const std::set<std::string> fields{"speed",
                                            "latency",
                                            "port",
                                            "guid",
                                            "maxComms",
                                            "maxRecvs",
                                            "regIsGlobal",
                                            "forceFlush",
                                            "netDeviceType",
                                            "netDeviceVersion",
                                            "maxP2pBytes",
                                            "maxCollBytes",
                                            "maxMultiRequestSize",
                                            "railId",
                                            "planeId",
                                            "vDevs"};
  return fields;
}

int ptrBits(const YAML::Node& node, const std::string& list) {
  int mask = 0;
  std::string word;
  std::stringstream words(list);
  while (std::getline(words, word, '|')) {
    while (!word.empty() && word.front() == ' ') word.erase(0, 1);
    while (!word.empty() && word.back() == ' ') word.pop_back();
    if (word == "HOST")
      mask |= NCCL_PTR_HOST;
    else if (word == "CUDA")
      mask |= NCCL_PTR_CUDA;
    else if (word == "DMABUF")
      mask |= NCCL_PTR_DMABUF;
    else
      reject(node,
             "unknown pointer type '" + word + "' (expected HOST, CUDA or DMABUF, joined by |)");
  }
  return mask;
}

PropertyCheck parseCheck(const std::string& field, const YAML::Node& node) {
  PropertyCheck check;
  check.field = field;
  check.line = lineOf(node);
  check.text = field + " " + asString(node, field);
  std::string spec = node.as<std::string>();
  if (field == "ptrSupport") {
    for (const char* op : {"includes", "excludes"}) {
      std::string prefix = std::string(op) + " ";
      if (spec.compare(0, prefix.size(), prefix) == 0) {
        check.op = op;
        check.ptrMask = ptrBits(node, spec.substr(prefix.size()));
        return check;
      }
    }
    reject(node, "ptrSupport expects 'includes X' or 'excludes X', not '" + spec + "'");
  }
  if (!numericFields().count(field)) {
    std::string list = "ptrSupport";
    for (const std::string& f : numericFields()) list += ", " + f;
    reject(node, "unknown property '" + field + "' (expected one of: " + list + ")");
  }
  for (const char* op : {">=", "<=", "==", "!=", ">", "<"}) {
    std::string o = op;
    if (spec.compare(0, o.size(), o) != 0) continue;
    std::string rest = spec.substr(o.size());
    char* end = nullptr;
    check.value = std::strtod(rest.c_str(), &end);
    while (end && *end == ' ') end++;
    if (rest.empty() || *end != '\0') reject(node, "'" + spec + "' needs a number after " + o);
    check.op = o;
    return check;
  }
  reject(node, "'" + spec + "' must start with one of >= <= == != > <");
}

double fieldValue(const std::string& field, const ncclNetProperties_v12_t& p) {
  static const std::map<std::string, std::function<double(const ncclNetProperties_v12_t&)>> get{
      {"speed", [](const auto& q) { return q.speed; }},
      {"latency", [](const auto& q) { return q.latency; }},
      {"port", [](const auto& q) { return q.port; }},
      {"guid", [](const auto& q) { return static_cast<double>(q.guid); }},
      {"maxComms", [](const auto& q) { return q.maxComms; }},
      {"maxRecvs", [](const auto& q) { return q.maxRecvs; }},
      {"regIsGlobal", [](const auto& q) { return q.regIsGlobal; }},
      {"forceFlush", [](const auto& q) { return q.forceFlush; }},
      {"netDeviceType", [](const auto& q) { return static_cast<double>(q.netDeviceType); }},
      {"netDeviceVersion", [](const auto& q) { return q.netDeviceVersion; }},
      {"maxP2pBytes", [](const auto& q) { return static_cast<double>(q.maxP2pBytes); }},
      {"maxCollBytes", [](const auto& q) { return static_cast<double>(q.maxCollBytes); }},
      {"maxMultiRequestSize", [](const auto& q) { return q.maxMultiRequestSize; }},
      {"railId", [](const auto& q) { return q.railId; }},
      {"planeId", [](const auto& q) { return q.planeId; }},
      {"vDevs", [](const auto& q) { return q.vProps.ndevs; }},
  };
  return get.at(field)(p);
}

void parseScenarios(const YAML::Node& node, Profile* out) {
  onlyKeys(node, "scenarios", {"include", "exclude", "deadlines"});
  if (node["include"]) {
    if (!node["include"].IsSequence()) reject(node["include"], "'include' must be a list of globs");
    out->include.clear();
    for (const auto& g : node["include"]) out->include.push_back(asString(g, "include"));
  }
  if (node["exclude"]) {
    if (!node["exclude"].IsMap()) {
      reject(node["exclude"], "'exclude' maps a scenario glob to the reason it is excluded");
    }
    for (const auto& item : node["exclude"]) {
      std::string reason = item.second.IsScalar() ? item.second.as<std::string>() : "";
      if (reason.empty()) {
        reject(item.first, "exclusion of '" + item.first.as<std::string>() +
                               "' has no reason: every known deviation must say why");
      }
      out->exclude[item.first.as<std::string>()] = reason;
    }
  }
  if (node["deadlines"]) {
    if (!node["deadlines"].IsMap())
      reject(node["deadlines"], "'deadlines' maps a scenario glob to seconds");
    for (const auto& item : node["deadlines"]) {
      out->deadlines[item.first.as<std::string>()] = asNumber(item.second, "deadline", 0.1, 3600);
    }
  }
}

void parseData(const YAML::Node& node, Profile* out) {
  onlyKeys(node, "data", {"sizes", "largeSize", "iterations", "manyComms"});
  if (node["sizes"]) {
    if (!node["sizes"].IsSequence() || node["sizes"].size() == 0) {
      reject(node["sizes"], "'sizes' must be a non-empty list of byte counts");
    }
    out->sizes.clear();
    for (const auto& s : node["sizes"]) {
      out->sizes.push_back(static_cast<size_t>(asNumber(s, "sizes", 0, 1 << 30)));
    }
  }
  if (node["largeSize"]) {
    out->largeSize = static_cast<size_t>(asNumber(node["largeSize"], "largeSize", 0, 1 << 30));
  }
  if (node["iterations"])
    out->iterations = static_cast<int>(asNumber(node["iterations"], "iterations", 1, 1000));
  if (node["manyComms"])
    out->manyComms = static_cast<int>(asNumber(node["manyComms"], "manyComms", 1, 4096));
}

void parseExpect(const YAML::Node& node, Profile* out) {
  onlyKeys(node, "expect", {"minDevices", "nics"});
  if (node["minDevices"]) {
    out->minDevices = static_cast<int>(asNumber(node["minDevices"], "minDevices", 1, 1024));
  }
  if (!node["nics"]) return;
  if (!node["nics"].IsSequence())
    reject(node["nics"], "'nics' must be a list of { match: glob, <property>: <check> }");
  for (const auto& nic : node["nics"]) {
    if (!nic.IsMap()) reject(nic, "each entry of 'nics' must be a mapping");
    DeviceExpectation e;
    e.line = lineOf(nic);
    for (const auto& item : nic) {
      std::string key = item.first.as<std::string>();
      if (key == "match")
        e.match = asString(item.second, "match");
      else
        e.checks.push_back(parseCheck(key, item.second));
    }
    out->expect.push_back(e);
  }
}

void parse(const YAML::Node& root, Profile* out) {
  if (root.IsNull()) return;  // an empty file: all defaults
  onlyKeys(root, "the profile",
           {"version", "description", "plugin", "abi", "nccl", "timeScale", "strict", "deadline",
            "peerDeathLimit", "device", "env", "scenarios", "data", "expect"});
  if (root["version"] && asNumber(root["version"], "version", 1, 1) != 1)
    reject(root["version"], "unsupported version");
  if (root["description"]) out->description = asString(root["description"], "description");
  if (root["plugin"]) out->plugin = asString(root["plugin"], "plugin");
  if (root["abi"]) {
    std::string abi = asString(root["abi"], "abi");
    std::string number = abi.size() >= 2 && abi[0] == 'v' ? abi.substr(1) : "";
    if (!number.empty() && number.back() == '+') number.pop_back();  // vN+: vN and newer
    bool version = !number.empty() && number.find_first_not_of("0123456789") == std::string::npos &&
                   std::atoi(number.c_str()) >= NCCLNET_ABI_OLDEST &&
                   std::atoi(number.c_str()) <= NCCLNET_ABI_NEWEST;
    if (abi != "all" && !version) {
      const std::string oldest = std::to_string(NCCLNET_ABI_OLDEST);
      const std::string newest = std::to_string(NCCLNET_ABI_NEWEST);
      reject(root["abi"], "'abi' must be all, v" + oldest + "..v" + newest + " or v" + oldest +
                              "+..v" + newest + "+, not '" + abi + "'");
    }
    out->abi = abi;
  }
  if (root["nccl"]) {
    std::string nccl = asString(root["nccl"], "nccl");
    if (nccl != "2.23" && nccl != "2.28" && nccl != "2.30") {
      reject(root["nccl"], "'nccl' must be 2.23, 2.28 or 2.30, not '" + nccl + "'");
    }
    out->nccl = nccl;
  }
  if (root["timeScale"]) out->timeScale = asNumber(root["timeScale"], "timeScale", 0.05, 100);
  if (root["strict"]) out->strict = asBool(root["strict"], "strict");
  if (root["deadline"]) out->deadlineSec = asNumber(root["deadline"], "deadline", 0.1, 3600);
  if (root["peerDeathLimit"])
    out->peerDeathSec = asNumber(root["peerDeathLimit"], "peerDeathLimit", 0.1, 3600);
  if (root["device"]) {
    std::string device = asString(root["device"], "device");
    if (device != "cpu" && device != "cuda")
      reject(root["device"], "'device' must be cpu or cuda, not '" + device + "'");
    out->device = device;
  }
  if (root["scenarios"]) parseScenarios(root["scenarios"], out);
  if (root["data"]) parseData(root["data"], out);
  if (root["expect"]) parseExpect(root["expect"], out);
}

}  // namespace

bool globMatch(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

double Profile::deadlineFor(const std::string& scenario) const {
  for (const auto& [glob, seconds] : deadlines) {
    if (globMatch(glob, scenario)) return seconds;
  }
  return deadlineSec;
}

std::optional<std::string> Profile::exclusionFor(const std::string& scenario) const {
  for (const auto& [glob, reason] : exclude) {
    if (globMatch(glob, scenario)) return reason;
  }
  return std::nullopt;
}

bool Profile::includes(const std::string& scenario) const {
  for (const std::string& glob : include) {
    if (globMatch(glob, scenario)) return true;
  }
  return false;
}

bool loadProfile(const std::string& path, Profile* out, std::string* error) {
  Profile profile;
  profile.path = path;
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root["env"] && root["env"].IsMap()) {
      for (const auto& item : root["env"]) {
        if (!item.second.IsScalar()) reject(item.second, "env values must be strings");
        profile.env[item.first.as<std::string>()] = item.second.as<std::string>();
      }
    } else if (root["env"]) {
      reject(root["env"], "'env' must map variable names to values");
    }
    parse(root, &profile);  // env was read above
  } catch (const ProfileError& e) {
    *error = path + ":" + std::to_string(e.line) + ": " + e.reason;
    return false;
  } catch (const YAML::BadFile&) {
    *error = path + ": cannot be read";
    return false;
  } catch (const YAML::Exception& e) {
    *error = path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
    return false;
  }
  *out = profile;
  return true;
}

std::string evaluate(const PropertyCheck& check, const ncclNetProperties_v12_t& props) {
  if (check.field == "ptrSupport") {
    bool holds = check.op == "includes" ? (props.ptrSupport & check.ptrMask) == check.ptrMask
                                        : (props.ptrSupport & check.ptrMask) == 0;
    return holds ? "" : "ptrSupport is 0x" + [&] {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%x", props.ptrSupport);
      return std::string(hex);
    }();
  }
  double v = fieldValue(check.field, props);
  bool holds = (check.op == ">=" && v >= check.value) || (check.op == "<=" && v <= check.value) ||
               (check.op == "==" && v == check.value) || (check.op == "!=" && v != check.value) ||
               (check.op == ">" && v > check.value) || (check.op == "<" && v < check.value);
  if (holds) return "";
  std::ostringstream found;
  found << check.field << " is " << v;
  return found.str();
}

}  // namespace conformance
