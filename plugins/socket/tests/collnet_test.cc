// SPDX-License-Identifier: Apache-2.0
// sdk-socket CollNet: the software CollNet's members called directly, with
// 2, 3 and 4 ranks as threads of this process over loopback. Every rank is
// its own plugin instance, as in separate processes; the test hands the
// listen handles around as NCCL's bootstrap would.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "collnet/coll_comm.hpp"
#include "collnet/collnet_plugin.hpp"
#include "collnet/reduce.hpp"
#include "ncclnet/abi/net.h"

namespace ncclnet::socket::collnet {
namespace {

using Clock = std::chrono::steady_clock;

constexpr ncclDataType_t kTypes[] = {ncclInt8,    ncclUint8,   ncclInt32,   ncclUint32,
                                     ncclInt64,   ncclUint64,  ncclFloat16, ncclFloat32,
                                     ncclFloat64, ncclBfloat16};
constexpr ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin};

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

std::unique_ptr<SocketCollNet> makeNet() {
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  InitArgs args;
  args.logger = Logger(nullptr, "NET/sdk-socket");
  std::unique_ptr<SocketCollNet> net;
  EXPECT_EQ(SocketCollNet::create(args, &net), ncclSuccess);
  return net;
}

// Runs body(rank) in one thread per rank and waits for all.
void onRanks(int nranks, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; r++) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

// A connected group: one plugin instance and one collComm per rank.
struct Group {
  std::vector<std::unique_ptr<SocketCollNet>> nets;
  std::vector<void*> comms;
  std::vector<ncclResult_t> connectResults;
  int nranks = 0;

  ~Group() {
    for (int r = 0; r < nranks; r++) {
      if (comms[r] != nullptr) {
        EXPECT_EQ(nets[r]->closeColl(comms[r]), ncclSuccess);
      }
    }
  }

  // listen on every rank, then connect all at once. `corrupt`: the rank
  // whose copy of rank 0's handle is damaged (-1: none).
  bool connect(int n, int corrupt = -1) {
    nranks = n;
    nets.resize(n);
    comms.assign(n, nullptr);
    connectResults.assign(n, ncclInternalError);
    std::vector<void*> listens(n, nullptr);
    std::vector<std::vector<char>> handles(n, std::vector<char>(NCCL_NET_HANDLE_MAXSIZE));
    for (int r = 0; r < n; r++) {
      nets[r] = makeNet();
      if (!nets[r]) return false;
      CommContext ctx;
      if (nets[r]->listen(ctx, 0, handles[r].data(), &listens[r]) != ncclSuccess) return false;
    }
    onRanks(n, [&](int r) {
      std::vector<std::vector<char>> mine = handles;
      if (r == corrupt) mine[0][0] ^= 0x5a;  // the magic
      std::vector<void*> ptrs;
      for (auto& h : mine) ptrs.push_back(h.data());
      connectResults[r] = nets[r]->connect(ptrs.data(), n, r, listens[r], &comms[r]);
      EXPECT_EQ(nets[r]->closeListen(listens[r]), ncclSuccess);
    });
    for (ncclResult_t res : connectResults) {
      if (res != ncclSuccess) return false;
    }
    return true;
  }
};

// Posts with `post` until it hands out a request (a NULL one means "try
// again", as NCCL treats it).
void* postRetrying(const std::function<ncclResult_t(void**)>& post) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    void* request = nullptr;
    ncclResult_t res = post(&request);
    if (res != ncclSuccess) {
      ADD_FAILURE() << "post failed: " << res;
      return nullptr;
    }
    if (request != nullptr) return request;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ADD_FAILURE() << "no request within 20 s";
  return nullptr;
}

