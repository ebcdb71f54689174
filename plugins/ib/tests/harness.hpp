// SPDX-License-Identifier: Apache-2.0
// sdk-ib tests: the SDK's test kit (sdk/testing), bound to the built plugin
// on the software verbs device. Everything else a test uses (forked
// children, channels, polling with deadlines, byte patterns, scoped env,
// log lines) is the kit's.
#pragma once

#include <cstdlib>

#include "ncclnet/testing/byte_pattern.hpp"
#include "ncclnet/testing/child_process.hpp"
#include "ncclnet/testing/deadline.hpp"
#include "ncclnet/testing/handle_exchange.hpp"
#include "ncclnet/testing/log_lines.hpp"
#include "ncclnet/testing/net_polling.hpp"
#include "ncclnet/testing/scoped_env.hpp"
#include "test_files.hpp"

namespace ncclnet::ib::testing {

// The tests read as if the kit were theirs.
using namespace ::ncclnet::testing;

// Points the plugin at softverbs and the handshake at loopback (unless the
// caller set them), so every test runs without RDMA hardware.
inline void useSoftverbs() {
  ::setenv("NCCL_IBVERBS_LIB", softverbsLibrary().c_str(), 0);
  ::setenv("NCCL_SOCKET_IFNAME", "lo", 0);
}

// sdk-ib loaded as NCCL would, pinned to ABI `version`, initialized for one
// communicator. No assignment check by the Loader: a test may expect zero
// devices.
class Session : public PluginSession {
 public:
  explicit Session(int version) : PluginSession(optionsFor(version)) {}

 private:
  static SessionOptions optionsFor(int version) {
    useSoftverbs();
    return {.plugin = sdkIbPlugin(),
            .netName = "sdk-ib",
            .version = version,
            .loaderCheck = false,
            .commId = 1,
            .logger = nullptr};
  }
};

}  // namespace ncclnet::ib::testing
