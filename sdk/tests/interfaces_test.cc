// SPDX-License-Identifier: Apache-2.0
// Interface choice (ncclnet/interfaces.hpp): NCCL_SOCKET_IFNAME read as NCCL
// reads it, NCCL's automatic order, and loopback as its last resort only
// where the caller takes it (sdk-ib's handshake) and never for sdk-socket's
// devices. The grammar itself is NameList's (name_list_test.cc).
#include "ncclnet/interfaces.hpp"

#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>

#include "ncclnet/oob_channel.hpp"

namespace ncclnet {
namespace {

// Whether any interface but lo is running: decides what the automatic order
// must return on this machine.
bool onlyLoopbackRuns() {
  Logger log;
  return findInterfaces("^lo", AF_UNSPEC, Loopback::OnlyWhenNamed, log).empty();
}

TEST(Interfaces, LoopbackOnlyWhenAskedOrAsTheLastResort) {
  Logger log;
  for (const Interface& itf : findInterfaces("", AF_UNSPEC, Loopback::OnlyWhenNamed, log)) {
    EXPECT_NE(itf.name, "lo");
  }
  auto last = findInterfaces("", AF_UNSPEC, Loopback::LastResort, log);
  if (onlyLoopbackRuns()) {
    ASSERT_EQ(last.size(), 1u);
    EXPECT_EQ(last[0].name, "lo");
  } else {
    for (const Interface& itf : last) EXPECT_NE(itf.name, "lo");
  }
  auto lo = findInterfaces("lo", AF_INET, Loopback::OnlyWhenNamed, log);
  ASSERT_EQ(lo.size(), 1u);
  EXPECT_EQ(lo[0].addr.ss_family, AF_INET);
  EXPECT_EQ(lo[0].speedMbps, kFallbackSpeedMbps);
  EXPECT_FALSE(lo[0].speedFromSysfs);
  EXPECT_TRUE(lo[0].pciPath.empty());
  // ::1 is never taken (NCCL skips IPv6 loopback).
  EXPECT_TRUE(findInterfaces("lo", AF_INET6, Loopback::LastResort, log).empty());
  EXPECT_TRUE(findInterfaces("no-such-if", AF_UNSPEC, Loopback::LastResort, log).empty());
}

TEST(Interfaces, ListIsReadAsNcclReadsIt) {
  Logger log;
  auto find = [&](const char* spec) {
    return findInterfaces(spec, AF_INET, Loopback::OnlyWhenNamed, log).size();
  };
  EXPECT_EQ(find("=lo"), 1u);
  EXPECT_EQ(find("lo:1"), 1u);  // interfaces have no port
  EXPECT_EQ(find("^"), 0u);     // '^' alone keeps nothing
  EXPECT_EQ(find("=l"), 0u);
}

TEST(OobChannel, HandshakeAddressIsTheFirstInterfaceNcclWouldTake) {
  sockaddr_storage addr{};
  std::string why;
  ASSERT_TRUE(oobLocalAddress("lo", &addr, &why)) << why;
  ASSERT_EQ(addr.ss_family, AF_INET);
  EXPECT_EQ(ntohl(reinterpret_cast<sockaddr_in*>(&addr)->sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_FALSE(oobLocalAddress("no-such-if", &addr, &why));
  EXPECT_NE(why.find("NCCL_SOCKET_IFNAME=no-such-if"), std::string::npos) << why;
  // Unset: some address, whatever this machine runs (lo at worst).
  EXPECT_TRUE(oobLocalAddress("", &addr, &why)) << why;
}

}  // namespace
}  // namespace ncclnet
