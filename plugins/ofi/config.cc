// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the knobs, declared once with their defaults (docs/plugins/ofi.md).
#include "config.hpp"

#include "ncclnet/published_knobs.hpp"

namespace ncclnet::ofi {
namespace {

constexpr Knob<Config> kKnobs[] = {
    stringKnob("NCCLNET_OFI_PROVIDER", &Config::provider, "",
               "libfabric provider to use, e.g. tcp;ofi_rxm, shm, efa (empty: the first one "
               "libfabric offers; FI_PROVIDER filters as well)"),
    stringKnob("NCCLNET_OFI_DOMAINS", &Config::domains, "",
               "comma-separated provider domains (NICs) to expose, e.g. eth0,eth1 or lo (empty: "
               "every non-loopback domain; loopback only when nothing else exists)"),
    flagKnob("NCCLNET_OFI_HMEM", &Config::hmem, true,
             "1: advertise GPU memory (NCCL_PTR_CUDA) where the provider offers FI_HMEM; "
             "0: host memory only"),
    flagKnob("NCCLNET_OFI_MR_CACHE", &Config::mrCache, true,
             "1: reuse a registration that already covers the pages; 0: register every regMr "
             "on its own"),
    intKnob("NCCLNET_OFI_CQ_READ_COUNT", &Config::cqReadCount, 16, 1, 256,
            "completions read per fi_cq_read call"),
    intKnob("NCCLNET_OFI_CLOSE_TIMEOUT_MS", &Config::closeTimeoutMs, 1000, 0, 60000,
            "how long closeSend/closeRecv/closeListen wait for cancelled operations before "
            "leaving them to the endpoint's teardown"),
    intKnob("NCCLNET_OFI_PROBE_INTERVAL_MS", &Config::probeIntervalMs, 500, 10, 60000,
            "while a request waits on a peer, how often the peer is pinged; a ping the provider "
            "cannot deliver (the peer's process is gone) fails the peer's requests at once"),
    intKnob("NCCLNET_OFI_PEER_TIMEOUT_MS", &Config::peerTimeoutMs, 30000, 100, 3600000,
            "while a request waits on a peer, how long the peer may leave pings unanswered (a "
            "partition, a stopped host) before its requests fail with ncclRemoteError"),
    intKnob("NCCLNET_OFI_STRAY_TIMEOUT_MS", &Config::strayTimeoutMs, 10000, 0, 3600000,
            "TCP connections to the endpoint's port that sent nothing for this long are shut "
            "down (0: never); only for tcp-based providers"),
    flagKnob("NCCLNET_OFI_PROGRESS_THREAD", &Config::progressThread, false,
             "1: a thread per endpoint drives the provider's progress continuously, so data "
             "moves on every endpoint at once, not only when NCCL's proxy thread tests; 0: "
             "progress only in the calls NCCL makes (and the watchdog's ticks)"),
    intKnob("NCCLNET_OFI_ENDPOINTS", &Config::endpoints, 1, 1, 64,
            "endpoints per device, each with its own provider connections and completion "
            "queue; listens take them in turn, a connect the one of the listener's index "
            "(above 1, registrations belong to a comm: regIsGlobal 0)"),
};
// Listed by `ncclnet-info --params` from the library file, without init.
NCCLNET_PUBLISH_KNOBS(kKnobs);

}  // namespace

ncclResult_t Config::read(ParamTable& params, Config* out) {
  Config config;
  ncclResult_t res = readKnobs(params, kKnobs, &config);
  if (res != ncclSuccess) return res;
  *out = config;
  return ncclSuccess;
}

}  // namespace ncclnet::ofi
