// SPDX-License-Identifier: Apache-2.0
// sdk-socket: which IP interfaces become devices, and what sysfs says about
// each (PCI path, link speed, hardware address).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ncclnet/log.hpp"
#include "ncclnet/name_list.hpp"

namespace ncclnet::socket {

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

// One Interface per interface that NCCL_SOCKET_IFNAME's list keeps
// (ncclnet::NameList, NCCL's grammar), is up and has an address of an
// allowed family (IPv6 link-local addresses are skipped: they need a scope to
// be reachable). Without a filter spec: ib* interfaces if any, else every
// interface but lo and docker*; loopback is used only when named.
std::vector<Interface> findInterfaces(const std::string& spec, int family, const Logger& log);

// sysfs facts about one interface; exposed for tests.
std::string pciPathOf(const std::string& ifname);
int speedOf(const std::string& ifname, bool* fromSysfs);

// "1.2.3.4<port>" / "[::1]<port>" for logs.
std::string describeAddress(const sockaddr* addr);

}  // namespace ncclnet::socket
