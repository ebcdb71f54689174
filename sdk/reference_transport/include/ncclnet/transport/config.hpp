// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the knobs of NCCL's net transport,
// with NCCL's names and defaults.
#pragma once

#include <cstddef>

#include "ncclnet/abi/result.h"
#include "ncclnet/params.hpp"
#include "ncclnet/transport/constants.hpp"

namespace ncclnet::transport {

struct TransportConfig {
  // Per-protocol connection buffers, indexed by index(Protocol).
  size_t buffSizes[kNumProtocols] = {kDefaultLLBuffSize, kDefaultLL128BuffSize,
                                     kDefaultSimpleBuffSize};
  size_t p2pChunkSize = kDefaultP2pChunkSize;  // one shared-pool slot
  int p2pnChannels = 4;                        // channels a shared pool covers
  int sharedBuffers = -2;              // NCCL_NET_SHARED_BUFFERS: -2 auto (on for p2p), 0 off, 1 on
  bool sharedComms = true;             // NCCL_NET_SHARED_COMMS
  bool optionalRecvCompletion = true;  // NCCL_NET_OPTIONAL_RECV_COMPLETION
  bool forceFlush = false;             // NCCL_NET_FORCE_FLUSH: flush every GDR receive
  bool allocP2pNetLLBuffers = false;   // NCCL_ALLOC_P2P_NET_LL_BUFFERS
  bool dmaBufEnable = true;            // NCCL_DMABUF_ENABLE: regMrDmaBuf for device buffers
  // Largest network message of a registered-buffer transfer
  // (NCCL_MAX_NET_SIZE, 1 GiB in NCCL; smaller in tests to cross steps).
  size_t maxNetSize = size_t{1} << 30;

  size_t stepSize(Protocol p) const { return buffSizes[index(p)] / kSteps; }

  // NCCL's protocols with small buffers (LL 32 KiB, LL128 64 KiB, SIMPLE
  // 512 KiB, 16 KiB p2p chunks): every round of a test crosses many steps
  // and wraps the step ring several times, quickly.
  static TransportConfig shrunk();

  // Reads NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE,
  // NCCL_P2P_NET_CHUNKSIZE, NCCL_NET_SHARED_BUFFERS, NCCL_NET_SHARED_COMMS,
  // NCCL_NET_OPTIONAL_RECV_COMPLETION, NCCL_NET_FORCE_FLUSH,
  // NCCL_ALLOC_P2P_NET_LL_BUFFERS and NCCL_DMABUF_ENABLE over the defaults
  // above, then validate()s.
  static ncclResult_t fromEnv(ParamTable& params, TransportConfig* out);

  // Step buffers must hold whole lines (LL 16 B, LL128 128 B), and a p2p
  // chunk fits in a SIMPLE step (NCCL clamps it the same way).
  ncclResult_t validate(const Logger& logger) const;
};

}  // namespace ncclnet::transport
