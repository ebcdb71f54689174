// SPDX-License-Identifier: Apache-2.0
// Transport: the plugin driven by the reference transport exactly as NCCL's
// proxy drives it — rings on several channels with the SIMPLE, LL and LL128
// protocols, p2p through shared and dedicated buffers, grouped receives
// through shared comms, and long runs of random sizes. A device peer plays
// NCCL's kernels on each rank and checks every byte.
//
// These catch what single-message API scenarios let through: a receive
// reported done before its bytes are in place (NCCL's proxy hands the step
// to the GPU at once), sends that overtake each other (the receiver's steps
// are consumed in order), a plugin that mishandles up to eight receives in
// flight, or the flag polling of LL/LL128.
//
// With --device cuda (profile: device: cuda) each rank plays NCCL's kernels
// with CUDA kernels on GPU (rank % GPUs), on pinned host memory; the
// *GpuMemory variants put the step buffers in device memory (NCCL's
// GPU-direct placement, registered with regMr(NCCL_PTR_CUDA) or, when the
// plugin and GPU allow, regMrDmaBuf) and need a plugin that advertises
// NCCL_PTR_CUDA.
//
// Like NCCL, the suite honors NCCL_PROTO: phases of a protocol it leaves
// out are not run (an UNPACK plugin needs NCCL_PROTO=Simple, since NCCL's
// LL and LL128 kernels have no unpack step). UnpackRingAndP2p runs only
// for UNPACK devices: every SIMPLE step then arrives as bounce pages the
// device peer copies into place from the plugin's scatter lists.
#include <cstdio>
#include <cstdlib>

#include "ncclnet/nccl_protocols.hpp"
#include "ncclnet/transport/workload.hpp"
#include "scenario/registry.hpp"
#if NCCLNET_HAVE_CUDA_PEER
#include "ncclnet/transport/cuda_device_peer.hpp"
#endif

