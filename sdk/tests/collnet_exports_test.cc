// SPDX-License-Identifier: Apache-2.0
// NCCLNET_EXPORT_COLLNET_PLUGIN: one class, tables v6 to v12, defined in
// this executable and driven the way NCCL's adapters drive each
// (plugin/net/net_v6.cc ... net_v11.cc, net_v12.cc); the class must see
// the v12 semantics every time: size_t sizes and counts, v12 parts, the
// process's context where a version has none.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ncclnet/collnet.hpp"

namespace {

// What the class last saw, and how many objects live.
struct Seen {
  int objects = 0;  // kept across tests: v6..v10 pin the object
  int calls = 0;    // members entered
  const ncclnet::CommContext* ctx = nullptr;
  int dev = -1;
  int nranks = 0, rank = -1;
  void* const* handles = nullptr;
  size_t size = 0;
  size_t count = 0;
  int nParts = 0;
  ncclNetSGE_v12_t* partsPointer = nullptr;
  std::vector<ncclNetSGE_v12_t> parts;
  size_t bytesPerRank = 0, windowOffset = 0, windowBytes = 0;
  ncclNetVDeviceProps_v12_t vprops{};
  ncclNetDeviceType netDeviceType = NCCL_NET_DEVICE_HOST;
  bool decline = false;      // connect succeeds without a collComm
  bool failConnect = false;  // connect writes a collComm, then fails
  int closedListens = 0;
  size_t maxCollBytes = size_t{64} << 20;
  bool nullRequest = false;  // the next collective says "not now"
  int throwNext = 0;         // 1: std::exception, 2: anything else
};
Seen seen;

int collToken, listenToken, requestToken, regionToken;

void maybeThrow() {
  int kind = seen.throwNext;
  seen.throwNext = 0;
  if (kind == 1) throw std::runtime_error("boom");
  if (kind == 2) throw 42;
}

class RecordingCollNet {
 public:
  static constexpr const char* kName = "recording-collnet";
  static ncclResult_t create(const ncclnet::InitArgs&, std::unique_ptr<RecordingCollNet>* out) {
    *out = std::make_unique<RecordingCollNet>();
    return ncclSuccess;
  }
  RecordingCollNet() { seen.objects++; }
  ~RecordingCollNet() { seen.objects--; }

  ncclResult_t devices(int* ndev) {
    seen.calls++;
    maybeThrow();
    *ndev = 2;
    return ncclSuccess;
  }
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    seen.calls++;
    EXPECT_EQ(props->maxCollBytes, NCCL_MAX_COLLNET_SIZE) << "NCCL's defaults on entry";
    props->name = const_cast<char*>("coll0");
    props->ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
    props->maxCollBytes = seen.maxCollBytes;
    props->netDeviceType = seen.netDeviceType;
    seen.dev = dev;
    return ncclSuccess;
  }
  ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle, void** listenComm) {
    seen.calls++;
    seen.ctx = &ctx;
    seen.dev = dev;
    std::memset(handle, 7, 16);
    *listenComm = &listenToken;
    return ncclSuccess;
  }
  ncclResult_t connect(void* const* handles, int nranks, int rank, void* listenComm,
                       void** collComm) {
    seen.calls++;
    EXPECT_EQ(listenComm, &listenToken);
    seen.handles = handles;
    seen.nranks = nranks;
    seen.rank = rank;
    if (!seen.decline) *collComm = &collToken;
    return seen.failConnect ? ncclRemoteError : ncclSuccess;
  }
  ncclResult_t reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported) {
    seen.calls++;
    *supported = dataType == ncclFloat32 && redOp == ncclSum;
    return ncclSuccess;
  }
  ncclResult_t regMr(void* collComm, void*, size_t size, int, void** mhandle) {
    seen.calls++;
    EXPECT_EQ(collComm, &collToken);
    seen.size = size;
    *mhandle = &regionToken;
    return ncclSuccess;
  }
  ncclResult_t regMrDmaBuf(void*, void*, size_t size, int, uint64_t, int, void** mhandle) {
    seen.calls++;
    seen.size = size;
    *mhandle = &regionToken;
    return ncclSuccess;
  }
  ncclResult_t deregMr(void*, void* mhandle) {
    seen.calls++;
    EXPECT_EQ(mhandle, &regionToken);
    return ncclSuccess;
  }
  ncclResult_t iallreduce(void*, void*, void*, size_t count, ncclDataType_t, ncclRedOp_t, void*,
                          void*, void** request) {
    seen.calls++;
    seen.count = count;
    return answer(request);
  }
  ncclResult_t iallgather(void*, void*, int nRecvParts, ncclNetSGE_v12_t* recvParts,
                          size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void*,
                          void** request) {
    seen.calls++;
    record(nRecvParts, recvParts, bytesPerRank, windowOffset, windowBytes);
    return answer(request);
  }
  ncclResult_t ireducescatter(void*, int nSendParts, ncclNetSGE_v12_t* sendParts, void*,
                              size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                              ncclDataType_t, ncclRedOp_t, void*, void** request) {
    seen.calls++;
    record(nSendParts, sendParts, bytesPerRank, windowOffset, windowBytes);
    return answer(request);
  }
  ncclResult_t iflush(void*, void*, int, void*, void**) {
    seen.calls++;  // host memory: nothing to flush, *request stays NULL
    return ncclSuccess;
  }
  ncclResult_t test(void* request, int* done, int* size) {
    seen.calls++;
    maybeThrow();
    EXPECT_EQ(request, &requestToken);
    *done = 1;
    if (size != nullptr) *size = 128;
    return ncclSuccess;
  }
  ncclResult_t closeColl(void* collComm) {
    seen.calls++;
    EXPECT_EQ(collComm, &collToken);
    return ncclSuccess;
  }
  ncclResult_t closeListen(void* listenComm) {
    seen.calls++;
    seen.closedListens++;
    EXPECT_EQ(listenComm, &listenToken);
    return ncclSuccess;
  }
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props) {
    seen.calls++;
    seen.vprops = *props;
    *d = 5;
    return ncclSuccess;
  }

 private:
  static ncclResult_t answer(void** request) {
    *request = seen.nullRequest ? nullptr : &requestToken;
    return ncclSuccess;
  }
  static void record(int n, ncclNetSGE_v12_t* parts, size_t bytesPerRank, size_t windowOffset,
                     size_t windowBytes) {
    seen.nParts = n;
    seen.partsPointer = parts;
    seen.parts.assign(parts, parts + n);
    seen.bytesPerRank = bytesPerRank;
    seen.windowOffset = windowOffset;
    seen.windowBytes = windowBytes;
  }
};