// Tests `request` until it completes or fails; the deadline is the test's.
ncclResult_t waitFor(SocketCollNet& net, void* request, int* size, double seconds = 20) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int done = 0;
    ncclResult_t res = net.test(request, &done, size);
    if (res != ncclSuccess) return res;
    if (done) return ncclSuccess;
    if (Clock::now() > deadline) return ncclInternalError;  // no ncclnet code means "hung"
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Deterministic contributions: integers of every bit pattern (wrap-around
// included), floating-point values small enough that products of four stay
// finite, with fractions that make the summation order visible.
std::vector<uint8_t> contribution(ncclDataType_t type, size_t count, int rank, uint64_t salt) {
  const size_t elt = elementSize(type);
  std::vector<uint8_t> out(count * elt);
  std::mt19937_64 gen(salt * 7919 + static_cast<uint64_t>(rank) * 104729 + type);
  std::uniform_real_distribution<double> real(-3.0, 3.0);
  for (size_t i = 0; i < count; i++) {
    uint8_t* at = out.data() + i * elt;
    switch (type) {
      case ncclFloat32: {
        float f = static_cast<float>(real(gen));
        std::memcpy(at, &f, 4);
        break;
      }
      case ncclFloat64: {
        double d = real(gen);
        std::memcpy(at, &d, 8);
        break;
      }
      case ncclFloat16: {
        uint16_t h = floatToHalf(static_cast<float>(real(gen)));
        std::memcpy(at, &h, 2);
        break;
      }
      case ncclBfloat16: {
        uint16_t b = floatToBfloat16(static_cast<float>(real(gen)));
        std::memcpy(at, &b, 2);
        break;
      }
      default: {
        uint64_t bits = gen();
        std::memcpy(at, &bits, elt);
      }
    }
  }
  return out;
}

// The expected result, folded here element by element in rank order.
template <class T, class F>
void foldRef(const std::vector<std::vector<uint8_t>>& in, std::vector<uint8_t>* out, F f) {
  const size_t count = in[0].size() / sizeof(T);
  out->resize(in[0].size());
  for (size_t i = 0; i < count; i++) {
    T acc;
    std::memcpy(&acc, in[0].data() + i * sizeof(T), sizeof(T));
    for (size_t r = 1; r < in.size(); r++) {
      T v;
      std::memcpy(&v, in[r].data() + i * sizeof(T), sizeof(T));
      acc = f(acc, v);
    }
    std::memcpy(out->data() + i * sizeof(T), &acc, sizeof(T));
  }
}

template <class T>
T refOp(ncclRedOp_t op, T a, T b) {
  switch (op) {
    case ncclSum: return a + b;
    case ncclProd: return a * b;
    case ncclMax: return std::isnan(static_cast<double>(a)) ? a : (b > a ? b : a);
    default: return std::isnan(static_cast<double>(a)) ? a : (b < a ? b : a);
  }
}

template <class U>
void foldUnsigned(ncclRedOp_t op, bool isSigned, const std::vector<std::vector<uint8_t>>& in,
                  std::vector<uint8_t>* out) {
  using S = std::make_signed_t<U>;
  if (op == ncclSum || op == ncclProd || !isSigned) {
    foldRef<U>(in, out, [op](U a, U b) -> U {
      if (op == ncclSum) return static_cast<U>(a + b);
      if (op == ncclProd) return static_cast<U>(static_cast<uint64_t>(a) * b);
      return op == ncclMax ? std::max(a, b) : std::min(a, b);
    });
  } else {
    foldRef<S>(in, out, [op](S a, S b) { return op == ncclMax ? std::max(a, b) : std::min(a, b); });
  }
}

std::vector<uint8_t> expected(ncclDataType_t type, ncclRedOp_t op,
                              const std::vector<std::vector<uint8_t>>& in) {
  std::vector<uint8_t> out;
  switch (type) {
    case ncclInt8: foldUnsigned<uint8_t>(op, true, in, &out); break;
    case ncclUint8: foldUnsigned<uint8_t>(op, false, in, &out); break;
    case ncclInt32: foldUnsigned<uint32_t>(op, true, in, &out); break;
    case ncclUint32: foldUnsigned<uint32_t>(op, false, in, &out); break;
    case ncclInt64: foldUnsigned<uint64_t>(op, true, in, &out); break;
    case ncclUint64: foldUnsigned<uint64_t>(op, false, in, &out); break;
    case ncclFloat32:
      foldRef<float>(in, &out, [op](float a, float b) { return refOp(op, a, b); });
      break;
    case ncclFloat64:
      foldRef<double>(in, &out, [op](double a, double b) { return refOp(op, a, b); });
      break;
    case ncclFloat16:
      foldRef<uint16_t>(in, &out, [op](uint16_t a, uint16_t b) {
        return floatToHalf(refOp(op, halfToFloat(a), halfToFloat(b)));
      });
      break;
    case ncclBfloat16:
      foldRef<uint16_t>(in, &out, [op](uint16_t a, uint16_t b) {
        return floatToBfloat16(refOp(op, bfloat16ToFloat(a), bfloat16ToFloat(b)));
      });
      break;
    default: ADD_FAILURE() << "no reference for type " << type;
  }
  return out;
}

// ---- the pieces -----------------------------------------------------------

TEST(CollNetReduce, HalfAndBfloat16Conversions) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // the tie above the largest half rounds to even: inf
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);     // tie, to even (down)
  EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3c02);     // tie, to even (up)
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // its half: tie to even zero
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  for (uint32_t h = 0; h < 0x10000; h++) {
    uint16_t v = static_cast<uint16_t>(h);
    if ((v & 0x7c00) == 0x7c00 && (v & 0x3ff) != 0) continue;  // NaNs
    ASSERT_EQ(floatToHalf(halfToFloat(v)), v) << std::hex << h;
  }
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(1.0f + 1.0f / 256), 0x3f80);  // tie, to even (down)
  EXPECT_EQ(floatToBfloat16(1.0f + 3.0f / 256), 0x3f82);  // tie, to even (up)
  EXPECT_EQ(bfloat16ToFloat(0xc040), -3.0f);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(NAN))));
}

