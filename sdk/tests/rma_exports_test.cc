// SPDX-License-Identifier: Apache-2.0
// NCCLNET_EXPORT_RMA_PLUGIN: one class, six tables. Each table is driven
// the way its NCCL drives it (plugin/gin/gin_v11.cc, gin_v12.cc,
// plugin/rma/rma_v13.cc, rma_v14.cc) and the class must see the v14
// semantics: the context and connection it was given, the signal's
// strength and value, the ginHandle equal to the mhandle.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ncclnet/rma.hpp"

namespace {

// What the class last saw, and how many objects live.
struct Seen {
  int objects = 0;
  int contexts = 0;  // live contexts
  ncclnet::RmaConfig config;
  void* rmaCtx = nullptr;
  int context = -1;
  uint32_t rank = 0;
  ncclnet::RmaSignal signal;
  bool nullRequest = false;  // make the next data call "succeed" without a request
  bool failConnect = false;  // connect writes a collComm, then fails
  bool failCreateContext = false;
  int maxRecvs = 8;
  int ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA;
  std::vector<const char*> calls;
};
Seen seen;

int collToken, listenToken, ctxToken, requestToken, regionToken;

class RecordingRma {
 public:
  static constexpr const char* kName = "recording-rma";
  static ncclResult_t create(const ncclnet::InitArgs&, std::unique_ptr<RecordingRma>* out) {
    *out = std::make_unique<RecordingRma>();
    return ncclSuccess;
  }
  RecordingRma() { seen.objects++; }
  ~RecordingRma() { seen.objects--; }

  ncclResult_t devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }
  ncclResult_t getProperties(int, ncclNetProperties_v12_t* props) {
    props->name = const_cast<char*>("rec0");
    props->ptrSupport = seen.ptrSupport;
    props->maxRecvs = seen.maxRecvs;
    return ncclSuccess;
  }
  ncclResult_t listen(const ncclnet::CommContext&, int, void* handle, void** listenComm) {
    std::memset(handle, 7, 16);
    *listenComm = &listenToken;
    return ncclSuccess;
  }
  ncclResult_t connect(const ncclnet::CommContext&, void* const*, int, int, void*,
                       void** collComm) {
    seen.calls.push_back("connect");
    *collComm = &collToken;
    return seen.failConnect ? ncclRemoteError : ncclSuccess;
  }
  ncclResult_t createContext(void* collComm, const ncclnet::RmaConfig& config, void** rmaCtx) {
    EXPECT_EQ(collComm, &collToken);
    if (seen.failCreateContext) return ncclSystemError;
    seen.config = config;
    seen.contexts++;
    *rmaCtx = &ctxToken;
    return ncclSuccess;
  }
  ncclResult_t regMrSym(void* collComm, void*, size_t, int, uint64_t, void** mhandle) {
    EXPECT_EQ(collComm, &collToken);
    *mhandle = &regionToken;
    return ncclSuccess;
  }
  ncclResult_t deregMrSym(void* collComm, void* mhandle) {
    EXPECT_EQ(collComm, &collToken);
    EXPECT_EQ(mhandle, &regionToken);
    return ncclSuccess;
  }
  ncclResult_t destroyContext(void* rmaCtx) {
    EXPECT_EQ(rmaCtx, &ctxToken);
    seen.contexts--;
    seen.calls.push_back("destroyContext");
    return ncclSuccess;
  }
  ncclResult_t closeColl(void* collComm) {
    EXPECT_EQ(collComm, &collToken);
    seen.calls.push_back("closeColl");
    return ncclSuccess;
  }
  ncclResult_t closeListen(void*) {
    seen.calls.push_back("closeListen");
    return ncclSuccess;
  }
  ncclResult_t iput(void* rmaCtx, int context, uint64_t, void*, size_t, uint64_t, void*,
                    uint32_t rank, void** request) {
    return record(rmaCtx, context, rank, request);
  }
  ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t, void*, size_t, uint64_t, void*,
                          uint32_t rank, const ncclnet::RmaSignal& signal, void** request) {
    seen.signal = signal;
    return record(rmaCtx, context, rank, request);
  }
  ncclResult_t iget(void* rmaCtx, int context, uint64_t, void*, size_t, uint64_t, void*,
                    uint32_t rank, void** request) {
    return record(rmaCtx, context, rank, request);
  }
  ncclResult_t iflush(void*, int, void*, uint32_t, void**) { return ncclSuccess; }
  ncclResult_t test(void* collComm, void* request, int* done) {
    EXPECT_EQ(collComm, &collToken);
    EXPECT_EQ(request, &requestToken);
    *done = 1;
    return ncclSuccess;
  }
  ncclResult_t progress(void* rmaCtx) {
    seen.rmaCtx = rmaCtx;
    return ncclSuccess;
  }
  ncclResult_t queryLastError(void* rmaCtx, bool* hasError) {
    seen.rmaCtx = rmaCtx;
    *hasError = false;
    return ncclSuccess;
  }

 private:
  static ncclResult_t record(void* rmaCtx, int context, uint32_t rank, void** request) {
    seen.rmaCtx = rmaCtx;
    seen.context = context;
    seen.rank = rank;
    *request = seen.nullRequest ? nullptr : &requestToken;
    return ncclSuccess;
  }
};

}  // namespace

