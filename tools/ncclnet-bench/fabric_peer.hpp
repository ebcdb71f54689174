// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: the libfabric baseline. An RDM endpoint with tagged
// messages on the provider FI_PROVIDER names (tcp;ofi_rxm when unset),
// asked for with sdk-ofi's hints, driving the same window and buffers as
// the plugin run, nothing else in the way: the number a libfabric plugin
// such as sdk-ofi is measured against.
#pragma once

#include <memory>
#include <string>

#include "pair.hpp"
#include "peer.hpp"

namespace ncclnet::bench {

class FabricPeer : public Peer {
 public:
  static std::unique_ptr<Peer> open(size_t maxSize, int window, Pair& pair, std::string* why);
};

}  // namespace ncclnet::bench
