// SPDX-License-Identifier: Apache-2.0
// Test harness for the reference transport: in-process ranks on host memory
// and links between them. The traffic itself (rounds, every byte checked)
// is the library's workload API.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ncclnet/host/loader.hpp"
#include "ncclnet/transport/workload.hpp"

namespace ncclnet::transport::testing {

constexpr auto kTimeout = std::chrono::milliseconds(20000);

// Loads a plugin file the way NCCL would (no NCCL_NET filter).
ncclResult_t loadPlugin(const std::string& path, std::unique_ptr<host::LoadedPlugin>* out,
                        std::string* why);

// A rank on host memory with a HostDevicePeer.
ncclResult_t makeHostRank(host::NetView& net, const TransportConfig& config, uint64_t commId,
                          Rank* out);

// One directed link: a send connection on one rank, a receive connection
// on another.
struct Link {
  std::unique_ptr<Connection> send;
  std::unique_ptr<Connection> recv;
  int sender = 0;  // global ranks
  int receiver = 0;
  int channel = 0;
};

// Sets up (listen, connect, accept) a link between two in-process ranks.
ncclResult_t makeLink(Rank& from, Rank& to, ConnectionSpec sendSpec, ConnectionSpec recvSpec,
                      Link* out, std::string* why);

Transfer transferOn(Rank& from, Rank& to, Link& link, size_t nbytes, uint64_t seed);

}  // namespace ncclnet::transport::testing