// The required members only.
class MinimalCollNet {
 public:
  static constexpr const char* kName = "minimal-collnet";
  static ncclResult_t create(const ncclnet::InitArgs&, std::unique_ptr<MinimalCollNet>* out) {
    *out = std::make_unique<MinimalCollNet>();
    return ncclSuccess;
  }
  ncclResult_t devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }
  ncclResult_t getProperties(int, ncclNetProperties_v12_t* props) {
    props->ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
    return ncclSuccess;
  }
  ncclResult_t listen(const ncclnet::CommContext&, int, void*, void**) { return ncclSuccess; }
  ncclResult_t connect(void* const*, int, int, void*, void**) { return ncclSuccess; }
  ncclResult_t reduceSupport(ncclDataType_t, ncclRedOp_t, int*) { return ncclSuccess; }
  ncclResult_t regMr(void*, void*, size_t, int, void**) { return ncclSuccess; }
  ncclResult_t deregMr(void*, void*) { return ncclSuccess; }
  ncclResult_t iallreduce(void*, void*, void*, size_t, ncclDataType_t, ncclRedOp_t, void*, void*,
                          void**) {
    return ncclSuccess;
  }
  ncclResult_t iallgather(void*, void*, int, ncclNetSGE_v12_t*, size_t, size_t, size_t, void*,
                          void**) {
    return ncclInternalError;
  }
  ncclResult_t ireducescatter(void*, int, ncclNetSGE_v12_t*, void*, size_t, size_t, size_t,
                              ncclDataType_t, ncclRedOp_t, void*, void**) {
    return ncclInternalError;
  }
  ncclResult_t iflush(void*, void*, int, void*, void**) { return ncclSuccess; }
  ncclResult_t test(void*, int*, int*) { return ncclSuccess; }
  ncclResult_t closeColl(void*) { return ncclSuccess; }
  ncclResult_t closeListen(void*) { return ncclSuccess; }
};

}  // namespace

NCCLNET_EXPORT_COLLNET_PLUGIN(RecordingCollNet)

