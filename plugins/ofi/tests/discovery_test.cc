// SPDX-License-Identifier: Apache-2.0
// Discovery helpers (discovery.hpp) that need no provider.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <cstring>

#include "discovery.hpp"

namespace ncclnet::ofi {
namespace {

TEST(Discovery, DomainListsAreTrimmedAndSkipEmptyItems) {
  EXPECT_EQ(splitList(""), std::vector<std::string>{});
  EXPECT_EQ(splitList("lo"), std::vector<std::string>{"lo"});
  EXPECT_EQ(splitList(" eth0 ,, eth1 "), (std::vector<std::string>{"eth0", "eth1"}));
}

TEST(Discovery, LoopbackIsRecognisedByNameOrAddress) {
  InfoPtr info(fi_allocinfo());
  ASSERT_TRUE(info);
  info->domain_attr->name = strdup("eth0");
  sockaddr_in* in = static_cast<sockaddr_in*>(calloc(1, sizeof(sockaddr_in)));
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(0x0a000001);  // 10.0.0.1
  info->src_addr = in;
  info->src_addrlen = sizeof(*in);
  info->addr_format = FI_SOCKADDR_IN;
  EXPECT_FALSE(isLoopbackInfo(info.get()));
  in->sin_addr.s_addr = htonl(0x7f000001);  // 127.0.0.1
  EXPECT_TRUE(isLoopbackInfo(info.get()));
  in->sin_addr.s_addr = htonl(0x0a000001);
  free(info->domain_attr->name);
  info->domain_attr->name = strdup("lo");
  EXPECT_TRUE(isLoopbackInfo(info.get()));
}

}  // namespace
}  // namespace ncclnet::ofi
