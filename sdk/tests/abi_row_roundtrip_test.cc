// SPDX-License-Identifier: Apache-2.0
// Export -> import round trip for every ABI version row, and for "v99", a
// version row this test adds on its own: v8's table shape with one changed
// limit (isend/irecv sizes up to 1 MiB instead of 1 GiB). v99 is added here
// by a row (kAbi<99>) and its C types (AbiTypes<99>) and nothing else: the
// SDK's export table (export_tables.hpp over net_table.hpp) and the host's
// import view (imported_net.hpp) are built from the row alone, and both
// must apply the row's limits. For each version, the table the SDK exports
// for a recording plugin is imported back and driven at the edges of the
// row's limits: a size inside them reaches the plugin unchanged, one
// outside is refused (ncclInternalError, one WARN line) before the plugin.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ncclnet/detail/abi_versions.hpp"

namespace ncclnet::detail {
template <>
struct AbiTypes<99> {
  using Net = ncclNet_v8_t;
  using Props = ncclNetProperties_v8_t;
};
// clang-format off
template <>
inline constexpr AbiVersion kAbi<99> =
  // v NCCL intMsg maxMessageSize  intReg maxRegMrSize          boundN devH  vdev   prof   cfg    perComm
  {99, 99, true,  size_t{1} << 20, false, abi_rows::kUnbounded, true,  true, false, false, false, false};
// clang-format on
}  // namespace ncclnet::detail

#include "ncclnet/host/imported_net.hpp"
#include "ncclnet/host/log_capture.hpp"
#include "ncclnet/plugin.hpp"

namespace {

using ncclnet::detail::AbiVersion;
using ncclnet::detail::kAbi;
using ncclnet::host::captureLogger;

constexpr size_t kGiB = size_t{1} << 30;
constexpr size_t kMiB = size_t{1} << 20;

// What reached the plugin through one comm.
struct RecordingComm {
  int calls = 0;
  size_t size = 0;
  int n = 0;
};
struct RecordingRequest {
  int n;
};

char kDeviceName[] = "rec0";
char kPciPath[] = "/sys/devices/virtual/net/lo";

RecordingComm* rec(void* comm) {
  return static_cast<RecordingComm*>(comm);
}

class RecordingNet {
 public:
  static constexpr const char* kName = "sdk-row-recorder";
  static ncclResult_t create(const ncclnet::InitArgs&, std::unique_ptr<RecordingNet>* out) {
    *out = std::make_unique<RecordingNet>();
    return ncclSuccess;
  }
  ncclResult_t devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }
  ncclResult_t getProperties(int, ncclNetProperties_v12_t* props) {
    props->name = kDeviceName;
    props->pciPath = kPciPath;
    props->ptrSupport = NCCL_PTR_HOST;
    props->speed = 1234;
    props->maxComms = 1024;
    props->maxRecvs = ncclnet::kMaxGroupedRecvs;
    return ncclSuccess;
  }
  ncclResult_t listen(const ncclnet::CommContext&, int, void*, void** listenComm) {
    *listenComm = new RecordingComm;
    return ncclSuccess;
  }
  ncclResult_t connect(const ncclnet::CommContext&, int, void*, void** sendComm,
                       ncclNetDeviceHandle_v12_t**) {
    *sendComm = new RecordingComm;
    return ncclSuccess;
  }
  ncclResult_t accept(void*, void** recvComm, ncclNetDeviceHandle_v12_t**) {
    *recvComm = new RecordingComm;
    return ncclSuccess;
  }
  ncclResult_t regMr(void* comm, void*, size_t size, int, void** mhandle) {
    rec(comm)->calls++;
    rec(comm)->size = size;
    *mhandle = comm;
    return ncclSuccess;
  }
  ncclResult_t deregMr(void*, void*) { return ncclSuccess; }
  ncclResult_t isend(void* comm, void*, size_t size, int, void*, void*, void** request) {
    rec(comm)->calls++;
    rec(comm)->size = size;
    *request = new RecordingRequest{1};
    return ncclSuccess;
  }
  ncclResult_t irecv(void* comm, int n, void**, size_t* sizes, int*, void**, void**,
                     void** request) {
    rec(comm)->calls++;
    rec(comm)->n = n;
    rec(comm)->size = n > 0 ? sizes[0] : 0;
    *request = new RecordingRequest{n > 0 ? n : 1};
    return ncclSuccess;
  }
  ncclResult_t iflush(void*, int, void**, int*, void**, void** request) {
    *request = nullptr;
    return ncclSuccess;
  }
  ncclResult_t test(void* request, int* done, int* sizes) {
    std::unique_ptr<RecordingRequest> r(static_cast<RecordingRequest*>(request));
    *done = 1;
    for (int i = 0; sizes != nullptr && i < r->n; i++) sizes[i] = 0;
    return ncclSuccess;
  }
  ncclResult_t closeSend(void* comm) { return close(comm); }
  ncclResult_t closeRecv(void* comm) { return close(comm); }
  ncclResult_t closeListen(void* comm) { return close(comm); }