TEST(CollNetReduce, FoldsInRankOrder) {
  // 1e8 + 1 - 1e8 in float: 0 left to right; the other order gives 1.
  float a[] = {1e8f}, b[] = {1.0f}, c[] = {-1e8f};
  const void* srcs[] = {a, b, c};
  float out = -1;
  reduce(ncclFloat32, ncclSum, srcs, 3, &out, 1);
  EXPECT_EQ(out, 0.0f);
  const void* swapped[] = {a, c, b};
  reduce(ncclFloat32, ncclSum, swapped, 3, &out, 1);
  EXPECT_EQ(out, 1.0f);
  // In place: the destination is one of the operands.
  int32_t x[] = {5, -7}, y[] = {3, 4};
  const void* ints[] = {x, y};
  reduce(ncclInt32, ncclMax, ints, 2, x, 2);
  EXPECT_EQ(x[0], 5);
  EXPECT_EQ(x[1], 4);
}

TEST(SocketCollNet, ReduceSupportTableIsTotalAndSame) {
  auto a = makeNet();
  auto b = makeNet();
  ASSERT_TRUE(a && b);
  for (int type = -1; type <= ncclNumTypes + 1; type++) {
    for (int op = -1; op <= ncclNumOps + 1; op++) {
      int sa = -1, sb = -1;
      ASSERT_EQ(
          a->reduceSupport(static_cast<ncclDataType_t>(type), static_cast<ncclRedOp_t>(op), &sa),
          ncclSuccess);
      ASSERT_EQ(
          b->reduceSupport(static_cast<ncclDataType_t>(type), static_cast<ncclRedOp_t>(op), &sb),
          ncclSuccess);
      EXPECT_EQ(sa, sb);
      bool want = type >= ncclInt8 && type <= ncclBfloat16 && op >= ncclSum && op <= ncclMin;
      EXPECT_EQ(sa, want ? 1 : 0) << "type " << type << " op " << op;
    }
  }
}

TEST(SocketCollNet, PropertiesAndRegistration) {
  auto net = makeNet();
  ASSERT_TRUE(net);
  int ndev = 0;
  ASSERT_EQ(net->devices(&ndev), ncclSuccess);
  ASSERT_EQ(ndev, 1);  // NCCL_SOCKET_IFNAME=lo
  ncclNetProperties_v12_t props{};
  props.maxCollBytes = 0;
  ASSERT_EQ(net->getProperties(0, &props), ncclSuccess);
  EXPECT_STREQ(props.name, "lo");
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(props.regIsGlobal, 0);
  EXPECT_GT(props.maxCollBytes, 0u);
  EXPECT_EQ(props.maxCollBytes, kMaxCollBytes);
  EXPECT_NE(net->getProperties(1, &props), ncclSuccess);

  Group g;
  ASSERT_TRUE(g.connect(2));
  std::vector<char> buffer(4096);
  void* mh = nullptr;
  EXPECT_NE(g.nets[0]->regMr(g.comms[0], buffer.data(), buffer.size(), NCCL_PTR_CUDA, &mh),
            ncclSuccess);
  ASSERT_EQ(g.nets[0]->regMr(g.comms[0], buffer.data(), buffer.size(), NCCL_PTR_HOST, &mh),
            ncclSuccess);
  EXPECT_NE(g.nets[0]->deregMr(g.comms[1], mh), ncclSuccess);  // another collComm's
  EXPECT_EQ(g.nets[0]->deregMr(g.comms[0], mh), ncclSuccess);
  EXPECT_NE(g.nets[0]->deregMr(g.comms[0], mh), ncclSuccess);  // twice
  void* flush = &mh;
  EXPECT_EQ(g.nets[0]->iflush(g.comms[0], buffer.data(), 16, nullptr, &flush), ncclSuccess);
  EXPECT_EQ(flush, nullptr);
}