namespace {

// The minimal class's tables, made as the export macro makes them but not
// exported (the symbols belong to RecordingCollNet here).
constexpr ncclCollNet_v6_t minimalV6 = ncclnet::detail::collNetTableOf<MinimalCollNet, 6>();
constexpr ncclCollNet_v8_t minimalV8 = ncclnet::detail::collNetTableOf<MinimalCollNet, 8>();
constexpr ncclCollNet_v9_t minimalV9 = ncclnet::detail::collNetTableOf<MinimalCollNet, 9>();
constexpr ncclCollNet_v11_t minimalV11 = ncclnet::detail::collNetTableOf<MinimalCollNet, 11>();
constexpr ncclCollNet_v12_t minimalV12 = ncclnet::detail::collNetTableOf<MinimalCollNet, 12>();

// v6..v8 properties have no maxCollBytes: NCCL uses 512 MiB for them.
static_assert(!ncclnet::detail::has_maxCollBytes_v<ncclNetProperties_v6_t>);
static_assert(!ncclnet::detail::has_maxCollBytes_v<ncclNetProperties_v7_t>);
static_assert(!ncclnet::detail::has_maxCollBytes_v<ncclNetProperties_v8_t>);
static_assert(ncclnet::detail::has_maxCollBytes_v<ncclNetProperties_v9_t>);

class CollNetExports : public ::testing::Test {
 protected:
  void SetUp() override {
    int objects = seen.objects;
    seen = Seen{};
    seen.objects = objects;
  }
  void TearDown() override {
    for (void* ctx : inits_) EXPECT_EQ(ncclCollNetPlugin_v12.finalize(ctx), ncclSuccess);
  }
  // A v11+ init, finalized at the end of the test.
  template <class Table>
  void* init(const Table& table) {
    void* ctx = nullptr;
    EXPECT_EQ(table.init(&ctx, 42, nullptr), ncclSuccess);
    inits_.push_back(ctx);
    return ctx;
  }
  // A collective connect of one head through the v12 table.
  void* connect(void* ctx) {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    EXPECT_EQ(ncclCollNetPlugin_v12.listen(ctx, 0, handle, &listenComm), ncclSuccess);
    void* handles[] = {handle};
    void* collComm = nullptr;
    EXPECT_EQ(ncclCollNetPlugin_v12.connect(handles, 1, 0, listenComm, &collComm), ncclSuccess);
    EXPECT_EQ(ncclCollNetPlugin_v12.closeListen(listenComm), ncclSuccess);
    return collComm;
  }
  std::vector<void*> inits_;
};

TEST_F(CollNetExports, EveryTableCarriesTheClassNameAndItsCollectives) {
  for (const char* name :
       {ncclCollNetPlugin_v6.name, ncclCollNetPlugin_v7.name, ncclCollNetPlugin_v8.name,
        ncclCollNetPlugin_v9.name, ncclCollNetPlugin_v10.name, ncclCollNetPlugin_v11.name,
        ncclCollNetPlugin_v12.name}) {
    EXPECT_STREQ(name, "recording-collnet");
  }
  // NCCL 2.28+ calls these through its wrappers even when NULL (C-OP-5).
  EXPECT_NE(ncclCollNetPlugin_v8.iallgather, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v8.ireducescatter, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v9.iallgather, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v9.ireducescatter, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v10.iallgather, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v10.ireducescatter, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v11.iallgather, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v11.ireducescatter, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v12.iallgather, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v12.ireducescatter, nullptr);
  // The class has both optional members.
  EXPECT_NE(ncclCollNetPlugin_v6.regMrDmaBuf, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v7.regMrDmaBuf, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v12.regMrDmaBuf, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v9.makeVDevice, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v10.makeVDevice, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v11.makeVDevice, nullptr);
  EXPECT_NE(ncclCollNetPlugin_v12.makeVDevice, nullptr);
}

TEST_F(CollNetExports, AbsentOptionalMembersLeaveTheirSlotsNull) {
  EXPECT_EQ(minimalV6.regMrDmaBuf, nullptr);
  EXPECT_EQ(minimalV8.regMrDmaBuf, nullptr);
  EXPECT_EQ(minimalV9.regMrDmaBuf, nullptr);
  EXPECT_EQ(minimalV9.makeVDevice, nullptr);
  EXPECT_EQ(minimalV11.makeVDevice, nullptr);
  EXPECT_EQ(minimalV12.regMrDmaBuf, nullptr);
  EXPECT_EQ(minimalV12.makeVDevice, nullptr);
  EXPECT_NE(minimalV8.iallgather, nullptr);
  EXPECT_NE(minimalV12.ireducescatter, nullptr);
  // NCCL calls regMrDmaBuf on NCCL_PTR_DMABUF alone: the bit goes.
  void* ctx = nullptr;
  ASSERT_EQ(minimalV12.init(&ctx, 1, nullptr), ncclSuccess);
  ncclNetProperties_v12_t props{};
  ASSERT_EQ(minimalV12.getProperties(0, &props), ncclSuccess);
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST | NCCL_PTR_CUDA);
  ncclNetProperties_v8_t props8{};
  ASSERT_EQ(minimalV8.getProperties(0, &props8), ncclSuccess);
  EXPECT_EQ(props8.ptrSupport, NCCL_PTR_HOST | NCCL_PTR_CUDA);
  EXPECT_EQ(minimalV12.finalize(ctx), ncclSuccess);
}

