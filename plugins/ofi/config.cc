// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the knobs (see config.hpp and docs/plugins/ofi.md).
#include "config.hpp"

namespace ncclnet::ofinet {

ncclResult_t Config::read(ParamTable& params, Config* out) {
  Config config;
  ncclResult_t res = params.readString(
      "NCCLNET_OFI_PROVIDER", "",
      "libfabric provider to use, e.g. tcp;ofi_rxm, shm, efa (empty: the first one "
      "libfabric offers; FI_PROVIDER filters as well)",
      &config.provider);
  if (res != ncclSuccess) return res;
  res = params.readString(
      "NCCLNET_OFI_DOMAINS", "",
      "comma-separated provider domains (NICs) to expose, e.g. eth0,eth1 or lo (empty: every "
      "non-loopback domain; loopback only when nothing else exists)",
      &config.domains);
  if (res != ncclSuccess) return res;
  int64_t value = 0;
  res = params.readInt("NCCLNET_OFI_HMEM", 1,
                       "1: advertise GPU memory (NCCL_PTR_CUDA) where the provider offers FI_HMEM; "
                       "0: host memory only",
                       &value, 0, 1);
  if (res != ncclSuccess) return res;
  config.hmem = value != 0;
  res = params.readInt("NCCLNET_OFI_MR_CACHE", 1,
                       "1: reuse a registration that already covers the pages; 0: register "
                       "every regMr on its own",
                       &value, 0, 1);
  if (res != ncclSuccess) return res;
  config.mrCache = value != 0;
  res = params.readInt("NCCLNET_OFI_CQ_READ_COUNT", 16, "completions read per fi_cq_read call",
                       &value, 1, 256);
  if (res != ncclSuccess) return res;
  config.cqReadCount = static_cast<int>(value);
  res = params.readInt("NCCLNET_OFI_CLOSE_TIMEOUT_MS", 1000,
                       "how long closeSend/closeRecv/closeListen wait for cancelled "
                       "operations before leaving them to the endpoint's teardown",
                       &value, 0, 60000);
  if (res != ncclSuccess) return res;
  config.closeTimeoutMs = static_cast<int>(value);
  res = params.readInt("NCCLNET_OFI_PROBE_INTERVAL_MS", 500,
                       "while a request waits on a peer, how often the peer is pinged; a ping "
                       "the provider cannot deliver (the peer's process is gone) fails the "
                       "peer's requests at once",
                       &value, 10, 60000);
  if (res != ncclSuccess) return res;
  config.probeIntervalMs = static_cast<int>(value);
  res = params.readInt("NCCLNET_OFI_PEER_TIMEOUT_MS", 30000,
                       "while a request waits on a peer, how long the peer may leave pings "
                       "unanswered (a partition, a stopped host) before its requests fail with "
                       "ncclRemoteError",
                       &value, 100, 3600000);
  if (res != ncclSuccess) return res;
  config.peerTimeoutMs = static_cast<int>(value);
  res = params.readInt("NCCLNET_OFI_STRAY_TIMEOUT_MS", 10000,
                       "TCP connections to the endpoint's port that sent nothing for this long "
                       "are shut down (0: never); only for tcp-based providers",
                       &value, 0, 3600000);
  if (res != ncclSuccess) return res;
  config.strayTimeoutMs = static_cast<int>(value);
  *out = config;
  return ncclSuccess;
}

}  // namespace ncclnet::ofinet
