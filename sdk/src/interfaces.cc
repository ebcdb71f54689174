// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: interface discovery with NCCL_SOCKET_IFNAME's syntax.
#include "ncclnet/interfaces.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ncclnet {

std::string pciPathOf(const std::string& ifname) {
  std::string link = "/sys/class/net/" + ifname + "/device";
  char resolved[PATH_MAX];
  if (realpath(link.c_str(), resolved) == nullptr) return "";  // virtual: no device
  return resolved;
}

int speedOf(const std::string& ifname, bool* fromSysfs) {
  // Reading fails with EINVAL for loopback and for links that are down;
  // virtual NICs report -1.
  std::ifstream file("/sys/class/net/" + ifname + "/speed");
  long speed = 0;
  *fromSysfs = static_cast<bool>(file >> speed) && speed > 0 && speed < INT_MAX;
  return *fromSysfs ? static_cast<int>(speed) : kFallbackSpeedMbps;
}

namespace {

// The 48-bit hardware address as the device's guid, so that two IP
// interfaces on one port (aliases, VLANs) share bandwidth accounting in
// NCCL's topology search; interfaces without one get their index.
uint64_t guidOf(const std::string& ifname, uint64_t fallback) {
  std::ifstream file("/sys/class/net/" + ifname + "/address");
  std::string text;
  if (!(file >> text)) return fallback;
  unsigned b[6];
  if (std::sscanf(text.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) !=
      6) {
    return fallback;
  }
  uint64_t mac = 0;
  for (unsigned byte : b) mac = (mac << 8) | (byte & 0xff);
  return mac != 0 ? mac : fallback;
}

bool usableAddress(const sockaddr* sa, int family) {
  if (sa == nullptr) return false;
  if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) return false;
  if (family != AF_UNSPEC && sa->sa_family != family) return false;
  if (sa->sa_family == AF_INET6) {
    // NCCL skips ::1. It keeps a link-local address; this SDK skips it: a
    // peer cannot reach it without knowing the scope.
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) {
      return false;
    }
  }
  return true;
}

std::vector<Interface> collect(const NameList& filter, int family) {
  std::vector<Interface> found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    // Running: up and attached, as NCCL asks (findInterfaces).
    if (!(it->ifa_flags & IFF_RUNNING) || !usableAddress(it->ifa_addr, family)) continue;
    std::string name = it->ifa_name;
    if (!filter.keeps(name)) continue;
    bool seen = false;  // one device per interface: its first usable address
    for (const Interface& i : found) seen = seen || i.name == name;
    if (seen) continue;
    Interface itf;
    itf.name = name;
    itf.addrLen = it->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&itf.addr, it->ifa_addr, itf.addrLen);
    itf.address = describeAddress(it->ifa_addr);
    itf.pciPath = pciPathOf(name);
    itf.speedMbps = speedOf(name, &itf.speedFromSysfs);
    itf.guid = guidOf(name, found.size());
    found.push_back(std::move(itf));
  }
  freeifaddrs(list);
  return found;
}

}  // namespace

std::vector<Interface> findInterfaces(const std::string& spec, int family, Loopback loopback,
                                      const Logger& log) {
  std::vector<Interface> found;
  if (!spec.empty()) {
    found = collect(NameList::parse(spec, kMaxInterfaceEntries), family);
    if (found.empty()) {
      NCCLNET_WARN(log, "NCCL_SOCKET_IFNAME=%s matches no interface that is up with an address",
                   spec.c_str());
    }
    return found;
  }
  // NCCL's automatic order (ncclFindInterfaces; its NCCL_COMM_ID subnet
  // match applies to the bootstrap only).
  found = collect(NameList::parse("ib", kMaxInterfaceEntries), family);
  if (found.empty()) {
    found = collect(NameList::parse("^docker,lo,virbr", kMaxInterfaceEntries), family);
  }
  if (found.empty()) found = collect(NameList::parse("docker", kMaxInterfaceEntries), family);
  if (found.empty() && loopback == Loopback::LastResort) {
    found = collect(NameList::parse("lo", kMaxInterfaceEntries), family);
  }
  if (found.empty()) found = collect(NameList::parse("virbr", kMaxInterfaceEntries), family);
  if (found.empty()) {
    NCCLNET_INFO(log, NCCL_INIT | NCCL_NET,
                 "no usable interface (loopback is used only with NCCL_SOCKET_IFNAME=lo)");
  }
  return found;
}

std::string describeAddress(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + "<" + std::to_string(port) + ">";
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    return "[" + std::string(host) + "]<" + std::to_string(port) + ">";
  }
  return "(unknown family " + std::to_string(addr->sa_family) + ")";
}

}  // namespace ncclnet
