// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: reading knobs from the environment, warning about bad
// values, and announcing each knob for `ncclnet-info --params`.
#include "ncclnet/params.hpp"

#include <climits>
#include <cstdlib>

namespace ncclnet {

ncclResult_t ParamTable::read(const KnobSpec& spec, KnobValue* out) {
  KnobValue def;
  if (!knobDefault(spec, &def)) {
    NCCLNET_WARN(
        logger_, "%s is declared with the default '%s', which is not %s", spec.name,
        spec.type == KnobType::Enum ? spec.defaultText : std::to_string(spec.defaultNumber).c_str(),
        knobAllowed(spec).c_str());
    return ncclInternalError;
  }
  const char* raw = std::getenv(spec.name);
  bool fromEnv = raw != nullptr && raw[0] != '\0';
  if (!fromEnv) {
    remember(spec, def.text, def.text, false);
    *out = std::move(def);
    return ncclSuccess;
  }
  KnobValue value;
  if (!parseKnob(spec, raw, &value)) {
    NCCLNET_WARN(logger_, "%s='%s' is not %s; unset it or give a valid value (default %s)",
                 spec.name, raw, knobAllowed(spec).c_str(), def.text.c_str());
    remember(spec, raw, def.text, true);  // listed as given, so --params shows the culprit
    return ncclInvalidUsage;
  }
  remember(spec, value.text, def.text, true);
  *out = std::move(value);
  return ncclSuccess;
}

void ParamTable::logAll() const {
  for (const ParamInfo& p : params_) announce(p);
}

void ParamTable::remember(const KnobSpec& spec, const std::string& value, const std::string& def,
                          bool fromEnv) {
  for (ParamInfo& p : params_) {
    if (p.name == spec.name) {  // re-read of the same knob: keep one entry
      p.value = value;
      p.fromEnv = fromEnv;
      return;
    }
  }
  if (fromEnv) {
    NCCLNET_INFO(logger_, NCCL_ENV, "%s set by environment to %s", spec.name, value.c_str());
  }
  params_.push_back(ParamInfo{spec.name, value, def, knobListedHelp(spec), fromEnv});
  announce(params_.back());
}

void ParamTable::announce(const ParamInfo& p) const {
  NCCLNET_INFO(logger_, NCCL_ENV, "param %s=%s (default %s, from %s): %s", p.name.c_str(),
               p.value.c_str(), p.defaultValue.c_str(), p.fromEnv ? "env" : "default",
               p.help.c_str());
}

bool knobFitsInt(const Logger& logger, const KnobSpec& spec) {
  auto fits = [](int64_t v) { return v >= INT_MIN && v <= INT_MAX; };
  if (spec.type == KnobType::Enum) {
    for (size_t i = 0; i < spec.choiceCount; i++) {
      if (fits(spec.choices[i].value)) continue;
      NCCLNET_WARN(logger, "%s is declared with the word '%s' = %lld for an int field", spec.name,
                   spec.choices[i].word, static_cast<long long>(spec.choices[i].value));
      return false;
    }
    return true;
  }
  if (fits(spec.min) && fits(spec.max)) return true;
  NCCLNET_WARN(logger, "%s is declared with the range [%lld, %lld] for an int field", spec.name,
               static_cast<long long>(spec.min), static_cast<long long>(spec.max));
  return false;
}

}  // namespace ncclnet
