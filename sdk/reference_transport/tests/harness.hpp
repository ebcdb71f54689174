// SPDX-License-Identifier: Apache-2.0
// Test harness for the reference transport: ranks (a Transport plus a
// HostDevicePeer), connection pairs, and NCCL-shaped traffic — ring
// pipelines, p2p through shared pools, fan-in through shared comms — with
// every byte checked.
#pragma once

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "ncclnet/transport/host_device_peer.hpp"
#include "ncclnet/transport/transport.hpp"

namespace ncclnet::transport::testing {

constexpr auto kTimeout = std::chrono::milliseconds(20000);

// Loads a plugin file the way NCCL would (no NCCL_NET filter).
ncclResult_t loadPlugin(const std::string& path, std::unique_ptr<host::LoadedPlugin>* out,
                        std::string* why);

struct Rank {
  std::unique_ptr<Transport> transport;
  std::unique_ptr<HostDevicePeer> device;
};
ncclResult_t makeRank(host::NetView& net, const TransportConfig& config, uint64_t commId,
                      Rank* out);

// Polls connect/accept on every pending connection until all are done.
ncclResult_t connectAll(const std::vector<std::pair<Connection*, const NetHandle*>>& sends,
                        const std::vector<Connection*>& recvs, std::string* why);

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

// One transfer inside a round. Either end may be in another process
// (nullptr here): the local end still runs, the remote end runs there.
struct Transfer {
  Rank* sendRank = nullptr;
  Connection* send = nullptr;
  Rank* recvRank = nullptr;
  Connection* recv = nullptr;
  size_t nbytes = 0;
  uint64_t seed = 0;
  int sendGroup = 0;  // send subs with the same group form one proxy operation
};
Transfer transferOn(Rank& from, Rank& to, Link& link, size_t nbytes, uint64_t seed);

// Runs one round: all transfers at once. Each rank posts its receive subs
// as one operation and its send subs as one operation per sendGroup, and
// launches one device kernel with all its works, like one NCCL kernel.
struct RoundOptions {
  Protocol protocol = Protocol::Simple;
  int sliceSteps = 1;
  int chunkSteps = 1;
  DataMode mode = DataMode::Verify;
};
ncclResult_t runRound(const std::vector<Transfer>& transfers, const RoundOptions& options,
                      std::string* why);

uint64_t seedFor(int round, int link);

}  // namespace ncclnet::transport::testing
