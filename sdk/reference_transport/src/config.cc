// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the transport's knobs, read from the
// environment with NCCL's names.
#include "ncclnet/transport/config.hpp"

namespace ncclnet::transport {

const char* protocolName(Protocol p) {
  switch (p) {
    case Protocol::LL: return "LL";
    case Protocol::LL128: return "LL128";
    case Protocol::Simple: return "SIMPLE";
  }
  return "?";
}

namespace {

// NCCL's knobs, with its names and defaults, declared as flat fields; read()
// places them into TransportConfig (whose buffer sizes are an array).
struct EnvKnobs {
  size_t llBuffSize, ll128BuffSize, simpleBuffSize, p2pChunkSize;
  int sharedBuffers;
  bool sharedComms, optionalRecvCompletion, forceFlush, allocP2pNetLLBuffers, dmaBufEnable;
};

constexpr int64_t kMaxBuffSize = int64_t{1} << 31;
constexpr TransportConfig kDefaults{};

constexpr Knob<EnvKnobs> kKnobs[] = {
    sizeKnob("NCCL_LL_BUFFSIZE", &EnvKnobs::llBuffSize, kDefaultLLBuffSize, 1, kMaxBuffSize,
             "LL buffer per connection (bytes)"),
    sizeKnob("NCCL_LL128_BUFFSIZE", &EnvKnobs::ll128BuffSize, kDefaultLL128BuffSize, 1,
             kMaxBuffSize, "LL128 buffer per connection (bytes)"),
    sizeKnob("NCCL_BUFFSIZE", &EnvKnobs::simpleBuffSize, kDefaultSimpleBuffSize, 1, kMaxBuffSize,
             "SIMPLE buffer per connection (bytes)"),
    sizeKnob("NCCL_P2P_NET_CHUNKSIZE", &EnvKnobs::p2pChunkSize, kDefaultP2pChunkSize, 1,
             kMaxBuffSize, "p2p step (one shared-pool slot, bytes)"),
    intKnob("NCCL_NET_SHARED_BUFFERS", &EnvKnobs::sharedBuffers, kDefaults.sharedBuffers, -2, 1,
            "p2p shared pools (-2 auto = on, 0 off, 1 on)"),
    flagKnob("NCCL_NET_SHARED_COMMS", &EnvKnobs::sharedComms, kDefaults.sharedComms,
             "reuse one comm per (netDev, peer, channel)"),
    flagKnob("NCCL_NET_OPTIONAL_RECV_COMPLETION", &EnvKnobs::optionalRecvCompletion,
             kDefaults.optionalRecvCompletion,
             "tell the plugin LL/LL128 receives need no completion"),
    flagKnob("NCCL_NET_FORCE_FLUSH", &EnvKnobs::forceFlush, kDefaults.forceFlush,
             "flush every GPU-direct receive"),
    flagKnob("NCCL_ALLOC_P2P_NET_LL_BUFFERS", &EnvKnobs::allocP2pNetLLBuffers,
             kDefaults.allocP2pNetLLBuffers, "LL buffers for p2p connections"),
    flagKnob("NCCL_DMABUF_ENABLE", &EnvKnobs::dmaBufEnable, kDefaults.dmaBufEnable,
             "register device buffers with regMrDmaBuf when the plugin and GPU allow"),
};

}  // namespace

ncclResult_t TransportConfig::fromEnv(ParamTable& params, TransportConfig* out) {
  EnvKnobs k{};
  ncclResult_t res = readKnobs(params, kKnobs, &k);
  if (res != ncclSuccess) return res;
  TransportConfig c;
  c.buffSizes[index(Protocol::LL)] = k.llBuffSize;
  c.buffSizes[index(Protocol::LL128)] = k.ll128BuffSize;
  c.buffSizes[index(Protocol::Simple)] = k.simpleBuffSize;
  c.p2pChunkSize = k.p2pChunkSize;
  c.sharedBuffers = k.sharedBuffers;
  c.sharedComms = k.sharedComms;
  c.optionalRecvCompletion = k.optionalRecvCompletion;
  c.forceFlush = k.forceFlush;
  c.allocP2pNetLLBuffers = k.allocP2pNetLLBuffers;
  c.dmaBufEnable = k.dmaBufEnable;
  *out = c;
  return ncclSuccess;
}

ncclResult_t TransportConfig::validate(const Logger& logger) const {
  const size_t lineBytes[kNumProtocols] = {kLLLineBytes, kLL128LineBytes, 8};
  for (int p = 0; p < kNumProtocols; p++) {
    if (buffSizes[p] == 0 || buffSizes[p] % (kSteps * lineBytes[p]) != 0) {
      NCCLNET_WARN(logger,
                   "%s buffer of %zu bytes does not split into %d steps of whole %zu-byte lines",
                   protocolName(static_cast<Protocol>(p)), buffSizes[p], kSteps, lineBytes[p]);
      return ncclInvalidUsage;
    }
  }
  if (p2pChunkSize == 0 || p2pChunkSize % 8 != 0 || p2pChunkSize > stepSize(Protocol::Simple)) {
    NCCLNET_WARN(logger,
                 "p2p chunk of %zu bytes must be a multiple of 8 and at most a SIMPLE step (%zu)",
                 p2pChunkSize, stepSize(Protocol::Simple));
    return ncclInvalidUsage;
  }
  if (p2pnChannels < 1 || p2pnChannels > kMaxSubs) {
    NCCLNET_WARN(logger, "p2pnChannels %d outside 1..%d", p2pnChannels, kMaxSubs);
    return ncclInvalidUsage;
  }
  return ncclSuccess;
}

TransportConfig TransportConfig::shrunk() {
  TransportConfig c;
  c.buffSizes[index(Protocol::LL)] = 8 * 4096;
  c.buffSizes[index(Protocol::LL128)] = 8 * 128 * 64;
  c.buffSizes[index(Protocol::Simple)] = 8 * 65536;
  c.p2pChunkSize = 16384;
  return c;
}

}  // namespace ncclnet::transport