// ---- data -----------------------------------------------------------------

class SocketCollNetRanks : public ::testing::TestWithParam<int> {};

TEST_P(SocketCollNetRanks, AllReduceEveryTypeAndOp) {
  const int n = GetParam();
  Group g;
  ASSERT_TRUE(g.connect(n));
  uint64_t salt = 0;
  for (ncclDataType_t type : kTypes) {
    const size_t elt = elementSize(type);
    for (ncclRedOp_t op : kOps) {
      // 1 MiB (many wire chunks) once per type: every op's folding is
      // already covered at 1000 elements, and the sanitizer jobs run this.
      std::vector<size_t> counts = {1, 7, 1000};
      if (op == ncclSum) counts.push_back((size_t{1} << 20) / elt);
      for (size_t count : counts) {
        for (bool inPlace : {false, true}) {
          salt++;
          std::vector<std::vector<uint8_t>> in(n), out(n);
          for (int r = 0; r < n; r++) in[r] = contribution(type, count, r, salt);
          const std::vector<uint8_t> want = expected(type, op, in);
          onRanks(n, [&](int r) {
            std::vector<uint8_t> send = in[r];
            std::vector<uint8_t> recv(count * elt, 0xee);
            void* recvData = inPlace ? send.data() : recv.data();
            void* req = postRetrying([&](void** request) {
              return g.nets[r]->iallreduce(g.comms[r], send.data(), recvData, count, type, op,
                                           nullptr, nullptr, request);
            });
            int size = -1;
            EXPECT_EQ(waitFor(*g.nets[r], req, &size), ncclSuccess);
            EXPECT_EQ(size, static_cast<int>(count * elt));
            out[r] = inPlace ? send : recv;
          });
          for (int r = 0; r < n; r++) {
            ASSERT_TRUE(out[r] == want)
                << "rank " << r << " of " << n << ", type " << type << ", op " << op << ", count "
                << count << (inPlace ? ", in place" : "");
          }
        }
      }
    }
  }
}

TEST_P(SocketCollNetRanks, ManyInFlightAndRetry) {
  const int n = GetParam();
  Group g;
  ASSERT_TRUE(g.connect(n));
  constexpr int kOpsPosted = kMaxInFlight;
  std::vector<size_t> counts(kOpsPosted);
  for (int i = 0; i < kOpsPosted; i++) counts[i] = 1 + static_cast<size_t>(i) * 997 % 20000;
  std::vector<int> failures(n, 0);
  onRanks(n, [&](int r) {
    std::vector<std::vector<int32_t>> send(kOpsPosted + 1), recv(kOpsPosted + 1);
    std::vector<void*> reqs(kOpsPosted + 1, nullptr);
    auto post = [&](int i, void** request) {
      size_t count = i < kOpsPosted ? counts[i] : 5;
      send[i].assign(count, 0);
      for (size_t k = 0; k < count; k++) send[i][k] = static_cast<int32_t>(k * (r + 1) + i);
      recv[i].assign(count, -1);
      return g.nets[r]->iallreduce(g.comms[r], send[i].data(), recv[i].data(), count, ncclInt32,
                                   ncclSum, nullptr, nullptr, request);
    };
    for (int i = 0; i < kOpsPosted; i++) {
      EXPECT_EQ(post(i, &reqs[i]), ncclSuccess);
      EXPECT_NE(reqs[i], nullptr) << "operation " << i;
    }
    // Full: the next one is refused with a NULL request, no error.
    void* extra = &extra;
    EXPECT_EQ(post(kOpsPosted, &extra), ncclSuccess);
    EXPECT_EQ(extra, nullptr);
    // Completed in any order: the last first.
    for (int i = kOpsPosted - 1; i >= 0; i--) {
      int size = 0;
      ASSERT_EQ(waitFor(*g.nets[r], reqs[i], &size), ncclSuccess);
      EXPECT_EQ(size, static_cast<int>(counts[i] * sizeof(int32_t)));
      const int64_t ranksSum = static_cast<int64_t>(n) * (n + 1) / 2;
      for (size_t k = 0; k < counts[i]; k++) {
        int32_t want = static_cast<int32_t>(static_cast<int64_t>(k) * ranksSum + n * i);
        if (recv[i][k] != want) failures[r]++;
      }
    }
    // The retried one goes now.
    reqs[kOpsPosted] = postRetrying([&](void** request) { return post(kOpsPosted, request); });
    ASSERT_EQ(waitFor(*g.nets[r], reqs[kOpsPosted], nullptr), ncclSuccess);
    EXPECT_EQ(recv[kOpsPosted][4], static_cast<int32_t>(4 * n * (n + 1) / 2 + n * kOpsPosted));
  });
  for (int r = 0; r < n; r++) EXPECT_EQ(failures[r], 0) << "rank " << r;
}

