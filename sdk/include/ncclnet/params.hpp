// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: environment parameters with NCCL's conventions. Each knob is
// typed, has a default and a help text, is read once when declared, and is
// remembered so that tools can list every knob a plugin reads.
//
// Listing across the C ABI: each knob is announced the first time it is
// read, as one INFO line on the NCCL_ENV subsystem, in the form
//   param NAME=VALUE (default DEFAULT, from env|default): HELP
// `ncclnet-info --params` collects these lines through the logger it hands
// init. Announcing at the read, not after a successful init, is what lets
// it list a plugin's knobs on a host without the device: read every knob
// before touching the hardware, and they are listed even when init fails.
// logAll() announces every knob again.
#pragma once

#include <strings.h>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "ncclnet/log.hpp"

namespace ncclnet {

struct ParamInfo {
  std::string name;
  std::string value;
  std::string defaultValue;
  std::string help;
  bool fromEnv = false;
};

class ParamTable {
 public:
  explicit ParamTable(Logger logger) : logger_(logger) {}
  Logger logger() const { return logger_; }

  // Reads an integer knob. An unset or empty variable yields `def`; a value
  // that is not an integer in [min, max] is an error (ncclInvalidUsage and one
  // WARN line naming the knob), never silently replaced by the default.
  ncclResult_t readInt(const char* name, int64_t def, const char* help, int64_t* out,
                       int64_t min = INT64_MIN, int64_t max = INT64_MAX) {
    const char* raw = std::getenv(name);
    int64_t value = def;
    bool fromEnv = raw != nullptr && raw[0] != '\0';
    if (fromEnv) {
      char* end = nullptr;
      errno = 0;
      long long parsed = std::strtoll(raw, &end, 0);
      if (errno != 0 || end == raw || *end != '\0' || parsed < min || parsed > max) {
        NCCLNET_WARN(logger_,
                     "%s='%s' is not an integer in [%" PRId64 ", %" PRId64
                     "]; "
                     "unset it or give a valid value (default %" PRId64 ")",
                     name, raw, min, max, def);
        return ncclInvalidUsage;
      }
      value = parsed;
    }
    remember(name, std::to_string(value), std::to_string(def), help, fromEnv);
    *out = value;
    return ncclSuccess;
  }

  // Reads a free-form string knob (interface lists, paths).
  ncclResult_t readString(const char* name, const char* def, const char* help, std::string* out) {
    const char* raw = std::getenv(name);
    bool fromEnv = raw != nullptr && raw[0] != '\0';
    *out = fromEnv ? raw : def;
    remember(name, *out, def, help, fromEnv);
    return ncclSuccess;
  }

  // Reads a knob restricted to a set of words (case-insensitive); the stored
  // value is the spelling from `choices`. Anything else is an error.
  ncclResult_t readChoice(const char* name, const char* def,
                          std::initializer_list<const char*> choices, const char* help,
                          std::string* out) {
    const char* raw = std::getenv(name);
    bool fromEnv = raw != nullptr && raw[0] != '\0';
    const char* wanted = fromEnv ? raw : def;
    for (const char* choice : choices) {
      if (strcasecmp(choice, wanted) == 0) {
        *out = choice;
        remember(name, *out, def, help, fromEnv);
        return ncclSuccess;
      }
    }
    std::string allowed;
    for (const char* choice : choices) allowed += std::string(allowed.empty() ? "" : "|") + choice;
    NCCLNET_WARN(logger_, "%s='%s' is not one of %s", name, wanted, allowed.c_str());
    return ncclInvalidUsage;
  }

  const std::vector<ParamInfo>& all() const { return params_; }

  void logAll() const {
    for (const ParamInfo& p : params_) announce(p);
  }

 private:
  void remember(const char* name, std::string value, std::string def, const char* help,
                bool fromEnv) {
    for (ParamInfo& p : params_) {
      if (p.name == name) {  // re-read of the same knob: keep one entry
        p.value = std::move(value);
        p.fromEnv = fromEnv;
        return;
      }
    }
    if (fromEnv) {
      NCCLNET_INFO(logger_, NCCL_ENV, "%s set by environment to %s", name, value.c_str());
    }
    params_.push_back(ParamInfo{name, std::move(value), std::move(def), help ? help : "", fromEnv});
    announce(params_.back());
  }

  void announce(const ParamInfo& p) const {
    NCCLNET_INFO(logger_, NCCL_ENV, "param %s=%s (default %s, from %s): %s", p.name.c_str(),
                 p.value.c_str(), p.defaultValue.c_str(), p.fromEnv ? "env" : "default",
                 p.help.c_str());
  }

  Logger logger_;
  std::vector<ParamInfo> params_;
};

}  // namespace ncclnet
