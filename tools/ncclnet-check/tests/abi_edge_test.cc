// SPDX-License-Identifier: Apache-2.0
// The edge of every ABI version, v6..v12, seen from its three sides: the
// SDK's export table (sdk-abi-probe's ncclNetPlugin_v<N>), the host's import
// view over that table, and ncclnet-check's table of the same version
// wrapped around the probe. Each side is fed the same edge values (sizes
// -1, 0, 1, 1 GiB, 1 GiB + 1, INT_MAX, INT_MAX + 1; n -1, 0, 1, 64, 65) and
// must do what NCCL's compat layer does for that version, as the version's
// row of ncclnet/detail/abi_versions.hpp says: refuse with
// ncclInternalError and one WARN line, the plugin never called; or hand the
// plugin the value unchanged.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "abi_probe.hpp"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/host/log_capture.hpp"
#include "ncclnet/host/net_view.hpp"

namespace {

using ncclnet::kMaxGroupedRecvs;
using ncclnet::detail::abiVersion;
using ncclnet::detail::AbiVersion;
using ncclnet::detail::kAbi;
using ncclnet::host::captureLogger;
using ncclnet::probe::ProbeComm;

constexpr int64_t kGiB = int64_t{1} << 30;
const int64_t kSizes[] = {-1, 0, 1, kGiB, kGiB + 1, INT_MAX, int64_t{INT_MAX} + 1};
const int kCounts[] = {-1, 0, 1, kMaxGroupedRecvs, kMaxGroupedRecvs + 1};

// What NCCL's rule (the row) lets through. A table whose argument is an int
// gets the value as an int: NCCL never narrows a negative one. A size_t
// argument gets -1 as SIZE_MAX.
bool passes(int64_t value, size_t max, bool intArgument) {
  if (intArgument && value < 0) return false;
  return static_cast<size_t>(value) <= max;
}

bool passesCount(const AbiVersion& abi, int n) {
  return !abi.boundsRecvCount || (n >= 1 && n <= kMaxGroupedRecvs);
}

// One side of one version, driven as NCCL drives it.
class Side {
 public:
  virtual ~Side() = default;
  // Whether regMr's / isend's size is an int on this side.
  virtual bool intRegMr() const = 0;
  virtual bool intMessages() const = 0;
  virtual ncclResult_t init() = 0;
  virtual void finalize() = 0;
  virtual void connect(void** sendComm, void** recvComm) = 0;
  virtual ncclResult_t regMr(void* comm, int64_t size, void** mhandle) = 0;
  virtual ncclResult_t deregMr(void* comm, void* mhandle) = 0;
  virtual ncclResult_t isend(void* comm, int64_t size, void* mhandle, void** request) = 0;
  virtual ncclResult_t irecv(void* comm, int n, const int64_t* sizes, void** mhandles,
                             void** request) = 0;
  virtual ncclResult_t test(void* request, int* done, int* sizes) = 0;
  virtual void close(void* sendComm, void* recvComm) = 0;

  // The traffic class of the communicator: init's config (v11+, the view),
  // connect's (v10).
  void setTrafficClass(int trafficClass) { trafficClass_ = trafficClass; }

 protected:
  int trafficClass_ = NCCL_NET_TRAFFIC_CLASS_UNDEF;
};

char gBuffer[64];

// A raw table, as NCCL calls it: the SDK's export side, or the checker's.
template <int V>
class RawTable final : public Side {
  using Net = typename ncclnet::detail::AbiTypes<V>::Net;
  static constexpr AbiVersion kRow = kAbi<V>;

 public:
  explicit RawTable(const void* table) : t_(static_cast<const Net*>(table)) {}

  bool intRegMr() const override { return kRow.intRegMrSize; }
  bool intMessages() const override { return kRow.intMessageSizes; }

  ncclResult_t init() override {
    if constexpr (kRow.perCommInit) {
      ncclNetCommConfig_v12_t config{trafficClass_};
      return t_->init(&ctx_, 7, &config, captureLogger, nullptr);
    } else if constexpr (kRow.profiler) {
      return t_->init(captureLogger, nullptr);
    } else {
      return t_->init(captureLogger);
    }
  }
  void finalize() override {
    if constexpr (kRow.perCommInit) {
      EXPECT_EQ(t_->finalize(ctx_), ncclSuccess);
    }
  }

