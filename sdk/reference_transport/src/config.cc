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

ncclResult_t TransportConfig::fromEnv(ParamTable& params, TransportConfig* out) {
  TransportConfig c;
  int64_t v = 0;
  struct SizeKnob {
    const char* name;
    size_t* field;
    const char* help;
  };
  const SizeKnob sizes[] = {
      {"NCCL_LL_BUFFSIZE", &c.buffSizes[index(Protocol::LL)], "LL buffer per connection (bytes)"},
      {"NCCL_LL128_BUFFSIZE", &c.buffSizes[index(Protocol::LL128)],
       "LL128 buffer per connection (bytes)"},
      {"NCCL_BUFFSIZE", &c.buffSizes[index(Protocol::Simple)],
       "SIMPLE buffer per connection (bytes)"},
      {"NCCL_P2P_NET_CHUNKSIZE", &c.p2pChunkSize, "p2p step (one shared-pool slot, bytes)"},
  };
  for (const SizeKnob& k : sizes) {
    ncclResult_t res =
        params.readInt(k.name, static_cast<int64_t>(*k.field), k.help, &v, 1, int64_t{1} << 31);
    if (res != ncclSuccess) return res;
    *k.field = static_cast<size_t>(v);
  }
  ncclResult_t res = params.readInt("NCCL_NET_SHARED_BUFFERS", c.sharedBuffers,
                                    "p2p shared pools (-2 auto = on, 0 off, 1 on)", &v, -2, 1);
  if (res != ncclSuccess) return res;
  c.sharedBuffers = static_cast<int>(v);
  struct BoolKnob {
    const char* name;
    bool* field;
    const char* help;
  };
  const BoolKnob bools[] = {
      {"NCCL_NET_SHARED_COMMS", &c.sharedComms, "reuse one comm per (netDev, peer, channel)"},
      {"NCCL_NET_OPTIONAL_RECV_COMPLETION", &c.optionalRecvCompletion,
       "tell the plugin LL/LL128 receives need no completion"},
      {"NCCL_NET_FORCE_FLUSH", &c.forceFlush, "flush every GPU-direct receive"},
      {"NCCL_ALLOC_P2P_NET_LL_BUFFERS", &c.allocP2pNetLLBuffers, "LL buffers for p2p connections"},
      {"NCCL_DMABUF_ENABLE", &c.dmaBufEnable,
       "register device buffers with regMrDmaBuf when the plugin and GPU allow"},
  };
  for (const BoolKnob& k : bools) {
    res = params.readInt(k.name, *k.field ? 1 : 0, k.help, &v, 0, 1);
    if (res != ncclSuccess) return res;
    *k.field = v != 0;
  }
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
