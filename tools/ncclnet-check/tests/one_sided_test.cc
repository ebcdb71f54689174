// SPDX-License-Identifier: Apache-2.0
// The checker's one-sided tables (ncclRmaPlugin_v14, ncclGinPlugin_v11),
// driven through the checker's exported symbols as NCCL drives them: around
// sdk-rma-defects, each defect draws its rule's line and the correct engine
// draws none; around sdk-socket's real RMA and GIN tables, none either.
// The checker reads its environment when it is loaded: ctest runs each
// test in a process of its own.
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"
#include "ncclnet/host/log_capture.hpp"

namespace {

using ncclnet::host::captureLogger;
using ncclnet::host::countCaptured;

constexpr const char* kRule70 = "NET/check rule 70 RmaTableComplete";
constexpr const char* kRule76 = "NET/check rule 76 RmaRequestsReturned";

int lines(const char* needle) {
  return countCaptured(NCCL_LOG_WARN, needle);
}
int violations() {
  return countCaptured(NCCL_LOG_WARN, "NET/check rule ");
}
std::string allLines() {
  std::string text;
  for (const auto& line : ncclnet::host::capturedLines()) text += line.text + "\n";
  return text;
}

class OneSided : public ::testing::Test {
 protected:
  void SetUp() override { ncclnet::host::clearCapturedLines(); }
  void TearDown() override {
    if (lib_ != nullptr) dlclose(lib_);
  }

