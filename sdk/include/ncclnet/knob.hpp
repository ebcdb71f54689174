// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: declared environment knobs. A plugin lists its knobs once,
// in a table (name, type, default, range or words, help, the field of its
// config struct the value lands in), and reads the table once at init:
//
//   struct Config { bool hmem; int cqReadCount; std::string domains; };
//   constexpr ncclnet::Knob<Config> kKnobs[] = {
//       ncclnet::flagKnob("NCCLNET_X_HMEM", &Config::hmem, true, "offer GPU memory"),
//       ncclnet::intKnob("NCCLNET_X_CQ_READ", &Config::cqReadCount, 16, 1, 256, "per read"),
//       ncclnet::stringKnob("NCCLNET_X_DOMAINS", &Config::domains, "", "NICs to use"),
//   };
//   Config config;
//   ncclResult_t res = ncclnet::readKnobs(params, kKnobs, &config);  // params.hpp
//
// Every value is refused unless it is exactly what the knob allows (NCCL
// itself falls back to the default with an INFO line, src/misc/param.cc
// ncclLoadParam; a typo then changes nothing silently, which we do not do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

namespace ncclnet {

enum class KnobType {
  Flag,    // 0 or 1
  Int,     // a decimal, 0x-hex or 0-octal integer in [min, max]
  Size,    // a byte count in [min, max], into a size_t (no suffixes, as NCCL's)
  String,  // free text (interface lists, paths)
  Enum,    // one of a few words, case-insensitive, each standing for a number
};

struct KnobChoice {
  const char* word;
  int64_t value;
};

// What a knob accepts, with no target: what the parser and the listing need.
struct KnobSpec {
  const char* name = "";
  KnobType type = KnobType::Int;
  const char* help = "";
  int64_t defaultNumber = 0;            // Flag, Int, Size
  const char* defaultText = "";         // String, Enum (one of the words)
  int64_t min = INT64_MIN;              // Int, Size
  int64_t max = INT64_MAX;              // Int, Size
  const KnobChoice* choices = nullptr;  // Enum
  size_t choiceCount = 0;               // Enum
};

// A parsed value: `number` for every type but String, `text` the canonical
// spelling (what listings show).
struct KnobValue {
  int64_t number = 0;
  std::string text;
};

// Parses `raw` as `spec` allows. False when it does not.
bool parseKnob(const KnobSpec& spec, const char* raw, KnobValue* out);

// What the knob accepts, for error lines and listings: "0 or 1",
// "an integer in [0, 16]", "one of any|AF_INET|AF_INET6", ...
std::string knobAllowed(const KnobSpec& spec);

// The help as listings show it: the declared help, then (but for free
// text) what the knob accepts in brackets.
std::string knobListedHelp(const KnobSpec& spec);

// The default, parsed (the same path an environment value takes). False
// when the declaration itself is wrong: a default outside the range, a word
// that is not a choice.
bool knobDefault(const KnobSpec& spec, KnobValue* out);

// A knob with the field of `Config` its value lands in.
template <class Config>
struct Knob {
  using Target = std::variant<bool Config::*, int Config::*, int64_t Config::*, size_t Config::*,
                              std::string Config::*>;
  KnobSpec spec;
  Target field;

  void store(const KnobValue& v, Config* config) const {
    std::visit([&](auto member) { assign(config->*member, v); }, field);
  }

 private:
  static void assign(bool& to, const KnobValue& v) { to = v.number != 0; }
  static void assign(int& to, const KnobValue& v) { to = static_cast<int>(v.number); }
  static void assign(int64_t& to, const KnobValue& v) { to = v.number; }
  static void assign(size_t& to, const KnobValue& v) { to = static_cast<size_t>(v.number); }
  static void assign(std::string& to, const KnobValue& v) { to = v.text; }
};

// The builders below keep tables readable in C++17 (no designated
// initializers) and tie each type to the fields it may fill. An int field's
// range must fit an int (readKnobs refuses a declaration where it does not).

// The spec of a knob read as a number in [min, max].
constexpr KnobSpec numberSpec(const char* name, KnobType type, int64_t def, int64_t min,
                              int64_t max, const char* help) {
  KnobSpec s;
  s.name = name;
  s.type = type;
  s.help = help;
  s.defaultNumber = def;
  s.min = min;
  s.max = max;
  return s;
}

template <class C>
constexpr Knob<C> flagKnob(const char* name, bool C::*field, bool def, const char* help) {
  return Knob<C>{numberSpec(name, KnobType::Flag, def ? 1 : 0, 0, 1, help), field};
}

template <class C, class T>
constexpr Knob<C> intKnob(const char* name, T C::*field, int64_t def, int64_t min, int64_t max,
                          const char* help) {
  static_assert(std::is_same_v<T, int> || std::is_same_v<T, int64_t>,
                "an integer knob fills an int or an int64_t");
  return Knob<C>{numberSpec(name, KnobType::Int, def, min, max, help), field};
}

template <class C>
constexpr Knob<C> sizeKnob(const char* name, size_t C::*field, int64_t def, int64_t min,
                           int64_t max, const char* help) {
  return Knob<C>{numberSpec(name, KnobType::Size, def, min, max, help), field};
}

template <class C>
constexpr Knob<C> stringKnob(const char* name, std::string C::*field, const char* def,
                             const char* help) {
  KnobSpec s;
  s.name = name;
  s.type = KnobType::String;
  s.help = help;
  s.defaultText = def;
  return Knob<C>{s, field};
}

template <class C, class T, size_t N>
constexpr Knob<C> enumKnob(const char* name, T C::*field, const char* def,
                           const KnobChoice (&choices)[N], const char* help) {
  static_assert(std::is_same_v<T, int> || std::is_same_v<T, int64_t>,
                "an enum knob fills an int or an int64_t");
  KnobSpec s;
  s.name = name;
  s.type = KnobType::Enum;
  s.help = help;
  s.defaultText = def;
  s.choices = choices;
  s.choiceCount = N;
  return Knob<C>{s, field};
}

}  // namespace ncclnet