NCCLNET_EXPORT_RMA_PLUGIN(RecordingRma)

namespace {

class RmaExports : public ::testing::Test {
 protected:
  void SetUp() override { seen = Seen{}; }
  void TearDown() override {
    for (void* ctx : inits_) EXPECT_EQ(ncclRmaPlugin_v14.finalize(ctx), ncclSuccess);
    EXPECT_EQ(seen.objects, 0) << "the object outlived the last finalize";
  }
  template <class Table>
  void* init(const Table& table) {
    void* ctx = nullptr;
    EXPECT_EQ(table.init(&ctx, 42, nullptr), ncclSuccess);
    inits_.push_back(ctx);
    return ctx;
  }
  // A collective connect of one rank, as NCCL's GIN setup does it.
  template <class Table, class... Extra>
  void* connect(const Table& table, void* ctx, Extra... extra) {
    char handle[NCCL_GIN_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    EXPECT_EQ(table.listen(ctx, 0, handle, &listenComm), ncclSuccess);
    void* handles[] = {handle};
    void* collComm = nullptr;
    EXPECT_EQ(table.connect(ctx, handles, 1, 0, extra..., listenComm, &collComm), ncclSuccess);
    EXPECT_EQ(table.closeListen(listenComm), ncclSuccess);
    return collComm;
  }
  std::vector<void*> inits_;
};

TEST_F(RmaExports, EveryTableSaysGinProxyAndTheClassName) {
  init(ncclRmaPlugin_v14);
  ncclNetProperties_v12_t props12{};
  ASSERT_EQ(ncclRmaPlugin_v14.getProperties(0, &props12), ncclSuccess);
  EXPECT_EQ(props12.netDeviceType, NCCL_NET_DEVICE_GIN_PROXY);
  EXPECT_EQ(props12.maxRecvs, 8);
  ASSERT_EQ(ncclRmaPlugin_v13.getProperties(0, &props12), ncclSuccess);
  EXPECT_EQ(props12.netDeviceType, NCCL_NET_DEVICE_GIN_PROXY);
  ncclNetProperties_v11_t props11{};
  ASSERT_EQ(ncclGinPlugin_v11.getProperties(0, &props11), ncclSuccess);
  EXPECT_EQ(props11.netDeviceType, NCCL_NET_DEVICE_GIN_PROXY);
  EXPECT_STREQ(props11.name, "rec0");
  ASSERT_EQ(ncclGinPlugin_v12.getProperties(0, &props11), ncclSuccess);
  EXPECT_EQ(props11.ptrSupport, NCCL_PTR_HOST | NCCL_PTR_CUDA);
  for (const char* name : {ncclRmaPlugin_v13.name, ncclRmaPlugin_v14.name, ncclGinPlugin_v11.name,
                           ncclGinPlugin_v12.name, ncclGinPlugin_v13.name}) {
    EXPECT_STREQ(name, "recording-rma");
  }
}

TEST_F(RmaExports, GinV11HasNoContextsTheSdkMakesOne) {
  // NCCL 2.30's v11 adapter uses the collComm as the context when
  // createContext is NULL; 2.28 never asks.
  EXPECT_EQ(ncclGinPlugin_v11.createContext, nullptr);
  EXPECT_EQ(ncclGinPlugin_v11.destroyContext, nullptr);
  void* ctx = init(ncclGinPlugin_v11);
  void* comm = connect(ncclGinPlugin_v11, ctx);
  EXPECT_EQ(seen.contexts, 1);
  EXPECT_EQ(seen.config.nContexts, 1);
  void *mhandle = nullptr, *ginHandle = nullptr;
  char buffer[64];
  ASSERT_EQ(ncclGinPlugin_v11.regMrSym(comm, buffer, sizeof buffer, NCCL_PTR_HOST, 0, &mhandle,
                                       &ginHandle),
            ncclSuccess);
  EXPECT_EQ(ginHandle, mhandle) << "inline puts pass the mhandle where others pass the ginHandle";
  void* request = nullptr;
  ASSERT_EQ(ncclGinPlugin_v11.iputSignal(comm, 0, ginHandle, 8, 0, ginHandle, 0, 16, ginHandle, 5,
                                         NCCL_GIN_SIGNAL_OP_ADD, &request),
            ncclSuccess);
  EXPECT_EQ(seen.rmaCtx, &ctxToken);
  EXPECT_EQ(seen.context, 0);
  EXPECT_TRUE(seen.signal.strong) << "every GIN v11 signal is strong";
  EXPECT_EQ(seen.signal.value, 5u);
  EXPECT_EQ(seen.signal.offset, 16u);
  int done = 0;
  ASSERT_EQ(ncclGinPlugin_v11.test(comm, request, &done), ncclSuccess);
  EXPECT_EQ(done, 1);
  ASSERT_EQ(ncclGinPlugin_v11.ginProgress(comm), ncclSuccess);
  EXPECT_EQ(seen.rmaCtx, &ctxToken);
  bool hasError = true;
  ASSERT_EQ(ncclGinPlugin_v11.queryLastError(comm, &hasError), ncclSuccess);
  EXPECT_FALSE(hasError);
  ASSERT_EQ(ncclGinPlugin_v11.deregMrSym(comm, mhandle), ncclSuccess);
  seen.calls.clear();
  ASSERT_EQ(ncclGinPlugin_v11.closeColl(comm), ncclSuccess);
  EXPECT_EQ(seen.contexts, 0);
  ASSERT_EQ(seen.calls.size(), 2u);
  EXPECT_STREQ(seen.calls[0], "destroyContext");
  EXPECT_STREQ(seen.calls[1], "closeColl");
}

TEST_F(RmaExports, GinV12ConnectionsAreContexts) {
  void* ctx = init(ncclGinPlugin_v12);
  void* comm = connect(ncclGinPlugin_v12, ctx, 3, /*queueDepth=*/0);
  EXPECT_EQ(seen.config.nContexts, 3);
  void* request = nullptr;
  ASSERT_EQ(ncclGinPlugin_v12.iput(comm, 0, &regionToken, 8, 0, &regionToken, 0, 2, &request),
            ncclSuccess);
  EXPECT_EQ(seen.context, 2);
  EXPECT_EQ(ncclGinPlugin_v12.iput(comm, 0, &regionToken, 8, 0, &regionToken, 0, 3, &request),
            ncclInvalidUsage)
      << "connection 3 of 3 does not exist";
  void* none = nullptr;
  EXPECT_EQ(ncclGinPlugin_v12.connect(ctx, &none, 1, 0, 0, 0, nullptr, &none), ncclInvalidArgument)
      << "zero connections";
  ASSERT_EQ(ncclGinPlugin_v12.closeColl(comm), ncclSuccess);
}

// NCCL 2.29 passes its contexts per collComm, which may exceed
// NCCL_GIN_MAX_CONNECTIONS (gin_host.cc ncclGinConnectOnce).
TEST_F(RmaExports, GinV12TakesMoreConnectionsThanCollComms) {
  void* ctx = init(ncclGinPlugin_v12);
  void* comm = connect(ncclGinPlugin_v12, ctx, 8, /*queueDepth=*/0);
  EXPECT_EQ(seen.config.nContexts, 8);
  ASSERT_EQ(ncclGinPlugin_v12.closeColl(comm), ncclSuccess);
}

// NCCL never closes the listen comm of a failed connect and never closes
// a collComm it did not get (gin_host.cc ncclGinConnectOnce, rma_proxy.cc
// ncclRmaProxyConnectOnce).
TEST_F(RmaExports, AFailedConnectClosesTheListenAndLeavesNoCollComm) {
  void* ctx = init(ncclRmaPlugin_v14);
  char handle[NCCL_GIN_HANDLE_MAXSIZE] = {};
  void* handles[] = {handle};
  void* listenComm = nullptr;
  void* collComm = nullptr;
  ASSERT_EQ(ncclRmaPlugin_v14.listen(ctx, 0, handle, &listenComm), ncclSuccess);
  seen.failConnect = true;
  EXPECT_EQ(ncclRmaPlugin_v14.connect(ctx, handles, 1, 0, listenComm, &collComm), ncclRemoteError);
  EXPECT_EQ(collComm, nullptr);
  ASSERT_EQ(seen.calls.size(), 2u);
  EXPECT_STREQ(seen.calls[1], "closeListen");
  // The GIN proxy tables make a context inside connect: when that fails,
  // the collComm and the listen comm are closed.
  seen.failConnect = false;
  seen.failCreateContext = true;
  seen.calls.clear();
  void* ginCtx = init(ncclGinPlugin_v12);
  ASSERT_EQ(ncclGinPlugin_v12.listen(ginCtx, 0, handle, &listenComm), ncclSuccess);
  EXPECT_EQ(ncclGinPlugin_v12.connect(ginCtx, handles, 1, 0, 2, 0, listenComm, &collComm),
            ncclSystemError);
  EXPECT_EQ(collComm, nullptr);
  ASSERT_EQ(seen.calls.size(), 3u);
  EXPECT_STREQ(seen.calls[1], "closeColl");
  EXPECT_STREQ(seen.calls[2], "closeListen");
}

// NCCL calls regMrSymDmaBuf on NCCL_PTR_DMABUF alone, and masks its GIN
// proxy ring of 32 x maxRecvs slots (gin_host_proxy.cc).
TEST_F(RmaExports, PropertiesNcclCannotUseAreMended) {
  init(ncclRmaPlugin_v14);
  seen.ptrSupport = NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
  seen.maxRecvs = 6;
  ncclNetProperties_v12_t props{};
  ASSERT_EQ(ncclRmaPlugin_v14.getProperties(0, &props), ncclSuccess);
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST | NCCL_PTR_CUDA) << "the class has no regMrSymDmaBuf";
  EXPECT_EQ(props.maxRecvs, 4);
  seen.maxRecvs = 0;
  ASSERT_EQ(ncclRmaPlugin_v14.getProperties(0, &props), ncclSuccess);
  EXPECT_EQ(props.maxRecvs, 1);
}

TEST_F(RmaExports, V13SignalsAreStrongAndThereIsNoDeviceHandle) {
  void* ctx = init(ncclRmaPlugin_v13);
  void* comm = connect(ncclRmaPlugin_v13, ctx);
  ncclGinConfig_v13_t config{};
  config.nContexts = 2;
  void* rmaCtx = nullptr;
  ncclNetDeviceHandle_v11_t* devHandle = reinterpret_cast<ncclNetDeviceHandle_v11_t*>(&ctxToken);
  ASSERT_EQ(ncclGinPlugin_v13.createContext(comm, &config, &rmaCtx, &devHandle), ncclSuccess);
  EXPECT_EQ(devHandle, nullptr);
  EXPECT_EQ(seen.config.nContexts, 2);
  ASSERT_EQ(ncclGinPlugin_v13.createContext(comm, &config, &rmaCtx, nullptr), ncclSuccess)
      << "NCCL 2.30.3 passes no devHandle";
  void* request = nullptr;
  ASSERT_EQ(ncclRmaPlugin_v13.iputSignal(rmaCtx, 1, 0, nullptr, 0, 0, nullptr, 0, 8, &regionToken,
                                         99, NCCL_GIN_SIGNAL_OP_INC, &request),
            ncclSuccess);
  EXPECT_TRUE(seen.signal.strong);
  EXPECT_EQ(seen.signal.value, 1u) << "INC adds one whatever value NCCL passed";
  EXPECT_EQ(seen.context, 1);
  ASSERT_EQ(ncclRmaPlugin_v13.destroyContext(rmaCtx), ncclSuccess);
  ASSERT_EQ(ncclRmaPlugin_v13.destroyContext(rmaCtx), ncclSuccess);
  ASSERT_EQ(ncclRmaPlugin_v13.closeColl(comm), ncclSuccess);
}

TEST_F(RmaExports, V14PassesTheSignalsStrength) {
  void* ctx = init(ncclRmaPlugin_v14);
  void* comm = connect(ncclRmaPlugin_v14, ctx);
  ncclRmaConfig_v14_t config{1, NCCL_NET_TRAFFIC_CLASS_UNDEF, 4};
  void* rmaCtx = nullptr;
  ASSERT_EQ(ncclRmaPlugin_v14.createContext(comm, &config, &rmaCtx), ncclSuccess);
  EXPECT_EQ(seen.config.rankStride, 4);
  void* request = nullptr;
  ASSERT_EQ(ncclRmaPlugin_v14.iputSignal(rmaCtx, 0, 0, &regionToken, 8, 0, &regionToken, 0, 0,
                                         &regionToken, 7, NCCL_GIN_SIGNAL_OP_ADD, false, &request),
            ncclSuccess);
  EXPECT_FALSE(seen.signal.strong);
  EXPECT_EQ(seen.signal.value, 7u);
  EXPECT_EQ(ncclRmaPlugin_v14.iputSignal(rmaCtx, 0, 0, &regionToken, 8, 0, &regionToken, 0, 0,
                                         &regionToken, 7, 3, true, &request),
            ncclInvalidArgument)
      << "op 3 is neither INC nor ADD";
  ASSERT_EQ(ncclRmaPlugin_v14.destroyContext(rmaCtx), ncclSuccess);
  ASSERT_EQ(ncclRmaPlugin_v14.closeColl(comm), ncclSuccess);
}

// v15 is v14 with optFlags: the hint changes nothing the class sees.
TEST_F(RmaExports, V15IsV14WithAHint) {
  void* ctx = init(ncclRmaPlugin_v15);
  void* comm = connect(ncclRmaPlugin_v15, ctx);
  ncclRmaConfig_v15_t config{2, NCCL_NET_TRAFFIC_CLASS_UNDEF, 1};
  void* rmaCtx = nullptr;
  ASSERT_EQ(ncclRmaPlugin_v15.createContext(comm, &config, &rmaCtx), ncclSuccess);
  void* request = nullptr;
  for (uint32_t flags : {0u, uint32_t(NCCL_RMA_OPT_FLAGS_AGGREGATE_REQUESTS)}) {
    ASSERT_EQ(ncclRmaPlugin_v15.iputSignal(rmaCtx, 1, 0, &regionToken, 8, 0, &regionToken, 3, 0,
                                           &regionToken, 5, NCCL_GIN_SIGNAL_OP_ADD, false, flags,
                                           &request),
              ncclSuccess);
    EXPECT_EQ(request, &requestToken);
    EXPECT_FALSE(seen.signal.strong);
    EXPECT_EQ(seen.signal.value, 5u);
    EXPECT_EQ(seen.context, 1);
    EXPECT_EQ(seen.rank, 3u);
    request = nullptr;
    ASSERT_EQ(
        ncclRmaPlugin_v15.iput(rmaCtx, 0, 0, &regionToken, 8, 0, &regionToken, 2, flags, &request),
        ncclSuccess);
    EXPECT_EQ(seen.rank, 2u);
    ASSERT_EQ(
        ncclRmaPlugin_v15.iget(rmaCtx, 1, 0, &regionToken, 8, 0, &regionToken, 1, flags, &request),
        ncclSuccess);
    EXPECT_EQ(seen.rank, 1u);
    EXPECT_EQ(seen.context, 1);
  }
  ASSERT_EQ(ncclRmaPlugin_v15.destroyContext(rmaCtx), ncclSuccess);
  ASSERT_EQ(ncclRmaPlugin_v15.closeColl(comm), ncclSuccess);
}

TEST_F(RmaExports, SuccessWithoutARequestIsRefused) {
  void* ctx = init(ncclRmaPlugin_v14);
  void* comm = connect(ncclRmaPlugin_v14, ctx);
  seen.nullRequest = true;
  void* request = &ctxToken;
  EXPECT_EQ(ncclRmaPlugin_v14.iput(&ctxToken, 0, 0, &regionToken, 8, 0, &regionToken, 0, &request),
            ncclInternalError)
      << "NCCL's proxy would test a NULL request";
  EXPECT_EQ(ncclRmaPlugin_v14.iget(&ctxToken, 0, 0, &regionToken, 8, 0, &regionToken, 0, &request),
            ncclInternalError);
  request = &ctxToken;
  EXPECT_EQ(ncclRmaPlugin_v14.iflush(&ctxToken, 0, &regionToken, 0, &request), ncclSuccess);
  EXPECT_EQ(request, nullptr) << "a NULL flush request means nothing to wait for";
  ASSERT_EQ(ncclRmaPlugin_v14.closeColl(comm), ncclSuccess);
}

TEST_F(RmaExports, NullContextIsTheProcessesOnceInitialized) {
  void* none = nullptr;
  char handle[NCCL_GIN_HANDLE_MAXSIZE] = {};
  EXPECT_EQ(ncclGinPlugin_v11.listen(nullptr, 0, handle, &none), ncclInternalError)
      << "before any init there is no object";
  init(ncclGinPlugin_v11);
  init(ncclGinPlugin_v11);
  EXPECT_EQ(seen.objects, 1) << "one object per process";
  // NCCL 2.28 connects every communicator but the first with a NULL ctx.
  void* comm = connect(ncclGinPlugin_v11, nullptr);
  ASSERT_NE(comm, nullptr);
  ASSERT_EQ(ncclGinPlugin_v11.closeColl(comm), ncclSuccess);
  EXPECT_EQ(ncclGinPlugin_v11.finalize(nullptr), ncclSuccess);
}

TEST_F(RmaExports, ConnectTakesAContextOfAnotherTable) {
  void* ctx = init(ncclRmaPlugin_v14);
  // NCCL 2.30.7's RMA proxy connects with the net plugin's context
  // (src/rma/rma_proxy.cc passes comm->netContext): a pointer this table's
  // init never returned.
  int netContext = 0;
  char handle[NCCL_GIN_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  ASSERT_EQ(ncclRmaPlugin_v14.listen(ctx, 0, handle, &listenComm), ncclSuccess);
  void* handles[] = {handle};
  void* comm = nullptr;
  EXPECT_EQ(ncclRmaPlugin_v14.connect(&netContext, handles, 1, 0, listenComm, &comm), ncclSuccess);
  EXPECT_NE(comm, nullptr);
  ASSERT_EQ(ncclRmaPlugin_v14.closeListen(listenComm), ncclSuccess);
  if (comm != nullptr) {
    ASSERT_EQ(ncclRmaPlugin_v14.closeColl(comm), ncclSuccess);
  }
  // listen keeps refusing a stranger: NCCL passes it the RMA table's own.
  EXPECT_EQ(ncclRmaPlugin_v14.listen(&netContext, 0, handle, &listenComm), ncclInternalError);
}

}  // namespace