  // The checker around `plugin`, with NCCLNET_RMA_DEFECT=`defect`.
  void load(const char* plugin, const char* defect = "none") {
    setenv("NCCLNET_CHECK_PLUGIN", plugin, 1);
    setenv("NCCLNET_RMA_DEFECT", defect, 1);
    lib_ = dlopen(NCCLNET_CHECK_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    rma_ = static_cast<ncclRma_v14_t*>(dlsym(lib_, "ncclRmaPlugin_v14"));
    gin_ = static_cast<ncclGin_v11_t*>(dlsym(lib_, "ncclGinPlugin_v11"));
    rma13_ = static_cast<ncclGin_v13_t*>(dlsym(lib_, "ncclRmaPlugin_v13"));
    gin13_ = static_cast<ncclGin_v13_t*>(dlsym(lib_, "ncclGinPlugin_v13"));
    ASSERT_NE(rma_, nullptr);
    ASSERT_NE(gin_, nullptr);
    ASSERT_NE(rma13_, nullptr);
    ASSERT_NE(gin13_, nullptr);
  }

  // One rank: init, every device's properties, a collComm, one context and
  // three registrations (source, destination, signal word).
  void openRma() {
    ASSERT_EQ(rma_->init(&ctx_, 1, captureLogger), ncclSuccess);
    int ndev = 0;
    ASSERT_EQ(rma_->devices(&ndev), ncclSuccess);
    for (int d = 0; d < ndev; d++) {
      ncclNetProperties_v12_t props{};
      ASSERT_EQ(rma_->getProperties(d, &props), ncclSuccess);
    }
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    ASSERT_EQ(rma_->listen(ctx_, 0, handle, &listen_), ncclSuccess);
    void* handles[1] = {handle};
    ASSERT_EQ(rma_->connect(ctx_, handles, 1, 0, listen_, &coll_), ncclSuccess);
    ncclRmaConfig_v14_t config{1, -1, 1};
    ASSERT_EQ(rma_->createContext(coll_, &config, &rmaCtx_), ncclSuccess);
    ASSERT_EQ(rma_->regMrSym(coll_, src_, sizeof(src_), NCCL_PTR_HOST, 0, &srcMr_), ncclSuccess);
    ASSERT_EQ(rma_->regMrSym(coll_, dst_, sizeof(dst_), NCCL_PTR_HOST, 0, &dstMr_), ncclSuccess);
    ASSERT_EQ(rma_->regMrSym(coll_, &signal_, sizeof(signal_), NCCL_PTR_HOST, 0, &signalMr_),
              ncclSuccess);
  }
  void closeRma() {
    EXPECT_EQ(rma_->deregMrSym(coll_, srcMr_), ncclSuccess);
    EXPECT_EQ(rma_->deregMrSym(coll_, dstMr_), ncclSuccess);
    EXPECT_EQ(rma_->deregMrSym(coll_, signalMr_), ncclSuccess);
    EXPECT_EQ(rma_->destroyContext(rmaCtx_), ncclSuccess);
    EXPECT_EQ(rma_->closeColl(coll_), ncclSuccess);
    EXPECT_EQ(rma_->closeListen(listen_), ncclSuccess);
    EXPECT_EQ(rma_->finalize(ctx_), ncclSuccess);
  }
  // Tests each request until done (5 s at most each).
  template <class Table>
  void waitAll(Table* table, std::vector<void*>* requests) {
    for (void* request : *requests) {
      int done = 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!done && std::chrono::steady_clock::now() < deadline) {
        ASSERT_EQ(table->test(coll_, request, &done), ncclSuccess);
      }
      ASSERT_TRUE(done) << "request not done";
    }
    requests->clear();
  }
  // `n` puts to rank 0 outstanding at once, then every one tested; the
  // results of the posts.
  std::vector<ncclResult_t> rmaPuts(int n) {
    std::vector<ncclResult_t> results;
    std::vector<void*> requests;
    for (int i = 0; i < n; i++) {
      void* request = nullptr;
      ncclResult_t res = rma_->iput(rmaCtx_, 0, i % 64, srcMr_, 8, i % 64, dstMr_, 0, &request);
      results.push_back(res);
      if (res == ncclSuccess && request != nullptr) requests.push_back(request);
    }
    waitAll(rma_, &requests);
    return results;
  }
  // One of each data call, each tested to the end.
  void rmaEachCall() {
    std::vector<void*> requests(3, nullptr);
    ASSERT_EQ(rma_->iput(rmaCtx_, 0, 0, srcMr_, 64, 0, dstMr_, 0, &requests[0]), ncclSuccess);
    ASSERT_EQ(rma_->iputSignal(rmaCtx_, 0, 0, srcMr_, 64, 64, dstMr_, 0, 0, signalMr_, 0,
                               NCCL_NET_SIGNAL_OP_INC, true, &requests[1]),
              ncclSuccess);
    ASSERT_EQ(rma_->iget(rmaCtx_, 0, 0, dstMr_, 64, 128, srcMr_, 0, &requests[2]), ncclSuccess);
    void* flush = nullptr;
    ASSERT_EQ(rma_->iflush(rmaCtx_, 0, srcMr_, 0, &flush), ncclSuccess);
    if (flush != nullptr) requests.push_back(flush);
    requests.erase(std::remove(requests.begin(), requests.end(), nullptr), requests.end());
    waitAll(rma_, &requests);
  }

  void openGin() {
    ASSERT_EQ(gin_->init(&ctx_, 1, captureLogger), ncclSuccess);
    ncclNetProperties_v11_t props{};
    ASSERT_EQ(gin_->getProperties(0, &props), ncclSuccess);
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    ASSERT_EQ(gin_->listen(ctx_, 0, handle, &listen_), ncclSuccess);
    void* handles[1] = {handle};
    ASSERT_EQ(gin_->connect(ctx_, handles, 1, 0, listen_, &coll_), ncclSuccess);
    void* ginHandle = nullptr;
    ASSERT_EQ(gin_->regMrSym(coll_, src_, sizeof(src_), NCCL_PTR_HOST, 0, &srcMr_, &ginHandle),
              ncclSuccess);
    ASSERT_EQ(gin_->regMrSym(coll_, dst_, sizeof(dst_), NCCL_PTR_HOST, 0, &dstMr_, &ginHandle),
              ncclSuccess);
  }
  void closeGin() {
    EXPECT_EQ(gin_->deregMrSym(coll_, srcMr_), ncclSuccess);
    EXPECT_EQ(gin_->deregMrSym(coll_, dstMr_), ncclSuccess);
    EXPECT_EQ(gin_->closeColl(coll_), ncclSuccess);
    EXPECT_EQ(gin_->closeListen(listen_), ncclSuccess);
    EXPECT_EQ(gin_->finalize(ctx_), ncclSuccess);
  }
  std::vector<ncclResult_t> ginPuts(int n) {
    std::vector<ncclResult_t> results;
    std::vector<void*> requests;
    for (int i = 0; i < n; i++) {
      void* request = nullptr;
      ncclResult_t res = gin_->iput(coll_, i % 64, srcMr_, 8, i % 64, dstMr_, 0, &request);
      results.push_back(res);
      if (res == ncclSuccess && request != nullptr) requests.push_back(request);
    }
    waitAll(gin_, &requests);
    return results;
  }

