// SPDX-License-Identifier: Apache-2.0
// softverbs: what a consumer discovers — devices, a RoCE v2 port, GIDs.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>

#include <cstring>

#include "fixture.hpp"

namespace softverbs::testing {
namespace {

TEST(DeviceTest, ListsNamedDevices) {
  int n = -1;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  ASSERT_GE(n, 1);
  EXPECT_STREQ(ibv_get_device_name(list[0]), "softverbs0");
  EXPECT_NE(ibv_get_device_guid(list[0]), 0u);
  EXPECT_EQ(list[n], nullptr);
  ibv_free_device_list(list);
}

// NCCL's IB transport looks up each of these with dlvsym(..., "IBVERBS_1.1")
// (misc/ibvsymbols.cc) and gives up its init if one is missing.
TEST(SymbolTest, EveryEntryPointNcclRequiresHasItsVersion) {
  for (const char* name :
       {"ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name", "ibv_open_device",
        "ibv_close_device",    "ibv_get_async_event",  "ibv_ack_async_event", "ibv_query_device",
        "ibv_query_port",      "ibv_query_gid",        "ibv_query_qp",        "ibv_alloc_pd",
        "ibv_dealloc_pd",      "ibv_reg_mr",           "ibv_dereg_mr",        "ibv_create_cq",
        "ibv_destroy_cq",      "ibv_create_qp",        "ibv_modify_qp",       "ibv_destroy_qp",
        "ibv_fork_init",       "ibv_event_type_str"}) {
    EXPECT_NE(dlvsym(RTLD_DEFAULT, name, "IBVERBS_1.1"), nullptr) << name;
  }
}

TEST(SymbolTest, EventTypesHaveLibibverbsNames) {
  EXPECT_STREQ(ibv_event_type_str(IBV_EVENT_PORT_ERR), "port error");
  EXPECT_STREQ(ibv_event_type_str(IBV_EVENT_QP_FATAL), "local work queue catastrophic error");
  EXPECT_STREQ(ibv_event_type_str(static_cast<ibv_event_type>(-1)), "unknown");
}

using PortTest = VerbsTest;

TEST_F(PortTest, IsAnActiveRoceV2Port) {
  ibv_port_attr attr;
  ASSERT_EQ(ibv_query_port(ctx_, 1, &attr), 0);  // the verbs.h inline path
  EXPECT_EQ(attr.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(attr.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(attr.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(attr.gid_tbl_len, 4);
  EXPECT_NE(ibv_query_port(ctx_, 2, &attr), 0);
}

TEST_F(PortTest, ExportedQueryPortMatchesTheInline) {
  ibv_port_attr viaInline;
  ibv_port_attr viaSymbol;
  std::memset(&viaSymbol, 0, sizeof(viaSymbol));
  ASSERT_EQ(ibv_query_port(ctx_, 1, &viaInline), 0);
  ASSERT_EQ((ibv_query_port)(ctx_, 1, reinterpret_cast<_compat_ibv_port_attr*>(&viaSymbol)), 0);
  EXPECT_EQ(viaSymbol.state, viaInline.state);
  EXPECT_EQ(viaSymbol.link_layer, viaInline.link_layer);
  EXPECT_EQ(viaSymbol.active_speed, viaInline.active_speed);
}

TEST_F(PortTest, GidTableHasIpv4MappedRoceV2Entry) {
  ibv_gid_entry entry;
  ASSERT_EQ(ibv_query_gid_ex(ctx_, 1, kRoceV2Ipv4GidIndex, &entry, 0), 0);
  EXPECT_EQ(entry.gid_type, IBV_GID_TYPE_ROCE_V2);
  EXPECT_TRUE(IN6_IS_ADDR_V4MAPPED(reinterpret_cast<const in6_addr*>(entry.gid.raw)));
  EXPECT_EQ(entry.gid.raw[12], 127);
  ASSERT_EQ(ibv_query_gid_ex(ctx_, 1, 0, &entry, 0), 0);
  EXPECT_EQ(entry.gid_type, IBV_GID_TYPE_ROCE_V1);
  EXPECT_EQ(entry.gid.raw[0], 0xfe);
  ibv_gid g;
  EXPECT_NE(ibv_query_gid(ctx_, 1, 4, &g), 0);
}

TEST_F(PortTest, DeviceLimitsAreReported) {
  ibv_device_attr attr;
  ASSERT_EQ(ibv_query_device(ctx_, &attr), 0);
  EXPECT_GT(attr.max_qp, 0);
  EXPECT_GT(attr.max_qp_wr, 0);
  EXPECT_EQ(attr.phys_port_cnt, 1);
}

TEST_F(PortTest, DmaBufRegistrationIsNotSupported) {
  EXPECT_EQ(ibv_reg_dmabuf_mr(pd_, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

using ResourceTest = VerbsTest;

TEST_F(ResourceTest, CqInUseCannotBeDestroyed) {
  ibv_cq* cq = makeCq();
  ASSERT_NE(makeQp(cq), nullptr);
  EXPECT_EQ(ibv_destroy_cq(cq), EBUSY);
}

TEST_F(ResourceTest, RemoteWriteWithoutLocalWriteIsRejected) {
  char buf[64];
  EXPECT_EQ(reg(buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(ResourceTest, RelaxedOrderingIsAnOptionalFlagOfRegMrIova2) {
  static char buf[4096];
  const unsigned access = kFullAccess | IBV_ACCESS_RELAXED_ORDERING;
  ibv_mr* mr = ibv_reg_mr_iova2(pd_, buf, sizeof(buf), reinterpret_cast<uintptr_t>(buf), access);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  // verbs.h never routes optional flags to the IBVERBS_1.1 entry point,
  // which predates them.
  EXPECT_EQ((ibv_reg_mr)(pd_, buf, sizeof(buf), static_cast<int>(access)), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

}  // namespace
}  // namespace softverbs::testing