  void connect(void** sendComm, void** recvComm) override {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ncclNetDeviceHandle_v12_t* dev = nullptr;
    if constexpr (kRow.perCommInit) {
      ASSERT_EQ(t_->listen(ctx_, 0, handle, &listenComm), ncclSuccess);
      ASSERT_EQ(t_->connect(ctx_, 0, handle, sendComm, &dev), ncclSuccess);
    } else {
      ASSERT_EQ(t_->listen(0, handle, &listenComm), ncclSuccess);
      if constexpr (kRow.connectConfig) {
        ncclNetCommConfig_v10_t config{trafficClass_};
        ASSERT_EQ(t_->connect(0, &config, handle, sendComm, &dev), ncclSuccess);
      } else if constexpr (kRow.deviceHandles) {
        ASSERT_EQ(t_->connect(0, handle, sendComm, &dev), ncclSuccess);
      } else {
        ASSERT_EQ(t_->connect(0, handle, sendComm), ncclSuccess);
      }
    }
    if constexpr (kRow.deviceHandles) {
      ASSERT_EQ(t_->accept(listenComm, recvComm, &dev), ncclSuccess);
    } else {
      ASSERT_EQ(t_->accept(listenComm, recvComm), ncclSuccess);
    }
    ASSERT_EQ(t_->closeListen(listenComm), ncclSuccess);
  }

  ncclResult_t regMr(void* comm, int64_t size, void** mhandle) override {
    if constexpr (kRow.intRegMrSize) {
      return t_->regMr(comm, gBuffer, static_cast<int>(size), NCCL_PTR_HOST, mhandle);
    } else {
      return t_->regMr(comm, gBuffer, static_cast<size_t>(size), NCCL_PTR_HOST, mhandle);
    }
  }
  ncclResult_t deregMr(void* comm, void* mhandle) override { return t_->deregMr(comm, mhandle); }

  ncclResult_t isend(void* comm, int64_t size, void* mhandle, void** request) override {
    if constexpr (kRow.intMessageSizes) {
      return t_->isend(comm, gBuffer, static_cast<int>(size), 0, mhandle, request);
    } else if constexpr (!kRow.profiler) {
      return t_->isend(comm, gBuffer, static_cast<size_t>(size), 0, mhandle, request);
    } else {
      return t_->isend(comm, gBuffer, static_cast<size_t>(size), 0, mhandle, nullptr, request);
    }
  }

  ncclResult_t irecv(void* comm, int n, const int64_t* sizes, void** mhandles,
                     void** request) override {
    void* data[kMaxGroupedRecvs + 1];
    int tags[kMaxGroupedRecvs + 1] = {};
    for (void*& d : data) d = gBuffer;
    if constexpr (kRow.intMessageSizes) {
      int narrow[kMaxGroupedRecvs + 1];
      for (int i = 0; i <= kMaxGroupedRecvs; i++) narrow[i] = static_cast<int>(sizes[i]);
      return t_->irecv(comm, n, data, narrow, tags, mhandles, request);
    } else {
      size_t wide[kMaxGroupedRecvs + 1];
      for (int i = 0; i <= kMaxGroupedRecvs; i++) wide[i] = static_cast<size_t>(sizes[i]);
      if constexpr (!kRow.profiler) {
        return t_->irecv(comm, n, data, wide, tags, mhandles, request);
      } else {
        return t_->irecv(comm, n, data, wide, tags, mhandles, nullptr, request);
      }
    }
  }
  ncclResult_t test(void* request, int* done, int* sizes) override {
    return t_->test(request, done, sizes);
  }
  void close(void* sendComm, void* recvComm) override {
    EXPECT_EQ(t_->closeSend(sendComm), ncclSuccess);
    EXPECT_EQ(t_->closeRecv(recvComm), ncclSuccess);
  }

 private:
  const Net* t_;
  void* ctx_ = nullptr;
};

// The host's import view over the SDK's table: v12 semantics, size_t sizes.
class ImportView final : public Side {
 public:
  ImportView(int version, const void* table)
      : view_(ncclnet::host::makeNetView(version, table,
                                         ncclnet::Logger(captureLogger, "NET/view"))) {}

