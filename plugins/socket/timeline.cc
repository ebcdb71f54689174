// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the per-comm stage averages of NCCLNET_SOCKET_TIMELINE.
#include "timeline.hpp"

#include <algorithm>
#include <cstdio>

namespace ncclnet::socketnet {

Timeline::Timeline(bool enabled, const char* const (&stages)[3])
    : enabled_(enabled), stages_{{stages[0]}, {stages[1]}, {stages[2]}} {}

void Timeline::add(int64_t postedNs, int64_t matchedNs, int64_t lastByteNs, int64_t reportedNs,
                   size_t bytes) {
  if (!enabled_) return;
  int64_t lastByte = std::max(lastByteNs, matchedNs);
  const int64_t spans[3] = {matchedNs - postedNs, lastByte - matchedNs, reportedNs - lastByte};
  for (int i = 0; i < 3; i++) {
    double us = static_cast<double>(std::max<int64_t>(spans[i], 0)) / 1000.0;
    stages_[i].sumUs += us;
    stages_[i].maxUs = std::max(stages_[i].maxUs, us);
  }
  messages_++;
  bytes_ += static_cast<double>(bytes);
}

void Timeline::addCall(int64_t ns) {
  if (!enabled_) return;
  double us = static_cast<double>(std::max<int64_t>(ns, 0)) / 1000.0;
  calls_++;
  callSumUs_ += us;
  callMaxUs_ = std::max(callMaxUs_, us);
}

std::string Timeline::summary() const {
  double n = messages_ > 0 ? static_cast<double>(messages_) : 1.0;
  char line[512];
  int at = std::snprintf(line, sizeof(line), "%ld messages of %.0f bytes on average:", messages_,
                         bytes_ / n);
  for (int i = 0; i < 3 && at > 0 && static_cast<size_t>(at) < sizeof(line); i++) {
    at +=
        std::snprintf(line + at, sizeof(line) - static_cast<size_t>(at), "%s %s %.1f us (max %.0f)",
                      i == 0 ? "" : ",", stages_[i].name, stages_[i].sumUs / n, stages_[i].maxUs);
  }
  if (calls_ > 0 && at > 0 && static_cast<size_t>(at) < sizeof(line)) {
    std::snprintf(line + at, sizeof(line) - static_cast<size_t>(at),
                  "; %ld calls of %.1f us on average (max %.0f)", calls_,
                  callSumUs_ / static_cast<double>(calls_), callMaxUs_);
  }
  return line;
}

}  // namespace ncclnet::socketnet
