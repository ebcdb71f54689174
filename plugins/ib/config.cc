// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the knobs, declared once with their defaults.
#include "config.hpp"

#include <sys/socket.h>

#include "ncclnet/published_knobs.hpp"

namespace ncclnet::ib {
namespace {

using ncclnet::enumKnob;
using ncclnet::flagKnob;
using ncclnet::intKnob;
using ncclnet::Knob;
using ncclnet::KnobChoice;
using ncclnet::stringKnob;

constexpr KnobChoice kFamilies[] = {{"AF_INET", AF_INET}, {"AF_INET6", AF_INET6}};
// NCCL reads NCCL_IB_ADAPTIVE_ROUTING as an integer; these are the values it
// gives a meaning (src/transport/net_ib: ncclIbInitDevices).
constexpr KnobChoice kAdaptiveRouting[] = {{"-2", -2}, {"0", 0}, {"1", 1}};
// The path MTU as bytes or as enum ibv_mtu (1..5); 0 keeps the port's.
constexpr KnobChoice kMtus[] = {{"0", 0},    {"256", 1},  {"512", 2}, {"1024", 3},
                                {"2048", 4}, {"4096", 5}, {"1", 1},   {"2", 2},
                                {"3", 3},    {"4", 4},    {"5", 5}};

constexpr Knob<Config> kKnobs[] = {
    stringKnob("NCCL_IBVERBS_LIB", &Config::verbsLib, "libibverbs.so.1",
               "verbs library to dlopen (a path, or a name the loader searches)"),
    stringKnob("NCCL_IB_HCA", &Config::hca, "",
               "HCAs/ports to use: [^][=]name[:port],... (^ excludes, = matches exactly)"),
    intKnob("NCCL_IB_GID_INDEX", &Config::gidIndex, -1, -1, 1023,
            "GID index for RoCE (-1: pick by family and version)"),
    enumKnob("NCCL_IB_ADDR_FAMILY", &Config::addrFamily, "AF_INET", kFamilies,
             "address family of the RoCE GID to pick"),
    intKnob("NCCL_IB_ROCE_VERSION_NUM", &Config::roceVersion, 2, 1, 2,
            "RoCE version of the GID to pick"),
    intKnob("NCCL_IB_QPS_PER_CONNECTION", &Config::qpsPerConnection, 1, 1, 16,
            "RC QPs per connection; messages split across them"),
    intKnob("NCCL_IB_TIMEOUT", &Config::timeout, 20, 1, 31,
            "QP local ACK timeout exponent (4.096us * 2^n)"),
    intKnob("NCCL_IB_RETRY_CNT", &Config::retryCnt, 7, 0, 7, "QP transport retry count"),
    intKnob("NCCL_IB_SL", &Config::sl, -1, -1, 15,
            "service level (-1: the communicator's traffic class, else 0)"),
    intKnob("NCCL_IB_TC", &Config::tc, -1, -1, 255,
            "traffic class (-1: the communicator's traffic class, else 0)"),
    enumKnob("NCCL_IB_MTU", &Config::mtu, "0", kMtus,
             "path MTU: 256..4096 bytes or enum 1..5 (0: port's active)"),
    // A P_Key index beyond a port's table is known only per port: devices.cc
    // then logs it and uses index 0.
    intKnob("NCCL_IB_PKEY", &Config::pkeyIndex, 0, 0, 0xffff,
            "P_Key index of every QP (beyond a port's table: 0, logged)"),
    flagKnob("NCCL_IB_USE_INLINE", &Config::useInline, false,
             "1: the control writes (clear-to-send entries, sizes) go as inline data"),
    flagKnob("NCCL_IB_SPLIT_DATA_ON_QPS", &Config::splitDataOnQps, false,
             "1: every message is split over all QPs; 0: each message uses one QP, round robin "
             "(both sides must agree)"),
    enumKnob("NCCL_IB_ADAPTIVE_ROUTING", &Config::adaptiveRouting, "-2", kAdaptiveRouting,
             "1: the immediate of a message above NCCL_IB_AR_THRESHOLD travels apart from its "
             "data, which adaptive routing may reorder; -2: 1 on InfiniBand, 0 on RoCE"),
    intKnob("NCCL_IB_AR_THRESHOLD", &Config::arThreshold, 8192, 0, int64_t{1} << 40,
            "messages above this many bytes separate data and immediate under adaptive "
            "routing"),
    intKnob("NCCL_IB_PCI_RELAXED_ORDERING", &Config::relaxedOrdering, 2, 0, 2,
            "PCIe relaxed ordering for NCCL's registrations: 0 off, 1 on, 2 when the verbs "
            "library supports it (1 without support: logged, off)"),
    stringKnob("NCCL_SOCKET_IFNAME", &Config::socketIfname, "",
               "interfaces for the connection handshake: [^]prefix,... (default: first up, "
               "non-loopback IPv4)"),
    intKnob("NCCL_IB_CONNECT_TIMEOUT_MS", &Config::connectTimeoutMs, 60000, 100, 3600000,
            "how long connect/accept may wait for the peer's handshake"),
    flagKnob("NCCL_GDR_FLUSH_DISABLE", &Config::gdrFlushDisable, false,
             "1: iflush does not read back GPU receives (no flush QP per receive comm)"),
};
// Listed by `ncclnet-info --params` from the library file, without init.
NCCLNET_PUBLISH_KNOBS(kKnobs);

}  // namespace

ncclResult_t Config::read(ncclnet::ParamTable& params, Config* out) {
  Config c;
  ncclResult_t res = ncclnet::readKnobs(params, kKnobs, &c);
  if (res != ncclSuccess) return res;
  *out = c;
  return ncclSuccess;
}

Config Config::defaults() {
  Config c;
  ncclnet::knobDefaults(kKnobs, &c);
  return c;
}

}  // namespace ncclnet::ib
