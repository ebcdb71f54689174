// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: parsing a knob's value as its declaration allows.
#include "ncclnet/knob.hpp"

#include <strings.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace ncclnet {
namespace {

// The whole text must be an integer: NCCL's strtoll(str, nullptr, 0) takes
// "12abc" as 12, which hides a typo; we refuse it.
bool parseInteger(const char* raw, const char** rest, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(raw, &end, 0);
  if (errno != 0 || end == raw) return false;
  *rest = end;
  *out = value;
  return true;
}

// No K/M/G suffixes: NCCL's own size knobs (NCCL_BUFFSIZE, ...) are plain
// byte counts, and "4M" read as 4 MiB here but as 4 by NCCL would disagree.
bool parseSize(const char* raw, int64_t* out) {
  const char* rest = nullptr;
  int64_t value = 0;
  if (!parseInteger(raw, &rest, &value) || *rest != '\0' || value < 0) return false;
  *out = value;
  return true;
}

std::string rangeText(const KnobSpec& spec) {
  return "[" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]";
}

}  // namespace

bool parseKnob(const KnobSpec& spec, const char* raw, KnobValue* out) {
  KnobValue v;
  switch (spec.type) {
    case KnobType::String: v.text = raw; break;
    case KnobType::Enum: {
      const KnobChoice* match = nullptr;
      for (size_t i = 0; i < spec.choiceCount && match == nullptr; i++) {
        if (strcasecmp(spec.choices[i].word, raw) == 0) match = &spec.choices[i];
      }
      if (match == nullptr) return false;
      v.number = match->value;
      v.text = match->word;
      break;
    }
    case KnobType::Flag:
      if (std::strcmp(raw, "0") != 0 && std::strcmp(raw, "1") != 0) return false;
      v.number = raw[0] == '1' ? 1 : 0;
      v.text = raw;
      break;
    case KnobType::Int: {
      const char* rest = nullptr;
      if (!parseInteger(raw, &rest, &v.number) || *rest != '\0') return false;
      if (v.number < spec.min || v.number > spec.max) return false;
      v.text = std::to_string(v.number);
      break;
    }
    case KnobType::Size:
      if (!parseSize(raw, &v.number)) return false;
      if (v.number < spec.min || v.number > spec.max) return false;
      v.text = std::to_string(v.number);
      break;
  }
  *out = std::move(v);
  return true;
}

std::string knobAllowed(const KnobSpec& spec) {
  switch (spec.type) {
    case KnobType::String: return "any text";
    case KnobType::Flag: return "0 or 1";
    case KnobType::Int: return "an integer in " + rangeText(spec);
    case KnobType::Size: return "a byte count in " + rangeText(spec);
    case KnobType::Enum: {
      std::string words;
      for (size_t i = 0; i < spec.choiceCount; i++) {
        words += std::string(i == 0 ? "" : "|") + spec.choices[i].word;
      }
      return "one of " + words;
    }
  }
  return "?";
}

std::string knobListedHelp(const KnobSpec& spec) {
  std::string help = spec.help != nullptr ? spec.help : "";
  if (spec.type != KnobType::String) help += " [" + knobAllowed(spec) + "]";
  return help;
}

bool knobDefault(const KnobSpec& spec, KnobValue* out) {
  switch (spec.type) {
    case KnobType::String:
    case KnobType::Enum: return parseKnob(spec, spec.defaultText, out);
    case KnobType::Flag:
    case KnobType::Int:
    case KnobType::Size:
      if (spec.defaultNumber < spec.min || spec.defaultNumber > spec.max) return false;
      out->number = spec.defaultNumber;
      out->text = std::to_string(spec.defaultNumber);
      return true;
  }
  return false;
}

}  // namespace ncclnet
