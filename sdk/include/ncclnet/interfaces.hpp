// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: which IP interfaces a plugin uses, chosen the way NCCL
// chooses its own (src/misc/socket.cc ncclFindInterfaces, shared by NCCL's
// Socket transport and its IB transport's handshake), and what sysfs says
// about each (PCI path, link speed, hardware address). sdk-socket takes
// every interface as a device; sdk-ib's handshake takes the first.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ncclnet/log.hpp"
#include "ncclnet/name_list.hpp"

namespace ncclnet {

// Link speed used when sysfs has none (virtual and loopback interfaces, or a
// link that is down): NCCL's own default for an unknown socket device.
constexpr int kFallbackSpeedMbps = 10000;

struct Interface {
  std::string name;
  sockaddr_storage addr{};
  socklen_t addrLen = 0;
  std::string address;  // printable, for logs
  std::string pciPath;  // realpath of /sys/class/net/<if>/device; "" if none
  int speedMbps = kFallbackSpeedMbps;
  bool speedFromSysfs = false;
  uint64_t guid = 0;
};

// What NCCL's automatic choice ends with when nothing else is up: NCCL
// takes loopback last. A plugin whose devices are interfaces may refuse it,
// so that two hosts never "connect" through their own lo.
enum class Loopback { LastResort, OnlyWhenNamed };

// One Interface per interface that NCCL_SOCKET_IFNAME's list `spec` keeps
// (ncclnet::NameList, NCCL's grammar), is running and has an address of
// `family` (AF_UNSPEC: IPv4 or IPv6; ::1 is skipped as NCCL does, and so
// are IPv6 link-local addresses, which need a scope to be reachable), its
// first such address. Without a spec, NCCL's order: ib* interfaces if any,
// else every interface but lo, docker* and virbr*, else docker*, else
// (Loopback::LastResort) lo, else virbr*.
std::vector<Interface> findInterfaces(const std::string& spec, int family, Loopback loopback,
                                      const Logger& log);

// sysfs facts about one interface; exposed for tests.
std::string pciPathOf(const std::string& ifname);
int speedOf(const std::string& ifname, bool* fromSysfs);

// "1.2.3.4<port>" / "[::1]<port>" for logs.
std::string describeAddress(const sockaddr* addr);

}  // namespace ncclnet
