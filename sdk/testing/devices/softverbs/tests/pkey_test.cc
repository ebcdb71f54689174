// SPDX-License-Identifier: Apache-2.0
// softverbs: the P_Key table (SOFTVERBS_PKEYS), QPs choosing an entry by
// index, and the partition check a responder makes on every request.
#include <endian.h>

#include <cstdlib>

#include "fixture.hpp"

namespace softverbs::testing {
namespace {

// Index 0: the default partition, full member; 1: partition 1, full
// member; 2 and 3: partition 2, limited and full member.
class PkeyTest : public VerbsTest {
 protected:
  void SetUp() override {
    setenv("SOFTVERBS_PKEYS", "0xffff,0x8001,0x0002,0x8002", 1);
    VerbsTest::SetUp();
  }
  void TearDown() override {
    VerbsTest::TearDown();
    unsetenv("SOFTVERBS_PKEYS");
  }
  int toInitWith(ibv_qp* qp, uint16_t index) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = index;
    attr.port_num = 1;
    attr.qp_access_flags = kFullAccess;
    return ibv_modify_qp(qp, &attr,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  }
  // Two QPs on partitions `a` and `b` (table indexes), connected; a WRITE
  // from the first; its completion status.
  ibv_wc_status writeBetween(uint16_t a, uint16_t b) {
    ibv_cq* cq = makeCq();
    ibv_qp* qa = makeQp(cq);
    ibv_qp* qb = makeQp(cq);
    static char src[64];
    static char dst[64];
    ibv_mr* ms = reg(src, sizeof(src));
    ibv_mr* md = reg(dst, sizeof(dst));
    ibv_gid g = gid();
    if (toInitWith(qa, a) != 0 || toInitWith(qb, b) != 0 || toRtr(qa, qb->qp_num, g) != 0 ||
        toRtr(qb, qa->qp_num, g) != 0 || toRts(qa) != 0 || toRts(qb) != 0) {
      return IBV_WC_GENERAL_ERR;
    }
    if (postWrite(qa, IBV_WR_RDMA_WRITE, src, 8, ms->lkey, reinterpret_cast<uintptr_t>(dst),
                  md->rkey, 1) != 0) {
      return IBV_WC_GENERAL_ERR;
    }
    ibv_wc wc;
    return pollOne(cq, &wc) ? wc.status : IBV_WC_RESP_TIMEOUT_ERR;
  }
};

TEST_F(PkeyTest, TableComesFromTheEnvironment) {
  ibv_port_attr port;
  ASSERT_EQ(ibv_query_port(ctx_, 1, &port), 0);
  EXPECT_EQ(port.pkey_tbl_len, 4);
  __be16 pkey = 0;
  ASSERT_EQ(ibv_query_pkey(ctx_, 1, 1, &pkey), 0);
  EXPECT_EQ(be16toh(pkey), 0x8001);
  EXPECT_NE(ibv_query_pkey(ctx_, 1, 4, &pkey), 0);
}

TEST_F(PkeyTest, QpTakesAnIndexInsideTheTable) {
  ibv_qp* qp = makeQp(makeCq());
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(toInitWith(qp, 4), EINVAL);
  ASSERT_EQ(toInitWith(qp, 1), 0);
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(qp, &attr, IBV_QP_PKEY_INDEX, &init), 0);
  EXPECT_EQ(attr.pkey_index, 1);
}

TEST_F(PkeyTest, SamePartitionConnects) {
  EXPECT_EQ(writeBetween(1, 1), IBV_WC_SUCCESS);
  EXPECT_EQ(writeBetween(0, 0), IBV_WC_SUCCESS);
  EXPECT_EQ(writeBetween(2, 3), IBV_WC_SUCCESS);  // a limited member talks to a full one
}

TEST_F(PkeyTest, LimitedMembersNeverTalkToEachOther) {
  EXPECT_EQ(writeBetween(2, 2), IBV_WC_RETRY_EXC_ERR);
}

TEST_F(PkeyTest, OtherPartitionDropsEveryRequest) {
  // Real hardware drops the packets and the requester retries until
  // retry_cnt runs out.
  EXPECT_EQ(writeBetween(0, 1), IBV_WC_RETRY_EXC_ERR);
}

TEST(PkeyDefaultTest, OneFullMemberEntry) {
  unsetenv("SOFTVERBS_PKEYS");
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  ASSERT_NE(ctx, nullptr);
  ibv_port_attr port;
  ASSERT_EQ(ibv_query_port(ctx, 1, &port), 0);
  EXPECT_EQ(port.pkey_tbl_len, 1);
  __be16 pkey = 0;
  ASSERT_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
  EXPECT_EQ(be16toh(pkey), 0xffff);
  EXPECT_EQ(ibv_close_device(ctx), 0);
}

}  // namespace
}  // namespace softverbs::testing
