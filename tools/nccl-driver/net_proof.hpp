// SPDX-License-Identifier: Apache-2.0
// Proof, from one rank's NCCL log (NCCL_DEBUG=INFO, subsystems INIT and
// NET), that NCCL ran the job through the network it was asked to: every
// channel connection NCCL printed ("Channel 00/0 : 0[0] -> 1[0] [send] via
// NET/sdk-socket/0", from the net transport's sendSetup/recvSetup in
// src/transport/net.cc) names that network, none went through P2P or SHM,
// and the network NCCL chose ("Using network ...", src/init.cc) is it.
// Also collects ncclnet-check's lines: the plugin's violations ("NET/check
// rule N Name: ...") apart from the caller's ("NET/check rule N Name
// (caller): ..."), which NCCL draws when it aborts with requests in flight
// (rule 51) and which say nothing against the plugin.
// A job of GPU-initiated puts alone (gin-alltoall) opens no channel: its
// proof is each rank's "Assigned GIN plugin X to comm" (src/plugin/net.cc,
// NCCL 2.28), naming the expected plugin.
// A job that asked for CollNet (NCCL_COLLNET_ENABLE=1) must show it too:
// NCCL falls back to point-to-point without a word above INFO when CollNet
// cannot be set up (src/init.cc, "Cannot initialize CollNet"), so the
// proof is each CollNet connection NCCL printed ("CollNet 00/1 : 0 [send]
// via COLLNET/sdk-socket/0", src/transport/coll_net.cc sendSetup and
// recvSetup) naming the expected network.
// No CUDA and no NCCL here: the parser is tested on any machine.
#pragma once

#include <istream>
#include <map>
#include <string>
#include <vector>

namespace nccldriver {

struct NetProof {
  std::string network;  // from "Using network X"; empty when NCCL never said
  int connections = 0;  // channel connection lines, every transport
  int viaExpected = 0;  // of those, through NET/<expected>
  bool gdr = false;     // a connection through the network used GPUDirect RDMA
  // Connection lines not through NET/<expected>, by transport ("P2P/CUMEM",
  // "NET/Socket/0" ...), with a count each.
  std::map<std::string, int> elsewhere;
  std::vector<std::string> violations;   // the plugin's, as ncclnet-check wrote them
  std::vector<std::string> callerLines;  // the caller's (NCCL's), at most 20
  std::vector<std::string> warnings;     // NCCL WARN lines, at most 20
  std::string ginPlugin;                 // from "Assigned GIN plugin X to comm"; empty when none
  int ranks = 1;                         // logs behind this proof
  int ginRanks = 0;                      // of those, the ones whose NCCL assigned a GIN plugin
  int collNetConnections = 0;            // CollNet connection lines
  int collNetViaExpected = 0;            // of those, through COLLNET/<expected>

  // What the job must show: channels (NCCL's collectives and send/recv)
  // and a GIN plugin (the device API's puts), as its ops need.
  bool needChannels = true;
  bool needGin = false;
  bool needCollNet = false;

  // Whether the log proves every channel used the expected network, and
  // every rank's GIN the expected plugin.
  bool proven() const;
  // One line: "16 of 16 connections via NET/sdk-socket" or why not.
  std::string describe() const;

  std::string expected;  // the network the proof is against
};

// Reads a log. `expected` is the network name to prove (as in NCCL_NET;
// compared exactly, as NCCL compares NCCL_NET with the plugin's name); empty
// accepts any network but still refuses P2P and SHM.
NetProof proveNetwork(std::istream& log, const std::string& expected);

// Several ranks' proofs as one: every connection of every rank counts, and
// each rank must have named the same network.
NetProof mergeProofs(const std::vector<NetProof>& ranks);

}  // namespace nccldriver