  bool intRegMr() const override { return false; }
  bool intMessages() const override { return false; }
  ncclResult_t init() override {
    if (view_ == nullptr) return ncclInternalError;
    ncclNetCommConfig_v12_t config{trafficClass_};
    return view_->init(&ctx_, 7, &config, captureLogger, nullptr);
  }
  void finalize() override { EXPECT_EQ(view_->finalize(ctx_), ncclSuccess); }
  void connect(void** sendComm, void** recvComm) override {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listenComm = nullptr;
    ncclNetDeviceHandle_v12_t* dev = nullptr;
    ASSERT_EQ(view_->listen(ctx_, 0, handle, &listenComm), ncclSuccess);
    ASSERT_EQ(view_->connect(ctx_, 0, handle, sendComm, &dev), ncclSuccess);
    ASSERT_EQ(view_->accept(listenComm, recvComm, &dev), ncclSuccess);
    ASSERT_EQ(view_->closeListen(listenComm), ncclSuccess);
  }
  ncclResult_t regMr(void* comm, int64_t size, void** mhandle) override {
    return view_->regMr(comm, gBuffer, static_cast<size_t>(size), NCCL_PTR_HOST, mhandle);
  }
  ncclResult_t deregMr(void* comm, void* mhandle) override { return view_->deregMr(comm, mhandle); }
  ncclResult_t isend(void* comm, int64_t size, void* mhandle, void** request) override {
    return view_->isend(comm, gBuffer, static_cast<size_t>(size), 0, mhandle, nullptr, request);
  }
  ncclResult_t irecv(void* comm, int n, const int64_t* sizes, void** mhandles,
                     void** request) override {
    void* data[kMaxGroupedRecvs + 1];
    int tags[kMaxGroupedRecvs + 1] = {};
    size_t wide[kMaxGroupedRecvs + 1];
    for (int i = 0; i <= kMaxGroupedRecvs; i++) {
      data[i] = gBuffer;
      wide[i] = static_cast<size_t>(sizes[i]);
    }
    return view_->irecv(comm, n, data, wide, tags, mhandles, nullptr, request);
  }
  ncclResult_t test(void* request, int* done, int* sizes) override {
    return view_->test(request, done, sizes);
  }
  void close(void* sendComm, void* recvComm) override {
    EXPECT_EQ(view_->closeSend(sendComm), ncclSuccess);
    EXPECT_EQ(view_->closeRecv(recvComm), ncclSuccess);
  }

 private:
  std::unique_ptr<ncclnet::host::NetView> view_;
  void* ctx_ = nullptr;
};

std::unique_ptr<Side> rawTable(int version, const void* table) {
  return ncclnet::detail::withAbiVersion<std::unique_ptr<Side>>(version, [&](auto v) {
    return std::unique_ptr<Side>(std::make_unique<RawTable<decltype(v)::value>>(table));
  });
}

// The probe, and the checker around it, loaded once per process: the
// checker loads the plugin NCCLNET_CHECK_PLUGIN names when it is loaded.
void* library(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  return handle;
}
void* probeLibrary() {
  static void* handle = library(NCCLNET_PROBE_PLUGIN);
  return handle;
}
void* checkerLibrary() {
  static void* handle = [] {
    setenv("NCCLNET_CHECK_PLUGIN", NCCLNET_PROBE_PLUGIN, 1);
    return library(NCCLNET_CHECK_LIBRARY);
  }();
  return handle;
}
const void* table(void* lib, int version) {
  std::string symbol = "ncclNetPlugin_v" + std::to_string(version);
  return lib != nullptr ? dlsym(lib, symbol.c_str()) : nullptr;
}

enum class Kind { Export, Import, Checker };
struct Param {
  int version;
  Kind kind;
};
std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  const char* kind = info.param.kind == Kind::Export   ? "export"
                     : info.param.kind == Kind::Import ? "import"
                                                       : "checker";
  return std::string(kind) + "_v" + std::to_string(info.param.version);
}

int warnLines() {
  int count = 0;
  for (const auto& line : ncclnet::host::takeCapturedLines()) {
    if (line.level == NCCL_LOG_WARN) count++;
  }
  return count;
}

std::unique_ptr<Side> makeSide(const Param& param) {
  const int v = param.version;
  switch (param.kind) {
    case Kind::Export: return rawTable(v, table(probeLibrary(), v));
    case Kind::Import: return std::make_unique<ImportView>(v, table(probeLibrary(), v));
    case Kind::Checker: return rawTable(v, table(checkerLibrary(), v));
  }
  return nullptr;
}