TEST_F(CollNetExports, PropertiesOfEveryVersion) {
  init(ncclCollNetPlugin_v12);
  seen.netDeviceType = NCCL_NET_DEVICE_UNPACK;
  ncclNetProperties_v12_t p12{};
  ASSERT_EQ(ncclCollNetPlugin_v12.getProperties(1, &p12), ncclSuccess);
  EXPECT_EQ(seen.dev, 1);
  EXPECT_STREQ(p12.name, "coll0");
  EXPECT_EQ(p12.maxCollBytes, size_t{64} << 20);
  EXPECT_EQ(p12.ptrSupport, NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
  ncclNetProperties_v11_t p11{};
  ASSERT_EQ(ncclCollNetPlugin_v11.getProperties(0, &p11), ncclSuccess);
  EXPECT_EQ(p11.maxCollBytes, size_t{64} << 20);
  ncclNetProperties_v10_t p10{};
  ASSERT_EQ(ncclCollNetPlugin_v10.getProperties(0, &p10), ncclSuccess);
  EXPECT_EQ(p10.maxCollBytes, size_t{64} << 20);
  ncclNetProperties_v9_t p9{};
  ASSERT_EQ(ncclCollNetPlugin_v9.getProperties(0, &p9), ncclSuccess);
  EXPECT_EQ(p9.maxCollBytes, size_t{64} << 20);
  EXPECT_EQ(p9.netDeviceType, NCCL_NET_DEVICE_UNPACK) << "v9+ pass the type on";
  // v6..v8: NCCL takes a host device and 512 MiB whatever the table says,
  // so a device type v6 cannot hold is no reason to fail.
  ncclNetProperties_v8_t p8{};
  ASSERT_EQ(ncclCollNetPlugin_v8.getProperties(0, &p8), ncclSuccess);
  EXPECT_EQ(p8.netDeviceType, NCCL_NET_DEVICE_HOST);
  EXPECT_STREQ(p8.name, "coll0");
  ncclNetProperties_v7_t p7{};
  ASSERT_EQ(ncclCollNetPlugin_v7.getProperties(0, &p7), ncclSuccess);
  EXPECT_EQ(p7.netDeviceType, NCCL_NET_DEVICE_HOST);
  ncclNetProperties_v6_t p6{};
  ASSERT_EQ(ncclCollNetPlugin_v6.getProperties(0, &p6), ncclSuccess);
  EXPECT_EQ(p6.ptrSupport, NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
  int ndev = 0;
  ASSERT_EQ(ncclCollNetPlugin_v12.devices(&ndev), ncclSuccess);
  EXPECT_EQ(ndev, 2);
}

TEST_F(CollNetExports, V11ListensInTheCommunicatorsContext) {
  void* first = init(ncclCollNetPlugin_v11);
  void* second = init(ncclCollNetPlugin_v11);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v11.listen(second, 3, handle, &listenComm), ncclSuccess);
  EXPECT_EQ(seen.dev, 3);
  ASSERT_NE(seen.ctx, nullptr);
  EXPECT_EQ(seen.ctx->commId, 42u);
  EXPECT_EQ(static_cast<const void*>(seen.ctx), second);
  ASSERT_EQ(ncclCollNetPlugin_v11.listen(first, 0, handle, &listenComm), ncclSuccess);
  EXPECT_EQ(static_cast<const void*>(seen.ctx), first);
  int stranger = 0;
  EXPECT_EQ(ncclCollNetPlugin_v11.listen(&stranger, 0, handle, &listenComm), ncclInternalError)
      << "a ctx init never returned";
}

TEST_F(CollNetExports, ConnectPassesTheGroupThrough) {
  void* ctx = init(ncclCollNetPlugin_v12);
  char h0[NCCL_NET_HANDLE_MAXSIZE] = {}, h1[NCCL_NET_HANDLE_MAXSIZE] = {},
       h2[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v12.listen(ctx, 0, h1, &listenComm), ncclSuccess);
  void* handles[] = {h0, h1, h2};
  void* collComm = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v12.connect(handles, 3, 1, listenComm, &collComm), ncclSuccess);
  EXPECT_EQ(collComm, &collToken);
  EXPECT_EQ(seen.handles, handles);
  EXPECT_EQ(seen.nranks, 3);
  EXPECT_EQ(seen.rank, 1);
  EXPECT_EQ(ncclCollNetPlugin_v6.connect(handles, 3, 3, listenComm, &collComm), ncclInternalError)
      << "rank 3 of 3";
  EXPECT_EQ(seen.closedListens, 1) << "NCCL drops the listen comm of a failed connect";
  ASSERT_EQ(ncclCollNetPlugin_v12.listen(ctx, 0, h1, &listenComm), ncclSuccess);
  // Declining the group: success and no collComm, NCCL falls back.
  seen.decline = true;
  collComm = &regionToken;
  EXPECT_EQ(ncclCollNetPlugin_v8.connect(handles, 3, 0, listenComm, &collComm), ncclSuccess);
  EXPECT_EQ(collComm, nullptr);
  EXPECT_EQ(seen.closedListens, 1) << "a decline leaves the listen comm to NCCL's closeListen";
  ASSERT_EQ(ncclCollNetPlugin_v12.closeListen(listenComm), ncclSuccess);
  int supported = -1;
  ASSERT_EQ(ncclCollNetPlugin_v7.reduceSupport(ncclFloat32, ncclSum, &supported), ncclSuccess);
  EXPECT_EQ(supported, 1);
  ASSERT_EQ(ncclCollNetPlugin_v12.reduceSupport(ncclInt8, ncclProd, &supported), ncclSuccess);
  EXPECT_EQ(supported, 0);
}