// Windows of the logical nranks * bytesPerRank buffer every rank uses at
// once: whole, before / inside / after some rank's block, across blocks,
// empty.
std::vector<std::pair<size_t, size_t>> windows(int n, size_t bpr) {
  const size_t total = n * bpr;
  std::vector<std::pair<size_t, size_t>> w = {
      {0, total},                  // whole
      {0, bpr / 2},                // inside rank 0's block
      {bpr / 4, bpr / 2},          // starts inside rank 0's block, ends inside too
      {bpr - 8, 16},               // across the first boundary
      {bpr, bpr},                  // exactly rank 1's block
      {total - bpr / 2, bpr / 2},  // the tail of the last block
      {bpr / 2, total - bpr},      // across every block
      {total / 2 - total / 2 % 4, total / 4 / 4 * 4},  // somewhere in the middle
      {bpr, 0},                                        // empty
  };
  return w;
}

TEST_P(SocketCollNetRanks, AllGatherWindows) {
  const int n = GetParam();
  Group g;
  ASSERT_TRUE(g.connect(n));
  const size_t bpr = 1000;
  std::vector<std::vector<uint8_t>> blocks(n);
  std::vector<uint8_t> logical;
  for (int r = 0; r < n; r++) {
    blocks[r] = contribution(ncclUint8, bpr, r, 99);
    logical.insert(logical.end(), blocks[r].begin(), blocks[r].end());
  }
  for (auto [offset, bytes] : windows(n, bpr)) {
    for (int nparts : {1, 3}) {
      onRanks(n, [&, offset = offset, bytes = bytes](int r) {
        // NCCL points sendData at this rank's first byte inside the window
        // (coll_net.cc collNetRegIallgather: sendbuff + winOffset % sizePerRank
        // when the window starts in this rank's block).
        size_t begin = r * bpr;
        size_t skip = offset > begin ? std::min(offset - begin, bpr) : 0;
        std::vector<uint8_t> send = blocks[r];
        std::vector<uint8_t> recv(bytes + 64, 0xee);
        std::vector<ncclNetSGE_v12_t> parts;
        size_t cut1 = bytes / 3, cut2 = bytes / 3 * 2;
        if (nparts == 1) {
          parts.push_back({nullptr, recv.data(), bytes});
        } else {
          parts.push_back({nullptr, recv.data(), cut1});
          parts.push_back({nullptr, recv.data() + cut1, cut2 - cut1});
          parts.push_back({nullptr, recv.data() + cut2, bytes - cut2 + 64});
        }
        void* req = postRetrying([&](void** request) {
          return g.nets[r]->iallgather(g.comms[r], send.data() + skip, nparts, parts.data(), bpr,
                                       offset, bytes, nullptr, request);
        });
        int size = -1;
        ASSERT_EQ(waitFor(*g.nets[r], req, &size), ncclSuccess);
        EXPECT_EQ(size, static_cast<int>(bytes));
        EXPECT_TRUE(std::equal(recv.begin(), recv.begin() + bytes, logical.begin() + offset))
            << "rank " << r << " window [" << offset << ", +" << bytes << ") in " << nparts
            << " parts";
        for (size_t i = bytes; i < recv.size(); i++) ASSERT_EQ(recv[i], 0xee) << "past the window";
      });
    }
  }
}

