// SPDX-License-Identifier: Apache-2.0
// The operations nccl-driver runs, as arithmetic: how many elements each
// rank sends and receives for a point of a given size, what every element
// of a rank's output must be, and the bus-bandwidth factor nccl-tests uses.
// No CUDA and no NCCL here, so the expectations are tested on any machine;
// worker.cc launches the operations themselves.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace nccldriver {

// GinAllToAll is the all-to-all moved by GPU-initiated puts through NCCL's
// device API (gin_alltoall.hpp): the same arithmetic, another path.
enum class Op { AllReduce, AllGather, ReduceScatter, Broadcast, SendRecv, AllToAll, GinAllToAll };

// "allreduce", "allgather", "reducescatter", "broadcast", "sendrecv",
// "alltoall", "gin-alltoall".
const char* opName(Op op);
std::optional<Op> opByName(const std::string& name);
const std::vector<Op>& allOps();
// What runs without --ops: NCCL's collectives (GIN needs a GIN table and
// NCCL's device API, so a job asks for it by name).
const std::vector<Op>& defaultOps();

// One point of one op: `bytes` as nccl-tests counts them (the all-gather's
// whole output, the reduce-scatter's whole input, the all-to-all's whole
// buffer per rank), in floats.
struct Shape {
  size_t sendCount = 0;  // elements in each rank's send buffer
  size_t recvCount = 0;  // elements in each rank's receive buffer
  size_t chunk = 0;      // elements per peer (gather, scatter, all-to-all), else recvCount
};
// nullopt when `bytes` is too small to give every rank one element.
std::optional<Shape> shapeOf(Op op, size_t bytes, int nranks);

// The broadcast's root for a job of `nranks` (the last rank, so that rank 0,
// which writes the id file, is not always the one that only sends).
int broadcastRoot(int nranks);

// What rank `rank` puts at element `i` of its send buffer: small integers,
// exact in float, so every sum compares with ==.
float inputAt(int rank, size_t i);

// What element `i` of rank `rank`'s receive buffer must hold.
float expectedAt(Op op, const Shape& s, int rank, int nranks, size_t i);

// nccl-tests' bus bandwidth factor (busbw = algbw * factor).
double busFactor(Op op, int nranks);

}  // namespace nccldriver
