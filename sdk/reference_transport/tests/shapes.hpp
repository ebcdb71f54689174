// SPDX-License-Identifier: Apache-2.0
// The in-process traffic shapes (shapes_test.cc) are one suite run with
// each device peer: a binary instantiates `Shapes` with the peers it has —
// the CPU thread (inprocess_test.cc) or CUDA kernels on GPU 0
// (cuda_inprocess_test.cc), which skip with the reason where no GPU is.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>

#include "scenario.hpp"

namespace ncclnet::transport::testing {

struct DevicePeerKind {
  const char* name;                          // the instantiation's suffix
  RankMaker ranks;                           // empty: HostDevicePeer
  std::function<std::string()> unavailable;  // why this peer cannot run here ("" = it can)
};

class Shapes : public ::testing::TestWithParam<DevicePeerKind> {
 protected:
  void SetUp() override {
    std::string why = GetParam().unavailable ? GetParam().unavailable() : "";
    if (!why.empty()) GTEST_SKIP() << why;
  }
  RankMaker ranks() const { return GetParam().ranks; }
};

// gtest prints the parameter in test listings and failures.
inline void PrintTo(const DevicePeerKind& kind, std::ostream* os) {
  *os << kind.name;
}

inline std::string peerName(const ::testing::TestParamInfo<DevicePeerKind>& info) {
  return info.param.name;
}

}  // namespace ncclnet::transport::testing