TEST_F(CollNetExports, IntSizesAndCountsAreWidened) {
  void* comm = connect(init(ncclCollNetPlugin_v12));
  char buffer[64];
  void* mhandle = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v6.regMr(comm, buffer, 0x7fffffff, NCCL_PTR_HOST, &mhandle),
            ncclSuccess);
  EXPECT_EQ(seen.size, size_t{0x7fffffff});
  EXPECT_EQ(mhandle, &regionToken);
  int calls = seen.calls;
  EXPECT_EQ(ncclCollNetPlugin_v7.regMr(comm, buffer, -1, NCCL_PTR_HOST, &mhandle),
            ncclInternalError);
  EXPECT_EQ(seen.calls, calls) << "a negative size never reaches the class";
  ASSERT_EQ(ncclCollNetPlugin_v8.regMr(comm, buffer, size_t{5} << 30, NCCL_PTR_HOST, &mhandle),
            ncclSuccess);
  EXPECT_EQ(seen.size, size_t{5} << 30);
  ASSERT_EQ(ncclCollNetPlugin_v7.regMrDmaBuf(comm, buffer, 4096, NCCL_PTR_CUDA, 0, 3, &mhandle),
            ncclSuccess);
  EXPECT_EQ(seen.size, 4096u);
  ASSERT_EQ(ncclCollNetPlugin_v6.deregMr(comm, mhandle), ncclSuccess);

  void* request = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v6.iallreduce(comm, buffer, buffer, 1 << 30, ncclFloat32, ncclSum,
                                            mhandle, mhandle, &request),
            ncclSuccess);
  EXPECT_EQ(seen.count, size_t{1} << 30);
  EXPECT_EQ(request, &requestToken);
  ASSERT_EQ(ncclCollNetPlugin_v8.iallreduce(comm, buffer, buffer, 16, ncclFloat32, ncclSum, mhandle,
                                            mhandle, &request),
            ncclSuccess);
  EXPECT_EQ(seen.count, 16u);
  calls = seen.calls;
  EXPECT_EQ(ncclCollNetPlugin_v7.iallreduce(comm, buffer, buffer, -4, ncclFloat32, ncclSum, mhandle,
                                            mhandle, &request),
            ncclInternalError);
  EXPECT_EQ(seen.calls, calls);
  ASSERT_EQ(ncclCollNetPlugin_v9.iallreduce(comm, buffer, buffer, size_t{3} << 30, ncclFloat32,
                                            ncclSum, mhandle, mhandle, &request),
            ncclSuccess);
  EXPECT_EQ(seen.count, size_t{3} << 30);
  int done = 0, size = 0;
  ASSERT_EQ(ncclCollNetPlugin_v6.test(request, &done, &size), ncclSuccess);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(size, 128);
  ASSERT_EQ(ncclCollNetPlugin_v12.closeColl(comm), ncclSuccess);
}

