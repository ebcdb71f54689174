// SPDX-License-Identifier: Apache-2.0
// expectedAt() against a plain simulation of each collective over the
// ranks' send buffers: the two are written differently, so an indexing
// mistake in either shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "collectives.hpp"

namespace nccldriver {
namespace {

using Buffers = std::vector<std::vector<float>>;

Buffers inputs(const Shape& s, int n) {
  Buffers in(size_t(n), std::vector<float>(s.sendCount));
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < s.sendCount; i++) in[size_t(r)][i] = inputAt(r, i);
  return in;
}

Buffers simulate(Op op, const Shape& s, int n) {
  Buffers in = inputs(s, n);
  Buffers out(size_t(n), std::vector<float>(s.recvCount, 0));
  for (int r = 0; r < n; r++) {
    std::vector<float>& o = out[size_t(r)];
    switch (op) {
      case Op::AllReduce:
        for (int k = 0; k < n; k++)
          for (size_t i = 0; i < s.recvCount; i++) o[i] += in[size_t(k)][i];
        break;
      case Op::AllGather:
        for (int k = 0; k < n; k++)
          for (size_t i = 0; i < s.chunk; i++) o[size_t(k) * s.chunk + i] = in[size_t(k)][i];
        break;
      case Op::ReduceScatter:
        for (int k = 0; k < n; k++)
          for (size_t i = 0; i < s.chunk; i++) o[i] += in[size_t(k)][size_t(r) * s.chunk + i];
        break;
      case Op::Broadcast: o = in[size_t(broadcastRoot(n))]; break;
      case Op::SendRecv: o = in[size_t((r + n - 1) % n)]; break;
      case Op::AllToAll:
      case Op::GinAllToAll:
        for (int k = 0; k < n; k++)
          for (size_t i = 0; i < s.chunk; i++)
            o[size_t(k) * s.chunk + i] = in[size_t(k)][size_t(r) * s.chunk + i];
        break;
    }
  }
  return out;
}

TEST(Collectives, ExpectedMatchesASimulationForEveryOpAndRankCount) {
  for (Op op : allOps())
    for (int n : {2, 3, 4, 8})
      for (size_t bytes : {size_t(96), size_t(4096), size_t(1000)}) {
        std::optional<Shape> s = shapeOf(op, bytes, n);
        ASSERT_TRUE(s) << opName(op) << " " << bytes << " bytes, " << n << " ranks";
        Buffers want = simulate(op, *s, n);
        for (int r = 0; r < n; r++)
          for (size_t i = 0; i < s->recvCount; i++)
            ASSERT_EQ(expectedAt(op, *s, r, n, i), want[size_t(r)][i])
                << opName(op) << " n=" << n << " rank " << r << " element " << i;
      }
}

TEST(Collectives, ShapesCountBytesAsNcclTestsDoes) {
  // All-gather: bytes is the gathered output; reduce-scatter: the input.
  Shape g = *shapeOf(Op::AllGather, 1024, 4);
  EXPECT_EQ(g.recvCount, 256u);
  EXPECT_EQ(g.sendCount, 64u);
  Shape rs = *shapeOf(Op::ReduceScatter, 1024, 4);
  EXPECT_EQ(rs.sendCount, 256u);
  EXPECT_EQ(rs.recvCount, 64u);
  Shape a2a = *shapeOf(Op::AllToAll, 1000, 3);  // 250 floats: 83 per peer
  EXPECT_EQ(a2a.chunk, 83u);
  EXPECT_EQ(a2a.sendCount, 249u);
  EXPECT_FALSE(shapeOf(Op::AllGather, 8, 4));  // 2 floats for 4 ranks
  EXPECT_TRUE(shapeOf(Op::AllReduce, 4, 4));
}

TEST(Collectives, SumsStayExactInFloat) {
  // 64 ranks of values below 1021 sum below 2^24: every float sum is exact.
  EXPECT_LT(64.0 * 1021, double(1 << 24));
  for (size_t i = 0; i < 5000; i++) EXPECT_LT(inputAt(63, i), 1021.0f);
}

TEST(Collectives, NamesRoundTripAndBusFactorsAreNcclTests) {
  for (Op op : allOps()) EXPECT_EQ(opByName(opName(op)), op);
  EXPECT_FALSE(opByName("allreduce2"));
  EXPECT_DOUBLE_EQ(busFactor(Op::AllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busFactor(Op::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busFactor(Op::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor(Op::SendRecv, 8), 1.0);
}

TEST(Collectives, GinRunsOnlyWhenAskedFor) {
  const std::vector<Op>& ops = defaultOps();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), Op::GinAllToAll), 0);
  EXPECT_EQ(ops.size() + 1, allOps().size());
  EXPECT_EQ(opByName("gin-alltoall"), Op::GinAllToAll);
}

}  // namespace
}  // namespace nccldriver