TEST_P(SocketCollNetRanks, ReduceScatterWindows) {
  const int n = GetParam();
  Group g;
  ASSERT_TRUE(g.connect(n));
  const size_t bpr = 1000 * sizeof(float);
  for (ncclRedOp_t op : {ncclSum, ncclMax}) {
    std::vector<std::vector<uint8_t>> full(n);  // each rank's nranks * bpr input
    for (int r = 0; r < n; r++) full[r] = contribution(ncclFloat32, n * bpr / 4, r, 7 + op);
    const std::vector<uint8_t> reduced = expected(ncclFloat32, op, full);
    for (auto [offset, bytes] : windows(n, bpr)) {
      for (int nparts : {1, 3}) {
        onRanks(n, [&, offset = offset, bytes = bytes](int r) {
          std::vector<uint8_t> send(full[r].begin() + offset, full[r].begin() + offset + bytes);
          std::vector<ncclNetSGE_v12_t> parts;
          size_t cut1 = bytes / 3, cut2 = bytes / 3 * 2;  // not on element boundaries
          if (nparts == 1) {
            parts.push_back({nullptr, send.data(), bytes});
          } else {
            parts.push_back({nullptr, send.data(), cut1});
            parts.push_back({nullptr, send.data() + cut1, cut2 - cut1});
            parts.push_back({nullptr, send.data() + cut2, bytes - cut2});
          }
          // This rank's share: its block inside the window, written from
          // recvData on (coll_net.cc collNetRegIreducescatter points
          // recvbuff at recvbuff + winOffset % sizePerRank when the window
          // starts in this rank's block).
          size_t lo = std::max(offset, r * bpr);
          size_t hi = std::min(offset + bytes, (r + 1) * bpr);
          size_t share = hi > lo ? hi - lo : 0;
          std::vector<uint8_t> recv(share + 64, 0xee);
          void* req = postRetrying([&](void** request) {
            return g.nets[r]->ireducescatter(g.comms[r], nparts, parts.data(), recv.data(), bpr,
                                             offset, bytes, ncclFloat32, op, nullptr, request);
          });
          int size = -1;
          ASSERT_EQ(waitFor(*g.nets[r], req, &size), ncclSuccess);
          EXPECT_EQ(size, static_cast<int>(share));
          EXPECT_TRUE(std::equal(recv.begin(), recv.begin() + share, reduced.begin() + lo))
              << "rank " << r << " window [" << offset << ", +" << bytes << ")";
          for (size_t i = share; i < recv.size(); i++) ASSERT_EQ(recv[i], 0xee) << "past its share";
        });
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, SocketCollNetRanks, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "ranks";
                         });

// ---- failures -------------------------------------------------------------

TEST(SocketCollNet, PeerClosingMidOperationFailsTheOthers) {
  Group g;
  ASSERT_TRUE(g.connect(3));
  onRanks(3, [&](int r) {
    if (r == 2) {
      // Leaves without taking part.
      EXPECT_EQ(g.nets[r]->closeColl(g.comms[r]), ncclSuccess);
      g.comms[r] = nullptr;
      return;
    }
    std::vector<float> data(1 << 16, 1.0f);
    void* req = postRetrying([&](void** request) {
      return g.nets[r]->iallreduce(g.comms[r], data.data(), data.data(), data.size(), ncclFloat32,
                                   ncclSum, nullptr, nullptr, request);
    });
    const auto start = Clock::now();
    ncclResult_t res = waitFor(*g.nets[r], req, nullptr, 10);
    EXPECT_EQ(res, ncclRemoteError) << "rank " << r;
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
    // The comm stays failed.
    void* next = nullptr;
    EXPECT_EQ(g.nets[r]->iallreduce(g.comms[r], data.data(), data.data(), 1, ncclFloat32, ncclSum,
                                    nullptr, nullptr, &next),
              ncclRemoteError);
  });
}

TEST(SocketCollNet, BadHandleFailsEveryRankWithinTheTimeout) {
  ScopedEnv timeout("NCCLNET_SOCKET_CONNECT_TIMEOUT_MS", "2000");
  for (int corrupt : {0, 1, 2}) {
    Group g;
    const auto start = Clock::now();
    EXPECT_FALSE(g.connect(3, corrupt));
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(8));
    for (int r = 0; r < 3; r++) {
      EXPECT_NE(g.connectResults[r], ncclSuccess)
          << "rank " << r << ", rank " << corrupt << " had the bad handle";
      EXPECT_EQ(g.comms[r], nullptr);
    }
  }
}

}  // namespace
}  // namespace ncclnet::socket::collnet