  // The v13 layout (ncclRmaPlugin_v13 or ncclGinPlugin_v13): a session as
  // openRma's, then one of each data call and `puts` puts outstanding at
  // once, each tested to the end; counts the data calls that failed.
  void v13Session(ncclGin_v13_t* t, int puts, int* failed) {
    ASSERT_EQ(t->init(&ctx_, 1, captureLogger), ncclSuccess);
    ncclNetProperties_v12_t props{};
    ASSERT_EQ(t->getProperties(0, &props), ncclSuccess);
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    ASSERT_EQ(t->listen(ctx_, 0, handle, &listen_), ncclSuccess);
    void* handles[1] = {handle};
    ASSERT_EQ(t->connect(ctx_, handles, 1, 0, listen_, &coll_), ncclSuccess);
    ncclGinConfig_v13_t config{0, 0, 1, 0, -1};
    ncclNetDeviceHandle_v11_t* devHandle = nullptr;
    ASSERT_EQ(t->createContext(coll_, &config, &rmaCtx_, &devHandle), ncclSuccess);
    void* ginHandle = nullptr;
    ASSERT_EQ(t->regMrSym(coll_, src_, sizeof(src_), NCCL_PTR_HOST, 0, &srcMr_, &ginHandle),
              ncclSuccess);
    ASSERT_EQ(t->regMrSym(coll_, dst_, sizeof(dst_), NCCL_PTR_HOST, 0, &dstMr_, &ginHandle),
              ncclSuccess);
    ASSERT_EQ(
        t->regMrSym(coll_, &signal_, sizeof(signal_), NCCL_PTR_HOST, 0, &signalMr_, &ginHandle),
        ncclSuccess);
    std::vector<void*> requests(3, nullptr);
    *failed = 0;
    *failed += t->iput(rmaCtx_, 0, 0, srcMr_, 64, 0, dstMr_, 0, &requests[0]) != ncclSuccess;
    *failed += t->iputSignal(rmaCtx_, 0, 0, srcMr_, 64, 64, dstMr_, 0, 0, signalMr_, 0,
                             NCCL_NET_SIGNAL_OP_INC, &requests[1]) != ncclSuccess;
    *failed += t->iget(rmaCtx_, 0, 0, dstMr_, 64, 128, srcMr_, 0, &requests[2]) != ncclSuccess;
    for (int i = 0; i < puts; i++) {
      void* request = nullptr;
      *failed += t->iput(rmaCtx_, 0, i % 64, srcMr_, 8, i % 64, dstMr_, 0, &request) != ncclSuccess;
      requests.push_back(request);
    }
    void* flush = nullptr;
    ASSERT_EQ(t->iflush(rmaCtx_, 0, srcMr_, 0, &flush), ncclSuccess);
    requests.push_back(flush);
    requests.erase(std::remove(requests.begin(), requests.end(), nullptr), requests.end());
    waitAll(t, &requests);
    EXPECT_EQ(t->deregMrSym(coll_, srcMr_), ncclSuccess);
    EXPECT_EQ(t->deregMrSym(coll_, dstMr_), ncclSuccess);
    EXPECT_EQ(t->deregMrSym(coll_, signalMr_), ncclSuccess);
    EXPECT_EQ(t->destroyContext(rmaCtx_), ncclSuccess);
    EXPECT_EQ(t->closeColl(coll_), ncclSuccess);
    EXPECT_EQ(t->closeListen(listen_), ncclSuccess);
    EXPECT_EQ(t->finalize(ctx_), ncclSuccess);
  }