class AbiEdge : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const int v = GetParam().version;
    ASSERT_NE(table(GetParam().kind == Kind::Checker ? checkerLibrary() : probeLibrary(), v),
              nullptr);
    side_ = makeSide(GetParam());
    ASSERT_EQ(side_->init(), ncclSuccess);
    side_->connect(&sendComm_, &recvComm_);
    ASSERT_NE(sendComm_, nullptr);
    ASSERT_NE(recvComm_, nullptr);
    ASSERT_EQ(side_->regMr(sendComm_, 1, &sendMr_), ncclSuccess);
    ASSERT_EQ(side_->regMr(recvComm_, 1, &recvMr_), ncclSuccess);
    ncclnet::host::clearCapturedLines();
  }
  void TearDown() override {
    if (sendComm_ == nullptr || recvComm_ == nullptr) return;
    EXPECT_EQ(side_->deregMr(sendComm_, sendMr_), ncclSuccess);
    EXPECT_EQ(side_->deregMr(recvComm_, recvMr_), ncclSuccess);
    side_->close(sendComm_, recvComm_);
    side_->finalize();
  }

  const AbiVersion& row() const { return abiVersion(GetParam().version); }
  ProbeComm& sent() { return *static_cast<ProbeComm*>(sendComm_); }
  ProbeComm& received() { return *static_cast<ProbeComm*>(recvComm_); }
  // A value an int argument cannot carry is not a call NCCL could make.
  bool fits(int64_t value, bool intArgument) const {
    return !intArgument || (value >= INT_MIN && value <= INT_MAX);
  }

  // A refusal: ncclInternalError, one WARN line, the plugin not called.
  void expectRefused(ncclResult_t res, int callsBefore, const ProbeComm& comm,
                     const std::string& what) {
    EXPECT_EQ(res, ncclInternalError) << what;
    EXPECT_EQ(warnLines(), 1) << what;
    EXPECT_EQ(comm.calls, callsBefore) << what << ": reached the plugin";
  }
  void complete(void* request, bool recv) {
    ASSERT_NE(request, nullptr);
    int done = 0;
    int sizes[kMaxGroupedRecvs] = {};
    ASSERT_EQ(side_->test(request, &done, recv ? sizes : nullptr), ncclSuccess);
    EXPECT_EQ(done, 1);
  }

  std::unique_ptr<Side> side_;
  void* sendComm_ = nullptr;
  void* recvComm_ = nullptr;
  void* sendMr_ = nullptr;
  void* recvMr_ = nullptr;
};

TEST_P(AbiEdge, RegMrSizes) {
  for (int64_t size : kSizes) {
    if (!fits(size, side_->intRegMr())) continue;
    const std::string what = "regMr size " + std::to_string(size);
    const int before = sent().calls;
    void* mhandle = nullptr;
    ncclResult_t res = side_->regMr(sendComm_, size, &mhandle);
    if (passes(size, row().maxRegMrSize, side_->intRegMr())) {
      ASSERT_EQ(res, ncclSuccess) << what;
      EXPECT_EQ(sent().calls, before + 1) << what;
      EXPECT_EQ(sent().size, static_cast<size_t>(size)) << what;
      EXPECT_EQ(side_->deregMr(sendComm_, mhandle), ncclSuccess);
      warnLines();
    } else {
      expectRefused(res, before, sent(), what);
    }
  }
}

TEST_P(AbiEdge, IsendSizes) {
  for (int64_t size : kSizes) {
    if (!fits(size, side_->intMessages())) continue;
    const std::string what = "isend size " + std::to_string(size);
    const int before = sent().calls;
    void* request = nullptr;
    ncclResult_t res = side_->isend(sendComm_, size, sendMr_, &request);
    if (passes(size, row().maxMessageSize, side_->intMessages())) {
      ASSERT_EQ(res, ncclSuccess) << what;
      EXPECT_EQ(sent().calls, before + 1) << what;
      EXPECT_EQ(sent().size, static_cast<size_t>(size)) << what;
      complete(request, false);
      warnLines();
    } else {
      expectRefused(res, before, sent(), what);
    }
  }
}

