// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): the knob tables a library published with
// NCCLNET_PUBLISH_KNOBS (ncclnet/published_knobs.hpp), read from the file
// itself: nothing is loaded and no plugin code runs, so the list is there
// for a plugin whose init fails, whose dependencies are missing, or that
// NCCL_NET passes over.
//
//   std::vector<PublishedKnob> knobs;
//   std::string error;
//   if (!readPublishedKnobs(path, &knobs, &error)) ...  // error says what and why
//   for (const PublishedKnob& k : knobs) KnobReading r = readFromEnvironment(k);
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ncclnet/knob.hpp"

namespace ncclnet::host {

struct PublishedKnob {
  std::string name;
  KnobType type = KnobType::Int;
  std::string defaultText;  // String and Enum
  int64_t defaultNumber = 0;
  int64_t min = 0;
  int64_t max = 0;
  std::vector<std::pair<std::string, int64_t>> choices;  // Enum
  std::string help;
};

// Reads every table of the ELF file at `path`. True with `out` empty when
// the library publishes none (built without the SDK, or before it could);
// false with one line in `error` when the file cannot be read as ELF or a
// table is malformed.
bool readPublishedKnobs(const std::string& path, std::vector<PublishedKnob>* out,
                        std::string* error);

// Parses the text of the `ncclnet_knobs` section (several tables
// concatenated, NUL padding between them allowed). Exposed for tests.
bool parsePublishedKnobs(const std::string& text, std::vector<PublishedKnob>* out,
                         std::string* error);

// A knob as the plugin's readKnobs would take it from this process's
// environment: the same parser, so a value refused here is refused there.
struct KnobReading {
  std::string value;         // the canonical spelling, or the raw value when refused
  std::string defaultValue;  // canonical
  bool fromEnv = false;
  bool refused = false;  // set in the environment but not a value the knob allows
  std::string allowed;   // "0 or 1", "an integer in [0, 16]", ...
  std::string help;      // as init announces it (knobListedHelp)
};
KnobReading readFromEnvironment(const PublishedKnob& knob);

}  // namespace ncclnet::host