  void* lib_ = nullptr;
  ncclGin_v13_t* rma13_ = nullptr;
  ncclGin_v13_t* gin13_ = nullptr;
  ncclRma_v14_t* rma_ = nullptr;
  ncclGin_v11_t* gin_ = nullptr;
  void* ctx_ = nullptr;
  void* listen_ = nullptr;
  void* coll_ = nullptr;
  void* rmaCtx_ = nullptr;
  void* srcMr_ = nullptr;
  void* dstMr_ = nullptr;
  void* signalMr_ = nullptr;
  char src_[4096] = {};
  char dst_[4096] = {};
  uint64_t signal_ = 0;
};

// ---- the tables themselves ---------------------------------------------------

TEST_F(OneSided, TablesAreTheCheckersWithTheWrappedNameAndSlots) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN);
  void* inner = dlopen(NCCLNET_RMA_DEFECTS_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(inner, nullptr) << dlerror();
  auto* own = static_cast<ncclRma_v14_t*>(dlsym(inner, "ncclRmaPlugin_v14"));
  ASSERT_NE(own, nullptr);
  EXPECT_NE(rma_, own);  // judged, not forwarded
  EXPECT_STREQ(rma_->name, own->name);
  EXPECT_EQ(rma_->regMrSymDmaBuf, nullptr);  // NULL in the wrapped table
  EXPECT_EQ(rma_->rmaProgress, nullptr);
  EXPECT_NE(rma_->iput, nullptr);
  dlclose(inner);
}

TEST_F(OneSided, CorrectEngineDrawsNothing) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN);
  openRma();
  rmaEachCall();
  // The whole queue NCCL may fill (32 x maxRecvs), outstanding at once.
  for (ncclResult_t res : rmaPuts(32)) EXPECT_EQ(res, ncclSuccess);
  closeRma();
  EXPECT_EQ(violations(), 0) << allLines();
  // The registrations of the closed collComm, in order (rule 71, shown).
  EXPECT_EQ(countCaptured(NCCL_LOG_INFO,
                          "ncclRmaPlugin_v14 collComm #1 (rank 0 of 1, dev 0): 3 symmetric "
                          "registration(s), in order: m=1 4096 B type 1 flags 0x0, m=2 4096 B "
                          "type 1 flags 0x0, m=3 8 B type 1 flags 0x0"),
            1)
      << allLines();
}

// ---- rule 76 -------------------------------------------------------------------

TEST_F(OneSided, NullRequestIsRule76) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "null-request");
  openRma();
  rmaPuts(1);
  closeRma();
  EXPECT_EQ(lines(kRule76), 1) << allLines();
  EXPECT_EQ(lines("iput returned ncclSuccess with a NULL request"), 1) << allLines();
}

TEST_F(OneSided, NullFlushRequestIsLegal) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN);  // iflush answers NULL
  openRma();
  void* flush = reinterpret_cast<void*>(0x1);
  ASSERT_EQ(rma_->iflush(rmaCtx_, 0, srcMr_, 0, &flush), ncclSuccess);
  EXPECT_EQ(flush, nullptr);
  closeRma();
  EXPECT_EQ(violations(), 0) << allLines();
}

TEST_F(OneSided, RefusalBelowTheLimitIsRule76) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "refuse-at=4");
  openRma();
  std::vector<ncclResult_t> results = rmaPuts(6);
  EXPECT_EQ(results[4], ncclInternalError);
  closeRma();
  // The 5th and the 6th puts, each refused with 4 outstanding.
  EXPECT_EQ(lines(kRule76), 2) << allLines();
  EXPECT_EQ(lines("iput returned 3 with 4 of 32 requests (32 x maxRecvs) outstanding"), 2)
      << allLines();
}

TEST_F(OneSided, RefusalAtTheLimitIsNotJudged) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "refuse-at=32");
  openRma();
  std::vector<ncclResult_t> results = rmaPuts(33);
  EXPECT_EQ(results[32], ncclInternalError);
  // Once tested, the queue is free again: a put is taken.
  EXPECT_EQ(rmaPuts(1)[0], ncclSuccess);
  closeRma();
  EXPECT_EQ(violations(), 0) << allLines();
}