TEST_P(AbiEdge, IrecvSizes) {
  void* mhandles[kMaxGroupedRecvs + 1];
  for (void*& m : mhandles) m = recvMr_;
  for (int64_t size : kSizes) {
    if (!fits(size, side_->intMessages())) continue;
    const std::string what = "irecv size " + std::to_string(size);
    int64_t sizes[kMaxGroupedRecvs + 1];
    for (int64_t& s : sizes) s = 1;
    sizes[1] = size;  // the second of two, so a check of the first alone misses it
    const int before = received().calls;
    void* request = nullptr;
    ncclResult_t res = side_->irecv(recvComm_, 2, sizes, mhandles, &request);
    if (passes(size, row().maxMessageSize, side_->intMessages())) {
      ASSERT_EQ(res, ncclSuccess) << what;
      EXPECT_EQ(received().calls, before + 1) << what;
      EXPECT_EQ(received().sizes[1], static_cast<size_t>(size)) << what;
      complete(request, true);
      warnLines();
    } else {
      expectRefused(res, before, received(), what);
    }
  }
}

TEST_P(AbiEdge, IrecvCounts) {
  void* mhandles[kMaxGroupedRecvs + 1];
  for (void*& m : mhandles) m = recvMr_;
  int64_t sizes[kMaxGroupedRecvs + 1];
  for (int64_t& s : sizes) s = 1;
  for (int n : kCounts) {
    const std::string what = "irecv n " + std::to_string(n);
    const int before = received().calls;
    void* request = nullptr;
    ncclResult_t res = side_->irecv(recvComm_, n, sizes, mhandles, &request);
    if (passesCount(row(), n)) {
      ASSERT_EQ(res, ncclSuccess) << what;
      EXPECT_EQ(received().calls, before + 1) << what;
      EXPECT_EQ(received().n, n) << what;
      complete(request, true);
      warnLines();
    } else {
      expectRefused(res, before, received(), what);
    }
  }
}

// The traffic class reaches the plugin from every version that carries one
// (v10's connect, v11's init; the view's init for any version): the
// checker's v10 table passes it on as the SDK's own does.
TEST_P(AbiEdge, TrafficClass) {
  constexpr int kClass = 3;
  std::unique_ptr<Side> side = makeSide(GetParam());
  side->setTrafficClass(kClass);
  ASSERT_EQ(side->init(), ncclSuccess);
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  side->connect(&sendComm, &recvComm);
  ASSERT_NE(sendComm, nullptr);
  const bool carried = row().connectConfig || row().perCommInit;
  EXPECT_EQ(static_cast<ProbeComm*>(sendComm)->trafficClass,
            carried ? kClass : NCCL_NET_TRAFFIC_CLASS_UNDEF);
  side->close(sendComm, recvComm);
  side->finalize();
}

std::vector<Param> everySide() {
  std::vector<Param> params;
  for (const AbiVersion& abi : ncclnet::detail::kAbiVersions) {
    for (Kind kind : {Kind::Export, Kind::Import, Kind::Checker}) {
      params.push_back({abi.version, kind});
    }
  }
  return params;
}
INSTANTIATE_TEST_SUITE_P(EveryVersion, AbiEdge, ::testing::ValuesIn(everySide()), paramName);

// The rows say what NCCL's compat layer does (src/plugin/net/net_v<N>.cc in
// NCCL 2.28 and 2.30): written out here once more, from the NCCL source
// rather than from the table, so that a wrong row fails.
TEST(AbiRows, SayWhatNcclSays) {
  for (const AbiVersion& abi : ncclnet::detail::kAbiVersions) {
    SCOPED_TRACE("v" + std::to_string(abi.version));
    const bool intSizes = abi.version <= 8;  // ncclNet_isend: size > MAX_NET_SIZE
    EXPECT_EQ(abi.maxMessageSize, intSizes ? size_t{1} << 30 : SIZE_MAX);
    const bool intRegMr = abi.version <= 7;  // ncclNet_regMr: size >= 1UL << 31
    EXPECT_EQ(abi.maxRegMrSize, intRegMr ? (size_t{1} << 31) - 1 : SIZE_MAX);
    EXPECT_EQ(abi.boundsRecvCount, intSizes);  // sizesInt[NCCL_PROXY_MAX_SUBS]
    EXPECT_EQ(abi.connectConfig, abi.version == 10);
    EXPECT_EQ(abi.perCommInit, abi.version >= 11);
  }
  EXPECT_EQ(kMaxGroupedRecvs, 64);  // MAXCHANNELS
}

}  // namespace
