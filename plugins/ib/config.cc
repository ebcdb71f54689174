// SPDX-License-Identifier: Apache-2.0
// sdk-ib: reading the knobs.
#include "config.hpp"

#include <sys/socket.h>

#include <cinttypes>
#include <cstdlib>

namespace sdkib {

int mtuEnumFrom(int64_t value) {
  switch (value) {
    case 0: return 0;
    case 1:
    case 256: return 1;
    case 2:
    case 512: return 2;
    case 3:
    case 1024: return 3;
    case 4:
    case 2048: return 4;
    case 5:
    case 4096: return 5;
    default: return -1;
  }
}

ncclResult_t Config::read(ncclnet::ParamTable& p, Config* c) {
  ncclResult_t res;
  int64_t v = 0;
#define SDKIB_INT(name, def, help, field, lo, hi) \
  res = p.readInt(name, def, help, &v, lo, hi);   \
  if (res != ncclSuccess) return res;             \
  c->field = static_cast<int>(v);

  p.readString("NCCL_IBVERBS_LIB", "libibverbs.so.1",
               "verbs library to dlopen (a path, or a name the loader searches)", &c->verbsLib);
  p.readString("NCCL_IB_HCA", "",
               "HCAs/ports to use: [^][=]name[:port],... (^ excludes, = matches exactly)", &c->hca);
  SDKIB_INT("NCCL_IB_GID_INDEX", -1, "GID index for RoCE (-1: pick by family and version)",
            gidIndex, -1, 1023);
  std::string family;
  res = p.readChoice("NCCL_IB_ADDR_FAMILY", "AF_INET", {"AF_INET", "AF_INET6"},
                     "address family of the RoCE GID to pick", &family);
  if (res != ncclSuccess) return res;
  c->addrFamily = family == "AF_INET" ? AF_INET : AF_INET6;
  SDKIB_INT("NCCL_IB_ROCE_VERSION_NUM", 2, "RoCE version of the GID to pick", roceVersion, 1, 2);
  SDKIB_INT("NCCL_IB_QPS_PER_CONNECTION", 1, "RC QPs per connection; messages split across them",
            qpsPerConnection, 1, 16);
  SDKIB_INT("NCCL_IB_TIMEOUT", 20, "QP local ACK timeout exponent (4.096us * 2^n)", timeout, 1, 31);
  SDKIB_INT("NCCL_IB_RETRY_CNT", 7, "QP transport retry count", retryCnt, 0, 7);
  SDKIB_INT("NCCL_IB_SL", -1, "service level (-1: the communicator's traffic class, else 0)", sl,
            -1, 15);
  SDKIB_INT("NCCL_IB_TC", -1, "traffic class (-1: the communicator's traffic class, else 0)", tc,
            -1, 255);
  res = p.readInt("NCCL_IB_MTU", 0, "path MTU: 256..4096 bytes or enum 1..5 (0: port's active)", &v,
                  0, 4096);
  if (res != ncclSuccess) return res;
  c->mtu = mtuEnumFrom(v);
  if (c->mtu < 0) {
    NCCLNET_WARN(p.logger(),
                 "NCCL_IB_MTU=%" PRId64
                 " is not a path MTU: give 256, 512, 1024, 2048 or 4096 bytes, the enum 1..5, or "
                 "0 for the port's active MTU",
                 v);
    return ncclInvalidUsage;
  }
  // A P_Key index beyond a port's table is known only per port: devices.cc
  // then logs it and uses index 0.
  SDKIB_INT("NCCL_IB_PKEY", 0, "P_Key index of every QP (beyond a port's table: 0, logged)",
            pkeyIndex, 0, 0xffff);
  res =
      p.readInt("NCCL_IB_USE_INLINE", 0,
                "1: the control writes (clear-to-send entries, sizes) go as inline data", &v, 0, 1);
  if (res != ncclSuccess) return res;
  c->useInline = v != 0;
  res = p.readInt("NCCL_IB_SPLIT_DATA_ON_QPS", 0,
                  "1: every message is split over all QPs; 0: each message uses one QP, round "
                  "robin (both sides must agree)",
                  &v, 0, 1);
  if (res != ncclSuccess) return res;
  c->splitDataOnQps = v != 0;
  std::string ar;
  res = p.readChoice("NCCL_IB_ADAPTIVE_ROUTING", "-2", {"-2", "0", "1"},
                     "1: the immediate of a message above NCCL_IB_AR_THRESHOLD travels apart from "
                     "its data, which adaptive routing may reorder; -2: 1 on InfiniBand, 0 on RoCE",
                     &ar);
  if (res != ncclSuccess) return res;
  c->adaptiveRouting = std::atoi(ar.c_str());
  res = p.readInt("NCCL_IB_AR_THRESHOLD", 8192,
                  "messages above this many bytes separate data and immediate under adaptive "
                  "routing",
                  &c->arThreshold, 0, int64_t{1} << 40);
  if (res != ncclSuccess) return res;
  SDKIB_INT("NCCL_IB_PCI_RELAXED_ORDERING", 2,
            "PCIe relaxed ordering for NCCL's registrations: 0 off, 1 on, 2 when the verbs "
            "library supports it (1 without support: logged, off)",
            relaxedOrdering, 0, 2);
  p.readString("NCCL_SOCKET_IFNAME", "",
               "interfaces for the connection handshake: [^]prefix,... (default: first up, "
               "non-loopback IPv4)",
               &c->socketIfname);
  res = p.readInt("NCCL_IB_CONNECT_TIMEOUT_MS", 60000,
                  "how long connect/accept may wait for the peer's handshake", &v, 100, 3600000);
  if (res != ncclSuccess) return res;
  c->connectTimeoutMs = v;
  res = p.readInt("NCCL_GDR_FLUSH_DISABLE", 0,
                  "1: iflush does not read back GPU receives (no flush QP per receive comm)", &v, 0,
                  1);
  if (res != ncclSuccess) return res;
  c->gdrFlushDisable = v != 0;
#undef SDKIB_INT
  return ncclSuccess;
}

}  // namespace sdkib
