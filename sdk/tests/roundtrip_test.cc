// SPDX-License-Identifier: Apache-2.0
// The round-trip matrix: testnet, exported by the SDK's macro, loaded back
// through the host Loader pinned to each ABI version v6..v12. Where the
// versions overlap the plugin must behave identically; where they differ
// the tests check what NCCL's compat layer would see.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/host/loader.hpp"
#include "ncclnet/host/log_capture.hpp"
#include "plugin_paths.hpp"

namespace {

using ncclnet::host::LoadedPlugin;
using ncclnet::host::Loader;
using ncclnet::host::LoaderOptions;
using ncclnet::host::NetView;
using ncclnet::host::Optional;

struct Variant {
  int version;
  bool full;  // sdk-testnet (every optional member) or sdk-testnet-min
};

std::string variantName(const ::testing::TestParamInfo<Variant>& info) {
  return std::string(info.param.full ? "full" : "min") + "_v" + std::to_string(info.param.version);
}

class RoundTrip : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    LoaderOptions options;
    options.pluginList = ncclnet::testing::pluginPath(full() ? "sdk-testnet" : "sdk-testnet-min");
    options.netName = "";
    options.pinnedVersion = version();
    Loader loader(options);
    ASSERT_EQ(loader.load(&plugin_), ncclSuccess) << loader.report().outcome;
    net_ = &plugin_->net();
    ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    ASSERT_EQ(net_->init(&ctx_, 42, &config, ncclnet::host::captureLogger, nullptr), ncclSuccess);
  }
  void TearDown() override {
    if (net_ != nullptr) {
      EXPECT_EQ(net_->finalize(ctx_), ncclSuccess);
    }
  }

  int version() const { return GetParam().version; }
  bool full() const { return GetParam().full; }

  // listen + connect/accept polled until both sides exist, as NCCL does.
  void connectPair(void** sendComm, void** recvComm, int* connectCalls = nullptr) {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ASSERT_EQ(net_->listen(ctx_, 0, handle, &listenComm), ncclSuccess);
    ASSERT_NE(listenComm, nullptr);
    *sendComm = *recvComm = nullptr;
    ncclNetDeviceHandle_v12_t* sendDev = nullptr;
    ncclNetDeviceHandle_v12_t* recvDev = nullptr;
    int calls = 0;
    for (int i = 0; i < 100 && (*sendComm == nullptr || *recvComm == nullptr); i++) {
      if (*sendComm == nullptr) {
        calls++;
        ASSERT_EQ(net_->connect(ctx_, 0, handle, sendComm, &sendDev), ncclSuccess);
      }
      if (*recvComm == nullptr) {
        ASSERT_EQ(net_->accept(listenComm, recvComm, &recvDev), ncclSuccess);
      }
    }
    ASSERT_NE(*sendComm, nullptr);
    ASSERT_NE(*recvComm, nullptr);
    EXPECT_EQ(net_->closeListen(listenComm), ncclSuccess);
    if (connectCalls) *connectCalls = calls;
  }

  // Polls test() until done; returns its result.
  ncclResult_t wait(void* request, int* sizes) {
    int done = 0;
    for (int i = 0; i < 1000; i++) {
      ncclResult_t res = net_->test(request, &done, sizes);
      if (res != ncclSuccess || done) return res;
    }
    return ncclTimeout;
  }

  std::unique_ptr<LoadedPlugin> plugin_;
  NetView* net_ = nullptr;
  void* ctx_ = nullptr;
};

TEST_P(RoundTrip, LoadsTheRequestedVersionAndName) {
  EXPECT_EQ(plugin_->version(), version());
  EXPECT_STREQ(plugin_->name(), full() ? "sdk-testnet" : "sdk-testnet-min");
  EXPECT_EQ(plugin_->exportedVersions(), (std::vector<int>{12, 11, 10, 9, 8, 7, 6}));
}

