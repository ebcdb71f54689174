// SPDX-License-Identifier: Apache-2.0
// File: ncclnet/nccl_protocols.hpp — which of NCCL's protocols NCCL_PROTO
// leaves enabled, read the way NCCL reads it: a comma list of LL, LL128
// and Simple in any case, where a leading '^' names the ones to leave out.
// Unset or empty: all three. Also whether NCCL_PAT_ENABLE keeps NCCL's PAT
// algorithm off.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace ncclnet {

struct NcclProtocols {
  bool ll = true;
  bool ll128 = true;
  bool simple = true;

  bool simpleOnly() const { return simple && !ll && !ll128; }
};

// False (and *out untouched) when `value` is not in that syntax, e.g. the
// per-collective forms newer NCCL versions accept: the caller cannot tell
// what NCCL will use.
inline bool parseNcclProto(const char* value, NcclProtocols* out) {
  std::string text = value != nullptr ? value : "";
  if (text.empty()) {
    *out = NcclProtocols{};
    return true;
  }
  bool exclude = text[0] == '^';
  if (exclude) text.erase(0, 1);
  NcclProtocols named{false, false, false};
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string word =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (word == "ll") {
      named.ll = true;
    } else if (word == "ll128") {
      named.ll128 = true;
    } else if (word == "simple") {
      named.simple = true;
    } else {
      return false;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  *out = exclude ? NcclProtocols{!named.ll, !named.ll128, !named.simple} : named;
  return true;
}

// Whether NCCL_PAT_ENABLE (its value, or NULL when unset) turns NCCL's PAT
// algorithm off, read as NCCL reads an integer knob (src/misc/param.cc
// ncclLoadParam): unset or empty keeps the default (2, automatic), anything
// else goes through strtoll(value, NULL, 0), and a value strtoll rejects
// (errno) keeps the default as well.
//
// An UNPACK device needs it off: PAT kernels read the step buffer in place,
// without an unpack step, like LL and LL128. NCCL means to turn PAT off by
// itself for such a device (src/graph/tuning.cc ncclPatEnable checks
// comm->netDeviceType), but since 2.24 nothing sets comm->netDeviceType (2.23
// did, in src/graph/topo.cc ncclTopoGetSystem), so with one rank per node
// NCCL 2.24 to 2.30 run allgather and reduce-scatter as PAT on an UNPACK
// device and read steps that were never unpacked.
inline bool ncclPatOff(const char* value) {
  if (value == nullptr || *value == '\0') return false;
  errno = 0;
  long long v = std::strtoll(value, nullptr, 0);
  return errno == 0 && v == 0;
}

}  // namespace ncclnet
