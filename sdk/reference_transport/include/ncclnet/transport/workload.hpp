// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): NCCL-shaped traffic over Transports,
// every byte checked by the device peers. A round is what one NCCL kernel
// launch moves: each rank posts its receive subs as one proxy operation, its
// send subs as one operation per send group, and launches one device work
// per sub. The same rounds run in one process (tests) or with each rank in
// its own process (ncclnet-conformance, two-process tests): an end that
// lives elsewhere is simply absent here and runs there.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ncclnet/host/net_view.hpp"
#include "ncclnet/transport/device_peer.hpp"
#include "ncclnet/transport/transport.hpp"

namespace ncclnet::transport {

// One rank: NCCL's proxy state (Transport) and what plays its kernels.
struct Rank {
  std::unique_ptr<Transport> transport;
  std::unique_ptr<DevicePeer> device;
};

// How a rank is built. Defaults: host memory and a HostDevicePeer.
struct RankOptions {
  TransportOptions transport;
  std::function<std::unique_ptr<DevicePeer>()> makeDevice;  // empty: HostDevicePeer
};
ncclResult_t makeRank(host::NetView& net, RankOptions options, Rank* out);

// Polls connect/accept on every pending connection until all are done or
// `timeout` passed.
ncclResult_t connectAll(const std::vector<std::pair<Connection*, const NetHandle*>>& sends,
                        const std::vector<Connection*>& recvs, std::chrono::milliseconds timeout,
                        std::string* why);

// One transfer of a round. Either end may be absent (another process).
struct Transfer {
  Rank* sendRank = nullptr;
  Connection* send = nullptr;
  Rank* recvRank = nullptr;
  Connection* recv = nullptr;
  size_t nbytes = 0;
  uint64_t seed = 0;
  int sendGroup = 0;  // send subs with the same group form one proxy operation
};

struct RoundOptions {
  Protocol protocol = Protocol::Simple;
  int sliceSteps = 1;
  int chunkSteps = 1;
  DataMode mode = DataMode::Verify;
  // Registered user buffers (SIMPLE, sliceSteps 1): each end allocates a
  // buffer for its message from its transport's memory provider, registers
  // it on the connection, and the payload bypasses the step buffers.
  bool registered = false;
};

// Runs one round; `timeout` bounds every wait of the device and the proxy.
// On failure `why` says which side failed: "device: ..." (a wrong byte or a
// stuck work) or "proxy: ..." (a plugin error or stuck sub).
ncclResult_t runRound(const std::vector<Transfer>& transfers, const RoundOptions& options,
                      std::chrono::milliseconds timeout, std::string* why);

// The seed of one link's message in one round (both ends compute it).
uint64_t seedFor(int round, int link);

// ---- multi-process workloads --------------------------------------------

// One directed link of a topology: which process sends, which receives, and
// the specs NCCL would build on each side.
struct LinkSpec {
  int sendProcess = 0;
  int recvProcess = 1;
  ConnectionSpec send;
  ConnectionSpec recv;
};

// Two ranks in a ring on `channels` channels (p2p: connIndex 1, shared pools).
std::vector<LinkSpec> twoRankRing(int channels, bool p2p, bool useGdr = false);
// Process 1 proxies `senders` local ranks that all send to rank 0 in process
// 0: one shared comm per channel, grouped receives on process 0.
std::vector<LinkSpec> fanInLinks(int senders, int channels, bool useGdr = false);

struct Workload {
  std::vector<LinkSpec> links;
  std::vector<RoundOptions> phases;  // each runs `rounds` rounds
  int rounds = 8;
  size_t maxBytes = 200000;           // sizes are random in [0, maxBytes], one in 8 zero
  uint32_t seed = 1;                  // every process draws the same sizes
  bool sendGroupByLocalRank = false;  // one send operation per sending local rank
};

// What a process needs from whoever runs the others: `exchange` swaps the
// connect handles (one per link; a process fills those it receives on and
// gets the full vector back), `barrier` holds every process until all
// finished their rounds, before anything closes.
struct ProcessHooks {
  std::function<ncclResult_t(const std::vector<NetHandle>& mine, std::vector<NetHandle>* all)>
      exchange;
  std::function<ncclResult_t()> barrier;
  std::chrono::milliseconds timeout{20000};
  // Called once connected, and after each round (for progress reports).
  std::function<void(const std::string&)> activity;
};

// Runs process `me`'s side of `w` on `rank`: set-up, handle exchange,
// connect, every round, barrier, teardown of its connections.
ncclResult_t runWorkloadProcess(Rank& rank, const Workload& w, int me, const ProcessHooks& hooks,
                                std::string* why);

}  // namespace ncclnet::transport
