// SPDX-License-Identifier: Apache-2.0
#include "collectives.hpp"

namespace nccldriver {

namespace {
struct OpName {
  Op op;
  const char* name;
};
constexpr OpName kNames[] = {
    {Op::AllReduce, "allreduce"},         {Op::AllGather, "allgather"},
    {Op::ReduceScatter, "reducescatter"}, {Op::Broadcast, "broadcast"},
    {Op::SendRecv, "sendrecv"},           {Op::AllToAll, "alltoall"},
    {Op::GinAllToAll, "gin-alltoall"},
};
}  // namespace

const char* opName(Op op) {
  for (const OpName& n : kNames)
    if (n.op == op) return n.name;
  return "?";
}

std::optional<Op> opByName(const std::string& name) {
  for (const OpName& n : kNames)
    if (name == n.name) return n.op;
  return std::nullopt;
}

const std::vector<Op>& allOps() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> v;
    for (const OpName& n : kNames) v.push_back(n.op);
    return v;
  }();
  return ops;
}

const std::vector<Op>& defaultOps() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> v;
    for (Op op : allOps())
      if (op != Op::GinAllToAll) v.push_back(op);
    return v;
  }();
  return ops;
}

std::optional<Shape> shapeOf(Op op, size_t bytes, int nranks) {
  size_t count = bytes / sizeof(float);
  size_t n = size_t(nranks);
  Shape s;
  switch (op) {
    case Op::AllReduce:
    case Op::Broadcast:
    case Op::SendRecv: s.sendCount = s.recvCount = s.chunk = count; break;
    case Op::AllGather:  // bytes: the gathered output
      s.chunk = count / n;
      s.sendCount = s.chunk;
      s.recvCount = s.chunk * n;
      break;
    case Op::ReduceScatter:  // bytes: the whole input
      s.chunk = count / n;
      s.sendCount = s.chunk * n;
      s.recvCount = s.chunk;
      break;
    case Op::AllToAll:  // bytes: one rank's whole buffer, one chunk per peer
    case Op::GinAllToAll:
      s.chunk = count / n;
      s.sendCount = s.recvCount = s.chunk * n;
      break;
  }
  if (s.chunk == 0) return std::nullopt;
  return s;
}

int broadcastRoot(int nranks) {
  return nranks - 1;
}

float inputAt(int rank, size_t i) {
  return float((i * 7 + size_t(rank) * 13) % 1021);
}

float expectedAt(Op op, const Shape& s, int rank, int nranks, size_t i) {
  switch (op) {
    case Op::AllReduce: {
      float sum = 0;
      for (int r = 0; r < nranks; r++) sum += inputAt(r, i);
      return sum;
    }
    case Op::AllGather:  // chunk k comes from rank k
      return inputAt(int(i / s.chunk), i % s.chunk);
    case Op::ReduceScatter: {  // rank r keeps the sum of chunk r
      float sum = 0;
      for (int r = 0; r < nranks; r++) sum += inputAt(r, size_t(rank) * s.chunk + i);
      return sum;
    }
    case Op::Broadcast: return inputAt(broadcastRoot(nranks), i);
    case Op::SendRecv:  // a ring: each rank receives from the one before it
      return inputAt((rank + nranks - 1) % nranks, i);
    case Op::AllToAll:
    case Op::GinAllToAll: {  // chunk k of rank r is chunk r of rank k
      size_t from = i / s.chunk;
      return inputAt(int(from), size_t(rank) * s.chunk + i % s.chunk);
    }
  }
  return 0;
}

double busFactor(Op op, int nranks) {
  double n = nranks;
  switch (op) {
    case Op::AllReduce: return 2.0 * (n - 1) / n;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll:
    case Op::GinAllToAll: return (n - 1) / n;
    case Op::Broadcast:
    case Op::SendRecv: return 1.0;
  }
  return 1.0;
}

}  // namespace nccldriver