 private:
  static ncclResult_t close(void* comm) {
    delete rec(comm);
    return ncclSuccess;
  }
};
NCCLNET_CHECK_PLUGIN_CONTRACT(RecordingNet)

// The table the SDK exports for RecordingNet as version V, as
// NCCLNET_EXPORT_PLUGIN defines it (constant-initialised).
template <int V>
const typename ncclnet::detail::AbiTypes<V>::Net& exported() {
  static constexpr typename ncclnet::detail::AbiTypes<V>::Net table =
      ncclnet::detail::Tables<RecordingNet>::template table<V>();
  return table;
}

template <class T>
class AbiRowRoundTrip : public ::testing::Test {};

#define ROW_TYPE(unused, N) std::integral_constant<int, N>,
using EveryRow =
    ::testing::Types<NCCLNET_ABI_FOR_EACH_VERSION(ROW_TYPE, ~) std::integral_constant<int, 99>>;
#undef ROW_TYPE
struct RowName {
  template <class T>
  static std::string GetName(int) {
    return "v" + std::to_string(T::value);
  }
};
TYPED_TEST_SUITE(AbiRowRoundTrip, EveryRow, RowName);

// The sizes a test feeds, around every limit a row may carry.
std::vector<size_t> edgeSizes() {
  return {0, 1, kMiB, kMiB + 1, kGiB, kGiB + 1, size_t{INT_MAX}, size_t{INT_MAX} + 1};
}

