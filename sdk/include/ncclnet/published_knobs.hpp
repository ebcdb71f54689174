// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: a plugin's knob table, written into its library file as
// text, so that tools list every knob without loading the plugin or calling
// init (`ncclnet-info --params`, as `fi_info -e` lists libfabric's).
//
//   constexpr ncclnet::Knob<Config> kKnobs[] = {...};  // knob.hpp
//   NCCLNET_PUBLISH_KNOBS(kKnobs);                      // at namespace scope
//
// The text lands in the section `ncclnet_knobs` of the library; it adds no
// symbol to what the library exports (NCCL finds a plugin only by its
// ncclNetPlugin_vN tables, src/plugin/net.cc), and strip keeps it, as it
// keeps every section the loader maps. Several tables of one library
// concatenate. The format, version 1, one table:
//
//   ncclnet-knobs 1\n
//   NAME \t TYPE \t DEFAULT \t MIN \t MAX \t CHOICES \t HELP \n   (one line a knob)
//
// TYPE is flag, int, size, string or enum; MIN and MAX are decimal (used by
// int and size); CHOICES is `word=value,...` (enum) or empty. A field may
// not hold a tab or a newline, nor a choice word `=` or `,`: such a table
// does not compile. ncclnet/host/published_knobs.hpp reads it back.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclnet/knob.hpp"

namespace ncclnet::published_knobs {

inline constexpr char kSectionName[] = "ncclnet_knobs";
inline constexpr char kHeaderLine[] = "ncclnet-knobs 1\n";

// The bytes of one table, with no terminating NUL.
template <size_t N>
struct Text {
  char bytes[N];
};

namespace detail {

// Writes the text, or only counts it when `out` is null (the first pass
// sizes the array for the second).
class Writer {
 public:
  constexpr explicit Writer(char* out) : out_(out) {}
  constexpr size_t size() const { return size_; }

  constexpr void put(char c) {
    if (out_ != nullptr) out_[size_] = c;
    ++size_;
  }
  constexpr void raw(const char* s) {
    for (; *s != '\0'; ++s) put(*s);
  }
  // A field: a tab or newline inside would split the record.
  constexpr void field(const char* s) {
    for (; *s != '\0'; ++s) {
      if (*s == '\t' || *s == '\n') throw "a published knob field holds a tab or a newline";
      put(*s);
    }
  }
  constexpr void word(const char* s) {
    for (const char* c = s; *c != '\0'; ++c) {
      if (*c == '=' || *c == ',') throw "an enum knob's word holds '=' or ','";
    }
    field(s);
  }
  constexpr void number(int64_t v) {
    // Through the unsigned magnitude, so INT64_MIN prints too.
    uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    if (v < 0) put('-');
    char digits[20] = {};
    int count = 0;
    do {
      digits[count++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    while (count > 0) put(digits[--count]);
  }

 private:
  char* out_;
  size_t size_ = 0;
};

constexpr const char* typeWord(KnobType type) {
  switch (type) {
    case KnobType::Flag: return "flag";
    case KnobType::Int: return "int";
    case KnobType::Size: return "size";
    case KnobType::String: return "string";
    case KnobType::Enum: return "enum";
  }
  throw "unknown knob type";
}

template <class Config, size_t K>
constexpr size_t write(const Knob<Config> (&knobs)[K], Writer& w) {
  w.raw(kHeaderLine);
  for (const Knob<Config>& knob : knobs) {
    const KnobSpec& s = knob.spec;
    w.field(s.name);
    w.put('\t');
    w.raw(typeWord(s.type));
    w.put('\t');
    if (s.type == KnobType::String || s.type == KnobType::Enum)
      w.field(s.defaultText);
    else
      w.number(s.defaultNumber);
    w.put('\t');
    w.number(s.min);
    w.put('\t');
    w.number(s.max);
    w.put('\t');
    for (size_t i = 0; i < s.choiceCount; ++i) {
      if (i > 0) w.put(',');
      w.word(s.choices[i].word);
      w.put('=');
      w.number(s.choices[i].value);
    }
    w.put('\t');
    w.field(s.help);
    w.put('\n');
  }
  return w.size();
}

}  // namespace detail

template <class Config, size_t K>
constexpr size_t textSize(const Knob<Config> (&knobs)[K]) {
  detail::Writer counter(nullptr);
  return detail::write(knobs, counter);
}

template <size_t N, class Config, size_t K>
constexpr Text<N> text(const Knob<Config> (&knobs)[K]) {
  Text<N> out{};
  detail::Writer writer(out.bytes);
  detail::write(knobs, writer);
  return out;
}

}  // namespace ncclnet::published_knobs

#if defined(__has_attribute)
#if __has_attribute(retain)
// Kept by the linker's --gc-sections although no code refers to it.
#define NCCLNET_PUBLISHED_KNOBS_RETAIN , retain
#endif
#endif
#ifndef NCCLNET_PUBLISHED_KNOBS_RETAIN
#define NCCLNET_PUBLISHED_KNOBS_RETAIN
#endif

#define NCCLNET_PUBLISHED_KNOBS_JOIN2(a, b) a##b
#define NCCLNET_PUBLISHED_KNOBS_JOIN(a, b) NCCLNET_PUBLISHED_KNOBS_JOIN2(a, b)

// Writes `table` (a constexpr array of ncclnet::Knob) into the library file.
#define NCCLNET_PUBLISH_KNOBS(table)                                                \
  __attribute__((section("ncclnet_knobs"),                                          \
                 used NCCLNET_PUBLISHED_KNOBS_RETAIN)) static constexpr ::ncclnet:: \
      published_knobs::Text<::ncclnet::published_knobs::textSize(table)>            \
      NCCLNET_PUBLISHED_KNOBS_JOIN(ncclnetPublishedKnobs, __LINE__) =               \
          ::ncclnet::published_knobs::text<::ncclnet::published_knobs::textSize(table)>(table)