namespace conformance {

namespace {

namespace rt = ncclnet::transport;

std::string toHex(const std::vector<rt::NetHandle>& handles) {
  std::string out;
  char byte[3];
  for (const rt::NetHandle& h : handles) {
    for (char b : h.bytes) {
      std::snprintf(byte, sizeof(byte), "%02x", static_cast<unsigned char>(b));
      out += byte;
    }
  }
  return out;
}

bool fromHex(const std::string& hex, std::vector<rt::NetHandle>* handles) {
  if (hex.size() != handles->size() * sizeof(rt::NetHandle) * 2) return false;
  size_t at = 0;
  for (rt::NetHandle& h : *handles) {
    for (char& b : h.bytes) {
      unsigned v = 0;
      if (std::sscanf(hex.c_str() + at, "%2x", &v) != 1) return false;
      b = static_cast<char>(v);
      at += 2;
    }
  }
  return true;
}

// Where the step buffers live: host memory (pinned with --device cuda), or
// device memory (GPU-direct, useGdr). A scenario body takes it as a
// template argument, so each placement registers the same body.
enum class Buffers { Host, Gpu };

// The rank's device side: a CPU thread on host memory, or (--device cuda)
// CUDA memory and kernels on GPU rank % count. Skips with the reason when a
// variant cannot run here (a plugin without NCCL_PTR_CUDA never gets here
// for GPU buffers: that is the variants' requirement). CUDA is set up
// before the plugin is first asked for its properties: like NCCL's proxy, a
// plugin may only offer GPU memory to a process that already has the CUDA
// driver loaded.
void chooseDevice(Ctx& c, Buffers buffers, rt::RankOptions* options) {
  if (c.profile().device != "cuda") {
    if (buffers == Buffers::Gpu) {
      skip("GPU-memory buffers need --device cuda (device memory and CUDA kernels)");
    }
    return;
  }
#if NCCLNET_HAVE_CUDA_PEER
  std::string why;
  int gpus = rt::cudaDeviceCount(&why);
  if (gpus == 0) skip("--device cuda: %s", why.c_str());
  int gpu = c.rank() % gpus;
  if (rt::useCudaDevice(gpu, options, &why) != ncclSuccess) {
    skip("--device cuda: GPU %d is not usable: %s", gpu, why.c_str());
  }
  c.note("NCCL's kernels on CUDA device " + std::to_string(gpu) +
         (buffers == Buffers::Gpu ? ", step buffers in device memory" : ""));
#else
  (void)options;
  skip("--device cuda: this ncclnet-conformance was built without the CUDA toolkit (nvcc)");
#endif
}

// How the rank registered its buffers, for the report (DMA-BUF ones above all).
void countRegistrations(Ctx& c, const rt::Transport& transport) {
  rt::RegistrationCounts r = transport.registrations();
  if (r.device > 0) c.count("transportCudaRegistrations", r.device);
  if (r.dmaBuf > 0) c.count("transportDmabufRegistrations", r.dmaBuf);
}

// The phases NCCL_PROTO leaves NCCL; skips when none is left.
rt::Workload withEnabledProtocols(const rt::Workload& w) {
  const char* proto = std::getenv("NCCL_PROTO");
  ncclnet::NcclProtocols enabled;
  if (!ncclnet::parseNcclProto(proto, &enabled)) return w;  // a form NCCL may read otherwise
  rt::Workload out = w;
  out.phases.clear();
  for (const rt::RoundOptions& phase : w.phases) {
    bool on = phase.protocol == rt::Protocol::Simple ? enabled.simple
              : phase.protocol == rt::Protocol::LL   ? enabled.ll
                                                     : enabled.ll128;
    if (on) out.phases.push_back(phase);
  }
  if (out.phases.empty())
    skip("NCCL_PROTO=%s leaves NCCL none of this scenario's protocols", proto);
  return out;
}

// Runs this rank's side of `w` on the plugin through the reference
// transport, with the profile's limits; any failure breaks `rule`.
void runWorkload(Ctx& c, const rt::Workload& all, const rt::TransportConfig& config, Rule rule,
                 Buffers buffers = Buffers::Host) {
  if (c.nranks() != 2) skip("transport scenarios run on 2 ranks, not %d", c.nranks());
  const rt::Workload w = withEnabledProtocols(all);
  auto limit = std::chrono::milliseconds(static_cast<long>(c.waitLimit() * 1000));
  rt::RankOptions options;
  options.transport.config = config;
  options.transport.commId = 0x7e57c0de00ull + static_cast<uint64_t>(c.rank());
  chooseDevice(c, buffers, &options);
  rt::Rank rank;
  CONF_OK(rt::makeRank(c.net(), std::move(options), &rank), rule,
          "the reference transport's set-up (init, progress thread)");

  rt::ProcessHooks hooks;
  hooks.timeout = limit;
  hooks.exchange = [&](const std::vector<rt::NetHandle>& mine, std::vector<rt::NetHandle>* all) {
    std::vector<std::string> hex = c.allgather("transport handles", toHex(mine));
    std::vector<std::vector<rt::NetHandle>> byRank(hex.size(), mine);
    for (size_t r = 0; r < hex.size(); r++) {
      if (!fromHex(hex[r], &byRank[r])) return ncclInternalError;
    }
    *all = mine;
    for (size_t i = 0; i < w.links.size(); i++) (*all)[i] = byRank[w.links[i].recvProcess][i];
    return ncclSuccess;
  };
  hooks.barrier = [&] {
    c.barrier("transport rounds done");
    return ncclSuccess;
  };
  hooks.activity = [&](const std::string& what) { c.activity(what); };

  std::string why;
  ncclResult_t res = rt::runWorkloadProcess(rank, w, c.rank(), hooks, &why);
  countRegistrations(c, *rank.transport);
  if (res != ncclSuccess) {
    fail(rule, "through the reference transport: %s (%s)", why.c_str(), resultText(res).c_str());
  }
}

template <Buffers buffers>
void ringSimple(Ctx& c) {
  rt::Workload w;
  w.links = rt::twoRankRing(4, false, buffers == Buffers::Gpu);
  w.phases = {rt::RoundOptions{.protocol = rt::Protocol::Simple},
              rt::RoundOptions{.protocol = rt::Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4}};
  w.maxBytes = 300000;
  runWorkload(c, w, rt::TransportConfig::shrunk(), Rule::CompletionReportsSizes, buffers);
}

template <Buffers buffers>
void ringLL(Ctx& c) {
  rt::Workload w;
  w.links = rt::twoRankRing(4, false, buffers == Buffers::Gpu);
  w.phases = {rt::RoundOptions{.protocol = rt::Protocol::LL}};
  w.maxBytes = 100000;
  runWorkload(c, w, rt::TransportConfig::shrunk(), Rule::CompletionReportsSizes, buffers);
}

template <Buffers buffers>
void ringLL128(Ctx& c) {
  rt::Workload w;
  w.links = rt::twoRankRing(4, false, buffers == Buffers::Gpu);
  w.phases = {rt::RoundOptions{.protocol = rt::Protocol::LL128}};
  w.maxBytes = 300000;
  runWorkload(c, w, rt::TransportConfig::shrunk(), Rule::CompletionReportsSizes, buffers);
}

void ringNcclBuffers(Ctx& c) {
  rt::Workload w;
  w.links = rt::twoRankRing(2, false);
  w.phases = {rt::RoundOptions{.protocol = rt::Protocol::Simple},
              rt::RoundOptions{.protocol = rt::Protocol::LL128},
              rt::RoundOptions{.protocol = rt::Protocol::LL}};
  w.rounds = 3;
  w.maxBytes = 5 << 20;
  runWorkload(c, w, rt::TransportConfig(), Rule::CompletionReportsSizes);
}

template <Buffers buffers>
void p2pShared(Ctx& c) {
  rt::Workload w;
  w.links = rt::twoRankRing(4, true, buffers == Buffers::Gpu);
  w.phases = {rt::RoundOptions{}};
  w.rounds = 12;
  runWorkload(c, w, rt::TransportConfig::shrunk(), Rule::CompletionReportsSizes, buffers);
}

void p2pDedicated(Ctx& c) {
  rt::TransportConfig config = rt::TransportConfig::shrunk();
  config.sharedBuffers = 0;
  rt::Workload w;
  w.links = rt::twoRankRing(2, true);
  w.phases = {rt::RoundOptions{}, rt::RoundOptions{.protocol = rt::Protocol::LL}};
  runWorkload(c, w, config, Rule::CompletionReportsSizes);
}

template <Buffers buffers>
void groupedSharedComms(Ctx& c) {
  rt::TransportConfig config = rt::TransportConfig::shrunk();
  config.allocP2pNetLLBuffers = true;
  rt::Workload w;
  w.links = rt::fanInLinks(4, 2, buffers == Buffers::Gpu);
  w.sendGroupByLocalRank = true;
  w.phases = {rt::RoundOptions{}, rt::RoundOptions{.protocol = rt::Protocol::LL}};
  w.rounds = 10;
  runWorkload(c, w, config, Rule::TagRouting, buffers);
}

void registeredBuffers(Ctx& c) {
  rt::TransportConfig config = rt::TransportConfig::shrunk();
  config.maxNetSize = 100000;  // several network messages per user buffer
  rt::Workload w;
  w.links = rt::twoRankRing(2, true);
  w.phases = {rt::RoundOptions{.registered = true}, rt::RoundOptions{},
              rt::RoundOptions{.registered = true}};
  w.maxBytes = 700000;
  runWorkload(c, w, config, Rule::CompletionReportsSizes);
}

void longRandomRun(Ctx& c) {
  rt::Workload w;
  w.links = rt::twoRankRing(2, false);
  for (int i = 0; i < 4; i++) {
    w.phases.push_back(rt::RoundOptions{.protocol = rt::Protocol::Simple});
    w.phases.push_back(rt::RoundOptions{.protocol = rt::Protocol::LL});
    w.phases.push_back(rt::RoundOptions{.protocol = rt::Protocol::LL128});
  }
  w.rounds = 6;
  w.maxBytes = 1 << 20;
  w.seed = 7;
  runWorkload(c, w, rt::TransportConfig::shrunk(), Rule::CompletionReportsSizes);
}

void unpackRingAndP2p(Ctx& c) {
  rt::Workload ring;
  ring.links = rt::twoRankRing(2, false);
  ring.phases = {
      rt::RoundOptions{.protocol = rt::Protocol::Simple},
      rt::RoundOptions{.protocol = rt::Protocol::Simple, .sliceSteps = 2, .chunkSteps = 4}};
  ring.rounds = 8;
  ring.maxBytes = 1 << 20;
  runWorkload(c, ring, rt::TransportConfig(), Rule::CompletionReportsSizes);
  rt::Workload p2p;
  p2p.links = rt::twoRankRing(2, true);
  p2p.phases = {rt::RoundOptions{.protocol = rt::Protocol::Simple}};
  p2p.rounds = 8;
  p2p.maxBytes = 1 << 20;
  runWorkload(c, p2p, rt::TransportConfig(), Rule::CompletionReportsSizes);
}

}  // namespace

void addTransportScenarios(std::vector<Scenario>& out) {
  const char* area = "Transport";
  out.push_back(
      {.area = area,
       .name = "RingSimpleFourChannels",
       .rule = Rule::CompletionReportsSizes,
       .ranks = 2,
       .run = ringSimple<Buffers::Host>,
       .summary = "SIMPLE ring on 4 channels, 1 and 2 slice steps, small buffers, bytes checked"});
  out.push_back({.area = area,
                 .name = "RingLLFourChannels",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = ringLL<Buffers::Host>,
                 .summary = "LL ring on 4 channels: flag-interleaved lines polled by the device"});
  out.push_back({.area = area,
                 .name = "RingLL128FourChannels",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = ringLL128<Buffers::Host>,
                 .summary = "LL128 ring on 4 channels: 128-byte lines with a flag word"});
  out.push_back({.area = area,
                 .name = "RingNcclDefaultBuffers",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = ringNcclBuffers,
                 .summary = "ring with NCCL's buffer sizes, messages up to 5 MiB, every protocol"});
  out.push_back({.area = area,
                 .name = "P2pSharedBuffers",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = p2pShared<Buffers::Host>,
                 .summary = "p2p on 4 channels through the shared per-peer pools"});
  out.push_back({.area = area,
                 .name = "P2pDedicatedBuffers",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = p2pDedicated,
                 .summary = "p2p with NCCL_NET_SHARED_BUFFERS=0, SIMPLE and LL"});
  out.push_back(
      {.area = area,
       .name = "GroupedReceivesThroughSharedComms",
       .rule = Rule::TagRouting,
       .ranks = 2,
       .needs = {.groupedReceives = true},
       .run = groupedSharedComms<Buffers::Host>,
       .summary = "4 local ranks share one comm per channel: grouped receives routed by tag"});
  out.push_back({.area = area,
                 .name = "RegisteredBuffers",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = registeredBuffers,
                 .summary =
                     "p2p from and into registered user buffers, in steps of maxNetSize, between "
                     "rounds through the shared pools"});
  out.push_back({.area = area,
                 .name = "LongRandomRun",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .run = longRandomRun,
                 .summary = "72 rounds of random sizes up to 1 MiB, protocols alternating"});
  out.push_back({.area = area,
                 .name = "UnpackRingAndP2p",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .needs = {.unpackDevice = true},
                 .run = unpackRingAndP2p,
                 .summary =
                     "UNPACK devices: ring and p2p steps land as bounce pages, unpacked by the "
                     "device peer from the plugin's scatter lists, bytes checked"});
  // GPU-direct placement: --device cuda and a plugin with NCCL_PTR_CUDA.
  out.push_back(
      {.area = area,
       .name = "RingSimpleGpuMemory",
       .rule = Rule::CompletionReportsSizes,
       .ranks = 2,
       .needs = {.cudaMemory = true},
       .run = ringSimple<Buffers::Gpu>,
       .summary = "SIMPLE ring on 4 channels with step buffers in GPU memory (--device cuda)"});
  out.push_back(
      {.area = area,
       .name = "RingLLGpuMemory",
       .rule = Rule::CompletionReportsSizes,
       .ranks = 2,
       .needs = {.cudaMemory = true},
       .run = ringLL<Buffers::Gpu>,
       .summary = "LL ring, receive lines in GPU memory polled by CUDA kernels (--device cuda)"});
  out.push_back(
      {.area = area,
       .name = "RingLL128GpuMemory",
       .rule = Rule::CompletionReportsSizes,
       .ranks = 2,
       .needs = {.cudaMemory = true},
       .run = ringLL128<Buffers::Gpu>,
       .summary = "LL128 ring with GPU memory: sends ready on the tail alone (--device cuda)"});
  out.push_back({.area = area,
                 .name = "P2pSharedGpuMemory",
                 .rule = Rule::CompletionReportsSizes,
                 .ranks = 2,
                 .needs = {.cudaMemory = true},
                 .run = p2pShared<Buffers::Gpu>,
                 .summary = "p2p through shared pools in GPU memory (--device cuda)"});
  out.push_back(
      {.area = area,
       .name = "GroupedReceivesGpuMemory",
       .rule = Rule::TagRouting,
       .ranks = 2,
       .needs = {.groupedReceives = true, .cudaMemory = true},
       .run = groupedSharedComms<Buffers::Gpu>,
       .summary = "grouped receives through shared comms into GPU memory (--device cuda)"});
}

}  // namespace conformance