TEST_F(OneSided, RequestStillOutstandingIsRule76) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "reused-request");
  openRma();
  rmaPuts(2);
  closeRma();
  EXPECT_EQ(lines(kRule76), 1) << allLines();
  EXPECT_EQ(lines("iput returned the request of iput #1, which test() has not reported done"), 1)
      << allLines();
}

TEST_F(OneSided, GinNullRequestIsRule76) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "null-request");
  openGin();
  ginPuts(1);
  closeGin();
  EXPECT_EQ(lines(kRule76), 1) << allLines();
  EXPECT_EQ(lines("ncclGinPlugin_v11 collComm #1"), 1) << allLines();
}

TEST_F(OneSided, GinCorrectEngineDrawsNothing) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN);
  openGin();
  for (ncclResult_t res : ginPuts(32)) EXPECT_EQ(res, ncclSuccess);
  closeGin();
  EXPECT_EQ(violations(), 0) << allLines();
}

TEST_F(OneSided, GinRefusalBelowTheLimitIsRule76) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "refuse-at=1");
  openGin();
  ginPuts(2);
  closeGin();
  EXPECT_EQ(lines(kRule76), 1) << allLines();
}

TEST_F(OneSided, V13CorrectEngineDrawsNothing) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN);
  int failed = 0;
  v13Session(rma13_, 32, &failed);
  EXPECT_EQ(failed, 0);
  v13Session(gin13_, 32, &failed);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(violations(), 0) << allLines();
}

TEST_F(OneSided, V13NullRequestIsRule76) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "null-request");
  int failed = 0;
  v13Session(rma13_, 1, &failed);
  v13Session(gin13_, 1, &failed);
  // iput, iputSignal, iget and the one put, through each table.
  EXPECT_EQ(lines(kRule76), 8) << allLines();
  EXPECT_EQ(lines("iget returned ncclSuccess with a NULL request"), 2) << allLines();
  EXPECT_EQ(lines("ncclRmaPlugin_v13 collComm #1"), 4) << allLines();
  EXPECT_EQ(lines("ncclGinPlugin_v13 collComm #1"), 4) << allLines();
}

TEST_F(OneSided, V13RefusalBelowTheLimitIsRule76) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "refuse-at=2");
  int failed = 0;
  v13Session(rma13_, 1, &failed);  // the iget and the put are refused with 2 outstanding
  EXPECT_EQ(failed, 2);
  EXPECT_EQ(lines(kRule76), 2) << allLines();
}

TEST_F(OneSided, V13OddMaxRecvsIsRule70) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "odd-maxrecvs");
  int failed = 0;
  v13Session(rma13_, 0, &failed);
  v13Session(gin13_, 0, &failed);
  EXPECT_EQ(lines("ncclRmaPlugin_v13 device 0 has maxRecvs 3"), 1) << allLines();
  EXPECT_EQ(lines("ncclGinPlugin_v13 device 0 has maxRecvs 3"), 1) << allLines();
}

// ---- rule 70 -------------------------------------------------------------------

TEST_F(OneSided, OddMaxRecvsIsRule70Once) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "odd-maxrecvs");
  openRma();
  ncclNetProperties_v12_t props{};
  ASSERT_EQ(rma_->getProperties(0, &props), ncclSuccess);  // again: still one line
  closeRma();
  EXPECT_EQ(lines(kRule70), 1) << allLines();
  EXPECT_EQ(lines("has maxRecvs 3, not a power of two"), 1) << allLines();
}

TEST_F(OneSided, NotProxyIsRule70) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "not-proxy");
  openRma();
  closeRma();
  EXPECT_EQ(lines("ncclRmaPlugin_v14 device 0 has netDeviceType 0, not GIN_PROXY"), 1)
      << allLines();
}

TEST_F(OneSided, GinNotProxyWithoutDeviceCodeIsRule70) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "not-proxy");
  openGin();
  closeGin();
  EXPECT_EQ(lines("ncclGinPlugin_v11 device 0 has netDeviceType 0, for which NCCL has no device "
                  "code"),
            1)
      << allLines();
}