TEST_F(CollNetExports, NullRequestMeansCallAgain) {
  void* comm = connect(init(ncclCollNetPlugin_v12));
  char buffer[64];
  seen.nullRequest = true;
  void* request = &regionToken;
  EXPECT_EQ(ncclCollNetPlugin_v12.iallreduce(comm, buffer, buffer, 4, ncclFloat32, ncclSum, nullptr,
                                             nullptr, &request),
            ncclSuccess);
  EXPECT_EQ(request, nullptr);
  ncclNetSGE_v12_t part{&regionToken, buffer, 64};
  request = &regionToken;
  EXPECT_EQ(ncclCollNetPlugin_v12.iallgather(comm, buffer, 1, &part, 32, 0, 64, nullptr, &request),
            ncclSuccess);
  EXPECT_EQ(request, nullptr);
  request = &regionToken;
  EXPECT_EQ(ncclCollNetPlugin_v11.ireducescatter(
                comm, 1, reinterpret_cast<ncclNetSGE_v11_t*>(&part), buffer, 32, 0, 64, ncclFloat32,
                ncclSum, nullptr, &request),
            ncclSuccess);
  EXPECT_EQ(request, nullptr);
  // iflush: NULL on success is "nothing to flush".
  request = &regionToken;
  EXPECT_EQ(ncclCollNetPlugin_v6.iflush(comm, buffer, 64, nullptr, &request), ncclSuccess);
  EXPECT_EQ(request, nullptr);
  ASSERT_EQ(ncclCollNetPlugin_v12.closeColl(comm), ncclSuccess);
}

TEST_F(CollNetExports, V8PartsReachTheClassAsV12Parts) {
  void* comm = connect(init(ncclCollNetPlugin_v12));
  char buffer[4096];
  ncclNetSGE_v8_t parts[2] = {{&regionToken, buffer, 1024u}, {&collToken, buffer + 1024, 3072u}};
  void* request = nullptr;
  ASSERT_EQ(
      ncclCollNetPlugin_v8.iallgather(comm, buffer, 2, parts, 512, 1024, 4096, nullptr, &request),
      ncclSuccess);
  ASSERT_EQ(seen.nParts, 2);
  EXPECT_EQ(seen.parts[0].mhandle, &regionToken);
  EXPECT_EQ(seen.parts[0].address, buffer);
  EXPECT_EQ(seen.parts[0].size, 1024u);
  EXPECT_EQ(seen.parts[1].mhandle, &collToken);
  EXPECT_EQ(seen.parts[1].address, buffer + 1024);
  EXPECT_EQ(seen.parts[1].size, 3072u);
  EXPECT_EQ(seen.bytesPerRank, 512u);
  EXPECT_EQ(seen.windowOffset, 1024u);
  EXPECT_EQ(seen.windowBytes, 4096u);
  EXPECT_EQ(request, &requestToken);

  ncclNetSGE_v8_t big{&regionToken, buffer, 0xffffffffu};
  ASSERT_EQ(ncclCollNetPlugin_v8.ireducescatter(comm, 1, &big, buffer, 7, 0, 7, ncclFloat32,
                                                ncclSum, &regionToken, &request),
            ncclSuccess);
  ASSERT_EQ(seen.nParts, 1);
  EXPECT_EQ(seen.parts[0].size, size_t{0xffffffffu}) << "32-bit sizes widen without sign";

  ncclNetSGE_v9_t part9{&regionToken, buffer, size_t{6} << 30};
  ASSERT_EQ(ncclCollNetPlugin_v9.iallgather(comm, buffer, 1, &part9, 1, 2, 3, nullptr, &request),
            ncclSuccess);
  EXPECT_EQ(seen.parts[0].size, size_t{6} << 30);
  ncclNetSGE_v10_t part10{&collToken, buffer + 8, 8};
  ASSERT_EQ(ncclCollNetPlugin_v10.ireducescatter(comm, 1, &part10, buffer, 8, 0, 8, ncclFloat32,
                                                 ncclSum, nullptr, &request),
            ncclSuccess);
  EXPECT_EQ(seen.parts[0].address, buffer + 8);
  EXPECT_EQ(seen.parts[0].mhandle, &collToken);
  // v12 parts are the class's own: passed as they are.
  ncclNetSGE_v12_t part12{&regionToken, buffer, 64};
  ASSERT_EQ(
      ncclCollNetPlugin_v12.iallgather(comm, buffer, 1, &part12, 64, 0, 64, nullptr, &request),
      ncclSuccess);
  EXPECT_EQ(seen.partsPointer, &part12);

  int calls = seen.calls;
  EXPECT_EQ(ncclCollNetPlugin_v8.iallgather(comm, buffer, 0, parts, 1, 0, 1, nullptr, &request),
            ncclInternalError)
      << "no parts";
  EXPECT_EQ(ncclCollNetPlugin_v8.iallgather(comm, buffer, 1, nullptr, 1, 0, 1, nullptr, &request),
            ncclInternalError)
      << "NULL parts";
  ncclNetSGE_v11_t many[ncclnet::detail::kMaxCollNetParts + 1] = {};
  EXPECT_EQ(ncclCollNetPlugin_v11.ireducescatter(comm, ncclnet::detail::kMaxCollNetParts + 1, many,
                                                 buffer, 1, 0, 1, ncclFloat32, ncclSum, nullptr,
                                                 &request),
            ncclInternalError)
      << "more parts than the SDK copies";
  EXPECT_EQ(ncclCollNetPlugin_v12.ireducescatter(comm, 1, nullptr, buffer, 1, 0, 1, ncclFloat32,
                                                 ncclSum, nullptr, &request),
            ncclInternalError);
  EXPECT_EQ(seen.calls, calls) << "refused lists never reach the class";
  ASSERT_EQ(ncclCollNetPlugin_v12.closeColl(comm), ncclSuccess);
}

