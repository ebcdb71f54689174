// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: reading environment knobs with NCCL's conventions, and
// remembering them so that tools can list every knob a plugin reads.
// Knobs are declared in tables (knob.hpp) and read with readKnobs().
//
// Listing across the C ABI: each knob is announced when it is read, as one
// INFO line on the NCCL_ENV subsystem, in the form
//   param NAME=VALUE (default DEFAULT, from env|default): HELP [ALLOWED]
// `ncclnet-info --params` collects these lines through the logger it hands
// init. readKnobs() reads a whole table even past a bad value, so one init
// lists every knob of the table, also when it then fails: read the table
// before touching the hardware. logAll() announces every knob again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ncclnet/abi/result.h"
#include "ncclnet/knob.hpp"
#include "ncclnet/log.hpp"

namespace ncclnet {

struct ParamInfo {
  std::string name;
  std::string value;
  std::string defaultValue;
  std::string help;  // the declared help, then what the knob accepts in brackets
  bool fromEnv = false;
};

class ParamTable {
 public:
  explicit ParamTable(Logger logger) : logger_(logger) {}
  Logger logger() const { return logger_; }

  // Reads one knob: an unset or empty variable yields the default; a value
  // the knob does not allow is ncclInvalidUsage with one WARN line naming
  // the variable, the value and what is allowed. *out is untouched then.
  ncclResult_t read(const KnobSpec& spec, KnobValue* out);

  const std::vector<ParamInfo>& all() const { return params_; }
  void logAll() const;

 private:
  void remember(const KnobSpec& spec, const std::string& value, const std::string& def,
                bool fromEnv);
  void announce(const ParamInfo& p) const;

  Logger logger_;
  std::vector<ParamInfo> params_;
};

// False (with one WARN line) when `spec`'s range does not fit an int field.
bool knobFitsInt(const Logger& logger, const KnobSpec& spec);

// Reads every knob of `knobs` into `out`'s fields. A bad value is reported
// (one WARN line each) and the rest of the table is still read, so that
// every knob is listed; the first error is returned and `out` is then only
// partly filled.
template <class Config, size_t N>
ncclResult_t readKnobs(ParamTable& params, const Knob<Config> (&knobs)[N], Config* out) {
  ncclResult_t first = ncclSuccess;
  for (const Knob<Config>& knob : knobs) {
    KnobValue value;
    ncclResult_t res = ncclSuccess;
    if (std::holds_alternative<int Config::*>(knob.field) &&
        !knobFitsInt(params.logger(), knob.spec)) {
      res = ncclInternalError;
    } else {
      res = params.read(knob.spec, &value);
    }
    if (res == ncclSuccess) {
      knob.store(value, out);
    } else if (first == ncclSuccess) {
      first = res;
    }
  }
  return first;
}

// Fills `out`'s fields with the table's defaults, ignoring the environment
// (tests, and tools that describe a plugin without running it). False when
// a declared default is not a value its knob allows.
template <class Config, size_t N>
bool knobDefaults(const Knob<Config> (&knobs)[N], Config* out) {
  bool valid = true;
  for (const Knob<Config>& knob : knobs) {
    KnobValue value;
    if (knobDefault(knob.spec, &value)) {
      knob.store(value, out);
    } else {
      valid = false;
    }
  }
  return valid;
}

}  // namespace ncclnet