TYPED_TEST(AbiRowRoundTrip, ExportedTableImportsBackWithTheRowsLimits) {
  constexpr int V = TypeParam::value;
  constexpr AbiVersion row = kAbi<V>;
  const auto& table = exported<V>();
  ASSERT_STREQ(table.name, RecordingNet::kName);

  ncclnet::host::ImportedNet<V> view(&table, ncclnet::Logger(captureLogger, "NET/test"));
  EXPECT_EQ(view.version(), V);
  EXPECT_STREQ(view.name(), RecordingNet::kName);
  EXPECT_FALSE(view.provides(ncclnet::host::Optional::RegMrDmaBuf));

  void* ctx = nullptr;
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ASSERT_EQ(view.init(&ctx, 1, &config, captureLogger, nullptr), ncclSuccess);
  int ndev = 0;
  ASSERT_EQ(view.devices(&ndev), ncclSuccess);
  EXPECT_EQ(ndev, 1);
  ncclNetProperties_v12_t props{};
  ASSERT_EQ(view.getProperties(0, &props), ncclSuccess);
  EXPECT_STREQ(props.name, kDeviceName);
  EXPECT_EQ(props.speed, 1234);
  EXPECT_EQ(props.maxRecvs, ncclnet::kMaxGroupedRecvs);

  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  ncclNetDeviceHandle_v12_t* devHandle = nullptr;
  ASSERT_EQ(view.listen(ctx, 0, handle, &listenComm), ncclSuccess);
  ASSERT_EQ(view.connect(ctx, 0, handle, &sendComm, &devHandle), ncclSuccess);
  ASSERT_EQ(view.accept(listenComm, &recvComm, &devHandle), ncclSuccess);
  ASSERT_EQ(view.closeListen(listenComm), ncclSuccess);

  static char buffer[64];
  for (size_t size : edgeSizes()) {
    SCOPED_TRACE("size " + std::to_string(size));
    // regMr: the row's regMr limit, through the view.
    {
      const int before = rec(sendComm)->calls;
      void* mhandle = nullptr;
      ncclnet::host::clearCapturedLines();
      const ncclResult_t res = view.regMr(sendComm, buffer, size, NCCL_PTR_HOST, &mhandle);
      if (size <= row.maxRegMrSize) {
        ASSERT_EQ(res, ncclSuccess);
        EXPECT_EQ(rec(sendComm)->calls, before + 1);
        EXPECT_EQ(rec(sendComm)->size, size);
        EXPECT_EQ(view.deregMr(sendComm, mhandle), ncclSuccess);
      } else {
        EXPECT_EQ(res, ncclInternalError);
        EXPECT_EQ(rec(sendComm)->calls, before);
        EXPECT_EQ(ncclnet::host::countCaptured(NCCL_LOG_WARN, "regMr"), 1);
      }
    }
    // isend: the row's message limit, through the view.
    {
      const int before = rec(sendComm)->calls;
      void* request = nullptr;
      ncclnet::host::clearCapturedLines();
      const ncclResult_t res = view.isend(sendComm, buffer, size, 0, nullptr, nullptr, &request);
      if (size <= row.maxMessageSize) {
        ASSERT_EQ(res, ncclSuccess);
        EXPECT_EQ(rec(sendComm)->calls, before + 1);
        EXPECT_EQ(rec(sendComm)->size, size);
        int done = 0;
        EXPECT_EQ(view.test(request, &done, nullptr), ncclSuccess);
        EXPECT_EQ(done, 1);
      } else {
        EXPECT_EQ(res, ncclInternalError);
        EXPECT_EQ(rec(sendComm)->calls, before);
        EXPECT_EQ(ncclnet::host::countCaptured(NCCL_LOG_WARN, "isend"), 1);
      }
    }
    // irecv of one buffer: the same limit.
    {
      const int before = rec(recvComm)->calls;
      void* data[1] = {buffer};
      size_t sizes[1] = {size};
      int tags[1] = {0};
      void* mhandles[1] = {nullptr};
      void* request = nullptr;
      const ncclResult_t res =
          view.irecv(recvComm, 1, data, sizes, tags, mhandles, nullptr, &request);
      if (size <= row.maxMessageSize) {
        ASSERT_EQ(res, ncclSuccess);
        EXPECT_EQ(rec(recvComm)->calls, before + 1);
        EXPECT_EQ(rec(recvComm)->size, size);
        int done = 0;
        int got[1] = {-1};
        EXPECT_EQ(view.test(request, &done, got), ncclSuccess);
        EXPECT_EQ(done, 1);
      } else {
        EXPECT_EQ(res, ncclInternalError);
        EXPECT_EQ(rec(recvComm)->calls, before);
      }
    }
  }

  // The export side refuses what NCCL's compat layer never hands an
  // int-size table: called raw, as NCCL's shim would, past the row's limit.
  if constexpr (row.intMessageSizes) {
    const int before = rec(sendComm)->calls;
    void* request = nullptr;
    const int sizes[] = {-1, static_cast<int>(row.maxMessageSize) + 1};
    for (int size : sizes) {
      EXPECT_EQ(table.isend(sendComm, buffer, size, 0, nullptr, &request), ncclInternalError)
          << size;
    }
    EXPECT_EQ(
        table.isend(sendComm, buffer, static_cast<int>(row.maxMessageSize), 0, nullptr, &request),
        ncclSuccess);
    EXPECT_EQ(rec(sendComm)->calls, before + 1);
    EXPECT_EQ(rec(sendComm)->size, row.maxMessageSize);
    int done = 0;
    EXPECT_EQ(table.test(request, &done, nullptr), ncclSuccess);
  }

  EXPECT_EQ(view.closeSend(sendComm), ncclSuccess);
  EXPECT_EQ(view.closeRecv(recvComm), ncclSuccess);
  EXPECT_EQ(view.finalize(ctx), ncclSuccess);
}

// The fake row is a different version of the same shape: NCCL's rule for
// v8 (1 GiB) and the test's for v99 (1 MiB) hold side by side.
TEST(AbiRowRoundTripFake, TheFakeRowChangesOnlyItsLimit) {
  static_assert(std::is_same_v<decltype(exported<99>()), decltype(exported<8>())>);
  EXPECT_EQ(kAbi<99>.maxMessageSize, kMiB);
  EXPECT_EQ(kAbi<8>.maxMessageSize, kGiB);
  EXPECT_EQ(exported<99>().isend, &ncclnet::detail::Exports<RecordingNet>::isendInt<99>);
  EXPECT_EQ(exported<8>().isend, &ncclnet::detail::Exports<RecordingNet>::isendInt<8>);
}

}  // namespace