TEST_F(CollNetExports, VirtualDevicesAreWidened) {
  init(ncclCollNetPlugin_v12);
  ncclNetVDeviceProps_v9_t props9{};
  props9.ndevs = 2;
  props9.devs[0] = 0;
  props9.devs[1] = 1;
  int d = -1;
  ASSERT_EQ(ncclCollNetPlugin_v9.makeVDevice(&d, &props9), ncclSuccess);
  EXPECT_EQ(d, 5);
  EXPECT_EQ(seen.vprops.ndevs, 2);
  EXPECT_EQ(seen.vprops.devs[1], 1);
  props9.ndevs = 5;  // wider than v9's four
  EXPECT_EQ(ncclCollNetPlugin_v9.makeVDevice(&d, &props9), ncclInternalError);
  ncclNetVDeviceProps_v12_t props12{};
  props12.ndevs = 1;
  EXPECT_EQ(ncclCollNetPlugin_v12.makeVDevice(nullptr, &props12), ncclInternalError);
}

TEST_F(CollNetExports, NullOutputsAreRefused) {
  void* ctx = init(ncclCollNetPlugin_v12);
  void* comm = connect(ctx);
  int calls = seen.calls;
  int closedListens = seen.closedListens;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* out = nullptr;
  void* handles[] = {handle};
  int value = 0;
  EXPECT_EQ(ncclCollNetPlugin_v12.devices(nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.getProperties(0, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v9.getProperties(0, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v6.getProperties(0, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.reduceSupport(ncclFloat32, ncclSum, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.listen(ctx, 0, nullptr, &out), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.listen(ctx, 0, handle, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.connect(handles, 1, 0, &listenToken, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.connect(nullptr, 1, 0, &listenToken, &out), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.regMr(comm, handle, 8, NCCL_PTR_HOST, nullptr),
            ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v6.regMr(comm, handle, 8, NCCL_PTR_HOST, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.regMrDmaBuf(comm, handle, 8, NCCL_PTR_CUDA, 0, 3, nullptr),
            ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.iallreduce(comm, handle, handle, 1, ncclFloat32, ncclSum, nullptr,
                                             nullptr, nullptr),
            ncclInternalError);
  ncclNetSGE_v12_t part{nullptr, handle, 8};
  EXPECT_EQ(ncclCollNetPlugin_v12.iallgather(comm, handle, 1, &part, 8, 0, 8, nullptr, nullptr),
            ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.ireducescatter(comm, 1, &part, handle, 8, 0, 8, ncclFloat32,
                                                 ncclSum, nullptr, nullptr),
            ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.iflush(comm, handle, 8, nullptr, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.test(&requestToken, nullptr, &value), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.iflush(comm, handle, -8, nullptr, &out), ncclInternalError);
  // The two refused connects closed the listen comm, which NCCL drops
  // after a failed connect; nothing else reached the class.
  EXPECT_EQ(seen.closedListens, closedListens + 2);
  EXPECT_EQ(seen.calls, calls + 2) << "no refused call reaches the class";
  ASSERT_EQ(ncclCollNetPlugin_v12.closeColl(comm), ncclSuccess);
}

// NCCL reads *collComm whatever connect returned and never closes the
// listen comm of a failed connect (coll_net.cc sharedConnect).
TEST_F(CollNetExports, AFailedConnectLeavesNoCollCommAndClosesTheListen) {
  void* ctx = init(ncclCollNetPlugin_v12);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v12.listen(ctx, 0, handle, &listenComm), ncclSuccess);
  void* handles[] = {handle};
  void* collComm = nullptr;
  seen.failConnect = true;
  EXPECT_EQ(ncclCollNetPlugin_v12.connect(handles, 1, 0, listenComm, &collComm), ncclRemoteError);
  EXPECT_EQ(collComm, nullptr) << "the class wrote one before failing";
  EXPECT_EQ(seen.closedListens, 1);
}

// iflush's size is an int (coll_net.cc collNetRecvFlush passes up to
// maxCollBytes): with GPU memory offered, a larger maxCollBytes would wrap.
TEST_F(CollNetExports, MaxCollBytesFitsIflushWhereGpuMemoryIsOffered) {
  init(ncclCollNetPlugin_v12);
  seen.maxCollBytes = size_t{4} << 30;
  ncclNetProperties_v12_t props{};
  ASSERT_EQ(ncclCollNetPlugin_v12.getProperties(0, &props), ncclSuccess);
  EXPECT_EQ(props.maxCollBytes, static_cast<size_t>(NCCL_MAX_NET_SIZE));
  ncclNetProperties_v10_t p10{};
  ASSERT_EQ(ncclCollNetPlugin_v10.getProperties(0, &p10), ncclSuccess);
  EXPECT_EQ(p10.maxCollBytes, static_cast<size_t>(NCCL_MAX_NET_SIZE));
}

TEST_F(CollNetExports, AnExceptionBecomesAnInternalError) {
  init(ncclCollNetPlugin_v12);
  int ndev = 0;
  seen.throwNext = 1;
  EXPECT_EQ(ncclCollNetPlugin_v12.devices(&ndev), ncclInternalError);
  seen.throwNext = 2;
  int done = 0;
  EXPECT_EQ(ncclCollNetPlugin_v8.test(&requestToken, &done, nullptr), ncclInternalError);
  EXPECT_EQ(ncclCollNetPlugin_v12.devices(&ndev), ncclSuccess) << "and the plugin carries on";
}

// v11/v12: one object for all communicators, destroyed at the last
// finalize. Runs before any v6..v10 init pins the object.
TEST_F(CollNetExports, TheLastFinalizeDestroysTheObject) {
  if (seen.objects != 0) GTEST_SKIP() << "an earlier v6..v10 init pinned the object";
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v11.init(&first, 1, nullptr), ncclSuccess);
  ASSERT_EQ(ncclCollNetPlugin_v12.init(&second, 2, nullptr), ncclSuccess);
  EXPECT_EQ(seen.objects, 1) << "one object per process";
  ASSERT_EQ(ncclCollNetPlugin_v11.finalize(first), ncclSuccess);
  EXPECT_EQ(seen.objects, 1);
  ASSERT_EQ(ncclCollNetPlugin_v12.finalize(second), ncclSuccess);
  EXPECT_EQ(seen.objects, 0) << "the last finalize destroys it";
  int ndev = 0;
  EXPECT_EQ(ncclCollNetPlugin_v12.devices(&ndev), ncclInternalError) << "no object any more";
  EXPECT_EQ(ncclCollNetPlugin_v12.finalize(second), ncclInternalError) << "finalized twice";
}

// v6..v10: init once per process, never finalized (NCCL's adapters only
// count), listen in the process's context. Pins the object: keep last.
TEST_F(CollNetExports, LegacyTablesInitOnceAndListenInTheProcessContext) {
  ASSERT_EQ(ncclCollNetPlugin_v6.init(nullptr), ncclSuccess);
  ASSERT_EQ(ncclCollNetPlugin_v9.init(nullptr), ncclSuccess);
  EXPECT_EQ(seen.objects, 1);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  ASSERT_EQ(ncclCollNetPlugin_v6.listen(2, handle, &listenComm), ncclSuccess);
  EXPECT_EQ(listenComm, &listenToken);
  EXPECT_EQ(seen.dev, 2);
  EXPECT_EQ(handle[0], 7);
  const ncclnet::CommContext* context = seen.ctx;
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(context->commId, 0u);
  EXPECT_EQ(context->trafficClass, NCCL_NET_TRAFFIC_CLASS_UNDEF);
  ASSERT_EQ(ncclCollNetPlugin_v10.listen(0, handle, &listenComm), ncclSuccess);
  EXPECT_EQ(seen.ctx, context) << "one process context for every legacy listen";
  ASSERT_EQ(ncclCollNetPlugin_v10.closeListen(listenComm), ncclSuccess);
  int ndev = 0;
  ASSERT_EQ(ncclCollNetPlugin_v7.devices(&ndev), ncclSuccess);
  EXPECT_EQ(ndev, 2);
}

}  // namespace