TEST_P(RoundTrip, PropertiesSurviveOrGetNcclDefaults) {
  int ndev = 0;
  ASSERT_EQ(net_->devices(&ndev), ncclSuccess);
  ASSERT_GE(ndev, 2);
  ncclNetProperties_v12_t p;
  ASSERT_EQ(net_->getProperties(1, &p), ncclSuccess);
  // Fields every version carries.
  EXPECT_STREQ(p.name, "testnet1");
  EXPECT_EQ(p.pciPath, nullptr);
  EXPECT_EQ(p.guid, 0x1001u);
  EXPECT_EQ(p.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(p.speed, 100000);
  EXPECT_EQ(p.port, 1);
  EXPECT_FLOAT_EQ(p.latency, 1.5f);
  EXPECT_EQ(p.maxComms, 1024);
  EXPECT_EQ(p.maxRecvs, 4);
  EXPECT_EQ(p.netDeviceType, NCCL_NET_DEVICE_HOST);
  // Fields added later: the plugin's value, or what NCCL fills in.
  EXPECT_EQ(p.regIsGlobal, version() >= 8 ? 1 : 0);
  EXPECT_EQ(p.forceFlush, 0);
  EXPECT_EQ(p.vProps.ndevs, 1);
  EXPECT_EQ(p.vProps.devs[0], 1);
  EXPECT_EQ(p.maxP2pBytes, version() >= 9 ? NCCL_MAX_NET_SIZE_BYTES : NCCL_MAX_NET_SIZE);
  EXPECT_EQ(p.maxCollBytes, version() >= 9 ? NCCL_MAX_NET_SIZE_BYTES : NCCL_MAX_COLLNET_SIZE);
  EXPECT_EQ(p.maxMultiRequestSize, 1);
  EXPECT_EQ(p.railId, version() >= 12 ? 1 : NCCL_NET_ID_UNDEF);
  EXPECT_EQ(p.planeId, version() >= 12 ? 0 : NCCL_NET_ID_UNDEF);
}

TEST_P(RoundTrip, BadDeviceIsTheSameErrorEverywhere) {
  ncclNetProperties_v12_t p;
  EXPECT_EQ(net_->getProperties(1000, &p), ncclInvalidArgument);
}

TEST_P(RoundTrip, OptionalFunctionsAreNullUnlessProvidedAndTheVersionHasThem) {
  EXPECT_EQ(net_->provides(Optional::RegMrDmaBuf), full());
  EXPECT_EQ(net_->provides(Optional::GetDeviceMr), full() && version() >= 7);
  EXPECT_EQ(net_->provides(Optional::IrecvConsumed), full() && version() >= 7);
  EXPECT_EQ(net_->provides(Optional::MakeVDevice), full() && version() >= 9);
  EXPECT_EQ(net_->provides(Optional::SetNetAttr), full() && version() >= 11);
}

TEST_P(RoundTrip, ConnectIsNonBlockingAndRetriedWithTheSameHandle) {
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  int calls = 0;
  connectPair(&sendComm, &recvComm, &calls);
  EXPECT_EQ(calls, 2) << "testnet completes connect on the second call";
  EXPECT_EQ(net_->closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(net_->closeRecv(recvComm), ncclSuccess);
}

TEST_P(RoundTrip, GroupedReceiveDeliversEveryByteAndSize) {
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  connectPair(&sendComm, &recvComm);
  const size_t sizes[] = {0, 1, 4096, 1 << 20};
  std::vector<char> src(1 << 20), dst(4 << 20, 0);
  for (size_t i = 0; i < src.size(); i++) src[i] = static_cast<char>(i * 7 + 3);
  void *srcMr = nullptr, *dstMr = nullptr;
  ASSERT_EQ(net_->regMr(sendComm, src.data(), src.size(), NCCL_PTR_HOST, &srcMr), ncclSuccess);
  ASSERT_EQ(net_->regMr(recvComm, dst.data(), dst.size(), NCCL_PTR_HOST, &dstMr), ncclSuccess);

  // One grouped receive of four buffers, tags in reverse order of the sends.
  void* data[4];
  size_t capacity[4];
  int tags[4];
  void* mhandles[4];
  for (int i = 0; i < 4; i++) {
    data[i] = dst.data() + i * (1 << 20);
    capacity[i] = 1 << 20;
    tags[i] = 3 - i;
    mhandles[i] = dstMr;
  }
  void* recvReq = reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);
  ASSERT_EQ(net_->irecv(recvComm, 4, data, capacity, tags, mhandles, nullptr, &recvReq),
            ncclSuccess);
  ASSERT_NE(recvReq, nullptr);
  ASSERT_NE(recvReq, reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION))
      << "irecv must overwrite the optional-completion hint";
  void* sendReqs[4];
  for (int i = 0; i < 4; i++) {
    ASSERT_EQ(net_->isend(sendComm, src.data(), sizes[i], i, srcMr, nullptr, &sendReqs[i]),
              ncclSuccess);
    ASSERT_NE(sendReqs[i], nullptr);
  }
  for (int i = 0; i < 4; i++) {
    int size = -1;
    ASSERT_EQ(wait(sendReqs[i], &size), ncclSuccess);
    EXPECT_EQ(size, static_cast<int>(sizes[i]));
  }
  int received[4] = {-1, -1, -1, -1};
  ASSERT_EQ(wait(recvReq, received), ncclSuccess);
  for (int tag = 0; tag < 4; tag++) {
    int slot = 3 - tag;  // the buffer whose tag matched
    EXPECT_EQ(received[slot], static_cast<int>(sizes[tag])) << "tag " << tag;
    EXPECT_EQ(std::memcmp(data[slot], src.data(), sizes[tag]), 0) << "tag " << tag;
  }
  if (net_->provides(Optional::IrecvConsumed)) {
    EXPECT_EQ(net_->irecvConsumed(recvComm, 4, recvReq), ncclSuccess);
  }
  EXPECT_EQ(net_->deregMr(sendComm, srcMr), ncclSuccess);
  EXPECT_EQ(net_->deregMr(recvComm, dstMr), ncclSuccess);
  EXPECT_EQ(net_->closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(net_->closeRecv(recvComm), ncclSuccess);
}

// Several ranks sharing one comm: tag 0 sends its second step before tag 1
// sent its first. Each send lands in the oldest receive with a free buffer
// for its tag, so per-tag order holds.
TEST_P(RoundTrip, OneTagRunningAheadLandsInTheNextReceive) {
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  connectPair(&sendComm, &recvComm);
  char src[4] = {'A', 'B', 'C', 'D'};
  char dst[4] = {};
  void *srcMr = nullptr, *dstMr = nullptr;
  ASSERT_EQ(net_->regMr(sendComm, src, 4, NCCL_PTR_HOST, &srcMr), ncclSuccess);
  ASSERT_EQ(net_->regMr(recvComm, dst, 4, NCCL_PTR_HOST, &dstMr), ncclSuccess);
  void* recvReqs[2];
  for (int r = 0; r < 2; r++) {
    void* data[2] = {dst + 2 * r, dst + 2 * r + 1};
    size_t capacity[2] = {1, 1};
    int tags[2] = {0, 1};
    void* mhandles[2] = {dstMr, dstMr};
    ASSERT_EQ(net_->irecv(recvComm, 2, data, capacity, tags, mhandles, nullptr, &recvReqs[r]),
              ncclSuccess);
    ASSERT_NE(recvReqs[r], nullptr);
  }
  const int tagOf[4] = {0, 0, 1, 1};  // A, B from tag 0; C, D from tag 1
  void* sendReqs[4];
  for (int i = 0; i < 4; i++) {
    ASSERT_EQ(net_->isend(sendComm, src + i, 1, tagOf[i], srcMr, nullptr, &sendReqs[i]),
              ncclSuccess);
    ASSERT_NE(sendReqs[i], nullptr);
  }
  for (void* request : sendReqs) EXPECT_EQ(wait(request, nullptr), ncclSuccess);
  int sizes[2];
  for (void* request : recvReqs) EXPECT_EQ(wait(request, sizes), ncclSuccess);
  EXPECT_EQ(std::string(dst, 4), "ACBD") << "first receive: A and C; second: B and D";
  EXPECT_EQ(net_->deregMr(sendComm, srcMr), ncclSuccess);
  EXPECT_EQ(net_->deregMr(recvComm, dstMr), ncclSuccess);
  EXPECT_EQ(net_->closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(net_->closeRecv(recvComm), ncclSuccess);
}

TEST_P(RoundTrip, TruncationIsAnErrorOnBothSidesAndWritesNothing) {
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  connectPair(&sendComm, &recvComm);
  std::vector<char> src(100, 'x'), dst(100, 'o');
  void *srcMr = nullptr, *dstMr = nullptr;
  ASSERT_EQ(net_->regMr(sendComm, src.data(), src.size(), NCCL_PTR_HOST, &srcMr), ncclSuccess);
  ASSERT_EQ(net_->regMr(recvComm, dst.data(), dst.size(), NCCL_PTR_HOST, &dstMr), ncclSuccess);
  void* data = dst.data();
  size_t capacity = 50;
  int tag = 0;
  void* recvReq = nullptr;
  void* sendReq = nullptr;
  ASSERT_EQ(net_->irecv(recvComm, 1, &data, &capacity, &tag, &dstMr, nullptr, &recvReq),
            ncclSuccess);
  ASSERT_EQ(net_->isend(sendComm, src.data(), 100, 0, srcMr, nullptr, &sendReq), ncclSuccess);
  int size = 0;
  EXPECT_EQ(wait(sendReq, &size), ncclInvalidUsage);
  EXPECT_EQ(wait(recvReq, &size), ncclInvalidUsage);
  EXPECT_EQ(std::string(dst.begin(), dst.end()), std::string(100, 'o'));
  EXPECT_EQ(net_->deregMr(sendComm, srcMr), ncclSuccess);
  EXPECT_EQ(net_->deregMr(recvComm, dstMr), ncclSuccess);
  EXPECT_EQ(net_->closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(net_->closeRecv(recvComm), ncclSuccess);
}

TEST_P(RoundTrip, SizesAboveIntMaxAreRefusedByIntVersionsAndPassedByOthers) {
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  connectPair(&sendComm, &recvComm);
  char byte = 0;
  void* mr = nullptr;
  ASSERT_EQ(net_->regMr(sendComm, &byte, 1, NCCL_PTR_HOST, &mr), ncclSuccess);
  size_t huge = static_cast<size_t>(INT_MAX) + 1;
  void* request = nullptr;
  // v6..v8 carry an int: the view refuses instead of truncating. v9+ hand the
  // size to the plugin, which refuses it because the buffer is 1 byte.
  ncclResult_t expected = version() <= 8 ? ncclInternalError : ncclInvalidArgument;
  EXPECT_EQ(net_->isend(sendComm, &byte, huge, 0, mr, nullptr, &request), expected);
  void* data = &byte;
  int tag = 0;
  EXPECT_EQ(net_->irecv(recvComm, 1, &data, &huge, &tag, &mr, nullptr, &request), expected);
  // regMr took an int up to v7.
  void* bigMr = nullptr;
  ncclResult_t reg = net_->regMr(sendComm, &byte, huge, NCCL_PTR_HOST, &bigMr);
  if (version() <= 7) {
    EXPECT_EQ(reg, ncclInternalError);
  } else {
    ASSERT_EQ(reg, ncclSuccess);
    EXPECT_EQ(net_->deregMr(sendComm, bigMr), ncclSuccess);
  }
  EXPECT_EQ(net_->deregMr(sendComm, mr), ncclSuccess);
  EXPECT_EQ(net_->closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(net_->closeRecv(recvComm), ncclSuccess);
}

TEST_P(RoundTrip, BackPressureIsANullRequestNotAnError) {
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  connectPair(&sendComm, &recvComm);
  char byte = 1;
  void* mr = nullptr;
  ASSERT_EQ(net_->regMr(sendComm, &byte, 1, NCCL_PTR_HOST, &mr), ncclSuccess);
  std::vector<void*> requests;
  for (int i = 0; i < 1000; i++) {
    void* request = nullptr;
    ASSERT_EQ(net_->isend(sendComm, &byte, 1, 0, mr, nullptr, &request), ncclSuccess);
    if (request == nullptr) break;
    requests.push_back(request);
  }
  EXPECT_EQ(requests.size(), static_cast<size_t>(NCCL_NET_MAX_REQUESTS * 4))
      << "32 x maxRecvs sends in flight, then NULL";
  EXPECT_EQ(net_->deregMr(sendComm, mr), ncclSuccess);
  EXPECT_EQ(net_->closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(net_->closeRecv(recvComm), ncclSuccess);
}

TEST_P(RoundTrip, GarbageHandlesAreErrorsNotCrashes) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  std::memset(handle, 0xab, sizeof(handle));
  void* sendComm = nullptr;
  EXPECT_EQ(net_->connect(ctx_, 0, handle, &sendComm, nullptr), ncclInvalidUsage);
  int garbage = 0;
  int done = 0;
  EXPECT_NE(net_->test(&garbage, &done, nullptr), ncclSuccess);
  EXPECT_NE(net_->closeSend(&garbage), ncclSuccess);
  EXPECT_NE(net_->deregMr(&garbage, &garbage), ncclSuccess);
}

// makeVDevice exists from v9 on, in the plugin that provides it.
class RoundTripVirtual : public RoundTrip {};

TEST_P(RoundTripVirtual, VirtualDevicesRespectEachVersionsWidth) {
  ASSERT_TRUE(net_->provides(Optional::MakeVDevice));
  ncclNetVDeviceProps_v12_t pair{2, {0, 1}};
  int vdev = -1;
  ASSERT_EQ(net_->makeVDevice(&vdev, &pair), ncclSuccess);
  ncclNetProperties_v12_t p;
  ASSERT_EQ(net_->getProperties(vdev, &p), ncclSuccess);
  EXPECT_EQ(p.vProps.ndevs, 2);
  ncclNetVDeviceProps_v12_t wide{5, {0, 1, 0, 1, 0}};
  if (version() == 12) {
    ASSERT_EQ(net_->makeVDevice(&vdev, &wide), ncclSuccess);
    ASSERT_EQ(net_->getProperties(vdev, &p), ncclSuccess);
    EXPECT_EQ(p.vProps.ndevs, 5);
  } else {
    EXPECT_EQ(net_->makeVDevice(&vdev, &wide), ncclInvalidArgument)
        << "v9..v11 fuse at most 4 devices";
  }
}

// One round trip per row of the ABI table (ncclnet/detail/abi_versions.hpp):
// a new version's row is exported and imported back without a test edit.
std::vector<Variant> allVariants() {
  std::vector<Variant> variants;
  for (int full = 1; full >= 0; full--) {
    for (const auto& abi : ncclnet::detail::kAbiVersions) {
      variants.push_back(Variant{abi.version, full == 1});
    }
  }
  return variants;
}
std::vector<Variant> virtualDeviceVariants() {
  std::vector<Variant> variants;
  for (const auto& abi : ncclnet::detail::kAbiVersions) {
    if (abi.makeVDevice) variants.push_back(Variant{abi.version, true});
  }
  return variants;
}

INSTANTIATE_TEST_SUITE_P(EveryAbi, RoundTrip, ::testing::ValuesIn(allVariants()), variantName);
INSTANTIATE_TEST_SUITE_P(AbiWithVirtualDevices, RoundTripVirtual,
                         ::testing::ValuesIn(virtualDeviceVariants()), variantName);

// A virtual NIC wider than v11 allows, made through v12, cannot be described
// to a v11 host: the export side refuses with an error and a log line.
TEST(RoundTripExport, WideVirtualDeviceIsRefusedToOlderVersions) {
  auto load = [](int version) {
    LoaderOptions options;
    options.pluginList = ncclnet::testing::pluginPath("sdk-testnet");
    options.netName = "";
    options.pinnedVersion = version;
    std::unique_ptr<LoadedPlugin> plugin;
    Loader loader(options);
    EXPECT_EQ(loader.load(&plugin), ncclSuccess);
    return plugin;
  };
  auto v12 = load(12);
  auto v11 = load(11);
  void* ctx12 = nullptr;
  void* ctx11 = nullptr;
  ASSERT_EQ(v12->net().init(&ctx12, 1, nullptr, ncclnet::host::captureLogger, nullptr),
            ncclSuccess);
  ASSERT_EQ(v11->net().init(&ctx11, 2, nullptr, ncclnet::host::captureLogger, nullptr),
            ncclSuccess);
  ncclNetVDeviceProps_v12_t wide{5, {0, 1, 0, 1, 0}};
  int vdev = -1;
  ASSERT_EQ(v12->net().makeVDevice(&vdev, &wide), ncclSuccess);
  ncclnet::host::clearCapturedLines();
  ncclNetProperties_v12_t p;
  EXPECT_EQ(v11->net().getProperties(vdev, &p), ncclInternalError);
  EXPECT_EQ(ncclnet::host::countCaptured(NCCL_LOG_WARN, "vProps.ndevs exceeds"), 1);
  EXPECT_EQ(v12->net().getProperties(vdev, &p), ncclSuccess);
  EXPECT_EQ(v11->net().finalize(ctx11), ncclSuccess);
  EXPECT_EQ(v12->net().finalize(ctx12), ncclSuccess);
}

// v11+: one context per communicator; finalize is checked, and NCCL 2.28's
// finalize(NULL) after a failed init is tolerated.
TEST(RoundTripExport, PerCommunicatorContexts) {
  LoaderOptions options;
  options.pluginList = ncclnet::testing::pluginPath("sdk-testnet");
  options.netName = "";
  options.pinnedVersion = 11;
  std::unique_ptr<LoadedPlugin> plugin;
  Loader loader(options);
  ASSERT_EQ(loader.load(&plugin), ncclSuccess);
  NetView& net = plugin->net();
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(net.init(&a, 1, nullptr, ncclnet::host::captureLogger, nullptr), ncclSuccess);
  ASSERT_EQ(net.init(&b, 2, nullptr, ncclnet::host::captureLogger, nullptr), ncclSuccess);
  EXPECT_NE(a, b);
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listenComm = nullptr;
  int unknownCtx = 0;
  EXPECT_EQ(net.listen(&unknownCtx, 0, handle, &listenComm), ncclInternalError);
  EXPECT_EQ(net.finalize(nullptr), ncclSuccess);
  EXPECT_EQ(net.finalize(a), ncclSuccess);
  EXPECT_EQ(net.finalize(a), ncclInternalError) << "a context is finalized once";
  EXPECT_EQ(net.listen(b, 0, handle, &listenComm), ncclSuccess);
  EXPECT_EQ(net.closeListen(listenComm), ncclSuccess);
  EXPECT_EQ(net.finalize(b), ncclSuccess);
}

// After the last finalize the plugin object is destroyed. Checked in a fresh
// process: an older ABI loaded earlier in this one would keep it alive.
TEST(RoundTripExport, LastFinalizeReleasesThePlugin) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        LoaderOptions options;
        options.pluginList = ncclnet::testing::pluginPath("sdk-testnet");
        options.netName = "";
        options.pinnedVersion = 12;
        std::unique_ptr<LoadedPlugin> plugin;
        Loader loader(options);
        if (loader.load(&plugin) != ncclSuccess) std::exit(2);
        void* ctx = nullptr;
        if (plugin->net().init(&ctx, 1, nullptr, ncclnet::host::stderrLogger(),
                               ncclnet::host::profilerCallback()) != ncclSuccess)
          std::exit(3);
        int ndev = 0;
        if (plugin->net().devices(&ndev) != ncclSuccess) std::exit(4);
        plugin->net().finalize(ctx);
        std::exit(plugin->net().devices(&ndev) == ncclInternalError ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "called before init");
}

}  // namespace