TEST_F(OneSided, NoHostMemoryIsRule70) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "no-host");
  openRma();
  closeRma();
  EXPECT_EQ(lines(kRule70), 1) << allLines();
  EXPECT_EQ(lines("does not support host memory"), 1) << allLines();
}

TEST_F(OneSided, MissingMemberIsRule70AndStaysNull) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "missing-iget");
  EXPECT_EQ(rma_->iget, nullptr);
  ASSERT_EQ(rma_->init(&ctx_, 1, captureLogger), ncclSuccess);
  EXPECT_EQ(rma_->finalize(ctx_), ncclSuccess);
  EXPECT_EQ(lines("ncclRmaPlugin_v14.iget is NULL"), 1) << allLines();
}

TEST_F(OneSided, NamesThatDifferAreRule70) {
  load(NCCLNET_RMA_DEFECTS_PLUGIN, "names-differ");
  ASSERT_EQ(rma_->init(&ctx_, 1, captureLogger), ncclSuccess);
  EXPECT_EQ(rma_->finalize(ctx_), ncclSuccess);
  EXPECT_EQ(lines("ncclGinPlugin_v11.name is \"sdk-rma-defects-gin\", ncclRmaPlugin_v14.name "
                  "\"sdk-rma-defects\""),
            1)
      << allLines();
}

// ---- the trace -------------------------------------------------------------------

// Each rank's registration order, for comparing ranks by hand (rule 71).
TEST_F(OneSided, TraceRecordsTheSetupInOrder) {
  char dir[] = "/tmp/ncclnet-check-one-sided-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("NCCLNET_CHECK_TRACE", dir, 1);
  load(NCCLNET_RMA_DEFECTS_PLUGIN);
  openRma();
  closeRma();
  std::vector<std::string> traced;
  std::string file;
  if (DIR* d = opendir(dir)) {
    while (dirent* entry = readdir(d)) {
      if (entry->d_name[0] != '.') file = std::string(dir) + "/" + entry->d_name;
    }
    closedir(d);
  }
  ASSERT_FALSE(file.empty());
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    size_t space = line.find(' ');
    if (line[0] != '#' && space != std::string::npos) traced.push_back(line.substr(space + 1));
  }
  unlink(file.c_str());
  rmdir(dir);
  const std::vector<std::string> expected = {"rma.init rc=0",
                                             "rma.connect cc=1 nranks=1 rank=0 rc=0",
                                             "rma.regMrSym cc=1 m=1 size=4096 type=1 flags=0 rc=0",
                                             "rma.regMrSym cc=1 m=2 size=4096 type=1 flags=0 rc=0",
                                             "rma.regMrSym cc=1 m=3 size=8 type=1 flags=0 rc=0",
                                             "rma.deregMrSym cc=1 m=1 rc=0",
                                             "rma.deregMrSym cc=1 m=2 rc=0",
                                             "rma.deregMrSym cc=1 m=3 rc=0",
                                             "rma.closeColl cc=1 rc=0",
                                             "rma.finalize rc=0"};
  EXPECT_EQ(traced, expected);
}

// ---- a real plugin ---------------------------------------------------------------

TEST_F(OneSided, SdkSocketDrawsNothing) {
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  load(NCCLNET_SOCKET_PLUGIN);
  openRma();
  rmaEachCall();
  for (ncclResult_t res : rmaPuts(32)) EXPECT_EQ(res, ncclSuccess);
  closeRma();
  EXPECT_EQ(violations(), 0) << allLines();
}

TEST_F(OneSided, SdkSocketV13DrawsNothing) {
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  load(NCCLNET_SOCKET_PLUGIN);
  int failed = 0;
  v13Session(rma13_, 32, &failed);
  EXPECT_EQ(failed, 0);
  v13Session(gin13_, 32, &failed);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(violations(), 0) << allLines();
}

TEST_F(OneSided, SdkSocketGinDrawsNothing) {
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  load(NCCLNET_SOCKET_PLUGIN);
  openGin();
  for (ncclResult_t res : ginPuts(32)) EXPECT_EQ(res, ncclSuccess);
  closeGin();
  EXPECT_EQ(violations(), 0) << allLines();
}

}  // namespace
