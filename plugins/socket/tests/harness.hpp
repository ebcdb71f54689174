// SPDX-License-Identifier: Apache-2.0
// sdk-socket tests: the SDK's test kit (sdk/testing), bound to the built
// plugin. Everything else a test uses (forked children, channels, the
// handle's exchange, polling with deadlines, byte patterns) is the kit's.
#pragma once

#include "ncclnet/testing/byte_pattern.hpp"
#include "ncclnet/testing/child_process.hpp"
#include "ncclnet/testing/deadline.hpp"
#include "ncclnet/testing/handle_exchange.hpp"
#include "ncclnet/testing/net_polling.hpp"
#include "ncclnet/testing/role_check.hpp"

namespace ncclnet::socket::testing {

// The tests read as if the kit were theirs.
using namespace ::ncclnet::testing;

// sdk-socket loaded as NCCL would (NCCL_NET_PLUGIN=<path>, NCCL_NET=sdk-socket)
// through ABI `version` (0: the newest it exports), initialized for one
// communicator; `logger` receives the plugin's log lines (NULL: the kit's).
class Session : public PluginSession {
 public:
  explicit Session(int version = 0, ncclDebugLogger_t logger = nullptr)
      : PluginSession({.plugin = SDK_SOCKET_PLUGIN_PATH,
                       .netName = "sdk-socket",
                       .version = version,
                       .commId = 0x5eed,
                       .logger = logger}) {}
};

// Both ends of one connection in this process.
inline ncclResult_t connectPair(Session& s, void** sendComm, void** recvComm) {
  return connectLoopback(s, s, sendComm, recvComm);
}

}  // namespace ncclnet::socket::testing
