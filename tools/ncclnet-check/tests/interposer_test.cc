// SPDX-License-Identifier: Apache-2.0
// libnccl-net-sdk-check.so around sdk-testnet, whose comms meet in memory:
// the tables carry the wrapped plugin's name and optional slots, a correct
// plugin draws no violation, and each defect of sdk-testnet-defects draws
// the WARN line of its rule. The checker reads its environment when it is
// loaded: each test loads it afresh (and ctest runs each in a process of
// its own).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "ncclnet/host/log_capture.hpp"

namespace {

using ncclnet::host::captureLogger;
using ncclnet::host::countCaptured;
using ncclnet::host::LoadedPlugin;

std::string checkerPath() {
  return NCCLNET_CHECK_LIBRARY;
}
std::string testPlugin(const std::string& suffix) {
  if (suffix == "sdk-testnet-defects") return NCCLNET_DEFECTS_PLUGIN;
  return std::string(NCCLNET_TEST_PLUGIN_DIR) + "/libnccl-net-" + suffix + ".so";
}

// Every violation line starts so (the logger adds the prefix).
constexpr const char* kViolation = "NET/check rule ";

class CheckedTestnet : public ::testing::Test {
 protected:
  void SetUp() override { ncclnet::host::clearCapturedLines(); }

  // Wraps sdk-testnet-defects with `defect` and inits it.
  void load(const std::string& defect, const std::string& inner = "sdk-testnet-defects") {
    setenv("NCCLNET_CHECK_PLUGIN", testPlugin(inner).c_str(), 1);
    setenv("NCCLNET_TESTNET_DEFECT", defect.c_str(), 1);
    ncclnet::host::LoaderOptions options;
    options.pluginList = checkerPath();
    options.netName = std::string();
    options.checkInit = false;
    ncclnet::host::Loader loader(options);
    ASSERT_EQ(loader.load(&plugin_), ncclSuccess) << loader.report().outcome;
    ncclNetCommConfig_v12_t config{};
    config.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;
    ASSERT_EQ(net().init(&ctx_, 1, &config, captureLogger, nullptr), ncclSuccess);
  }
  ncclnet::host::NetView& net() { return plugin_->net(); }

  void connectPair() {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    ASSERT_EQ(net().listen(ctx_, 0, handle, &listen_), ncclSuccess);
    for (int i = 0; i < 100 && (send_ == nullptr || recv_ == nullptr); i++) {
      if (send_ == nullptr) {
        ASSERT_EQ(net().connect(ctx_, 0, handle, &send_, nullptr), ncclSuccess);
      }
      if (recv_ == nullptr) {
        ASSERT_EQ(net().accept(listen_, &recv_, nullptr), ncclSuccess);
      }
    }
    ASSERT_NE(send_, nullptr);
    ASSERT_NE(recv_, nullptr);
    ASSERT_EQ(net().regMr(send_, sendBuf_, sizeof(sendBuf_), NCCL_PTR_HOST, &sendMr_), ncclSuccess);
    ASSERT_EQ(net().regMr(recv_, recvBuf_, sizeof(recvBuf_), NCCL_PTR_HOST, &recvMr_), ncclSuccess);
  }

  // Tests `request` until done (5 s at most); the sizes it reported.
  std::vector<int> waitDone(void* request, int n) {
    std::vector<int> sizes(n, 0);
    int done = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done && std::chrono::steady_clock::now() < deadline) {
      EXPECT_EQ(net().test(request, &done, sizes.data()), ncclSuccess);
    }
    EXPECT_TRUE(done) << "request not done within 5 s";
    return sizes;
  }

  // One grouped receive of n buffers, filled by n sends of `size` bytes.
  void exchange(int n, size_t size) {
    void* data[4];
    size_t sizes[4];
    int tags[4];
    void* mhandles[4];
    for (int i = 0; i < n; i++) {
      data[i] = recvBuf_ + i * 1024;
      sizes[i] = 1024;
      tags[i] = i;
      mhandles[i] = recvMr_;
    }
    void* recvRequest = nullptr;
    ASSERT_EQ(net().irecv(recv_, n, data, sizes, tags, mhandles, nullptr, &recvRequest),
              ncclSuccess);
    ASSERT_NE(recvRequest, nullptr);
    std::vector<void*> sends(n);
    for (int i = 0; i < n; i++) {
      ASSERT_EQ(net().isend(send_, sendBuf_, size, i, sendMr_, nullptr, &sends[i]), ncclSuccess);
      ASSERT_NE(sends[i], nullptr);
    }
    for (void* s : sends) waitDone(s, 1);
    waitDone(recvRequest, n);
  }

  void closeAll() {
    EXPECT_EQ(net().deregMr(send_, sendMr_), ncclSuccess);
    EXPECT_EQ(net().deregMr(recv_, recvMr_), ncclSuccess);
    EXPECT_EQ(net().closeSend(send_), ncclSuccess);
    EXPECT_EQ(net().closeRecv(recv_), ncclSuccess);
    EXPECT_EQ(net().closeListen(listen_), ncclSuccess);
    EXPECT_EQ(net().finalize(ctx_), ncclSuccess);
  }

  std::unique_ptr<LoadedPlugin> plugin_;
  void* ctx_ = nullptr;
  void* listen_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  void* sendMr_ = nullptr;
  void* recvMr_ = nullptr;
  char sendBuf_[4096] = {};
  char recvBuf_[4096] = {};
};

TEST_F(CheckedTestnet, TablesCarryTheWrappedName) {
  load("none");
  EXPECT_STREQ(plugin_->name(), "sdk-testnet-defects");
  EXPECT_EQ(plugin_->exportedVersions(), (std::vector<int>{12, 11, 10, 9, 8, 7, 6}));
}

TEST_F(CheckedTestnet, NcclNetSelectsTheWrappedName) {
  setenv("NCCLNET_CHECK_PLUGIN", testPlugin("sdk-testnet").c_str(), 1);
  ncclnet::host::LoaderOptions options;
  options.pluginList = checkerPath();
  options.netName = std::string("SDK-TESTNET");  // NCCL compares without case
  ncclnet::host::Loader loader(options);
  ASSERT_EQ(loader.load(&plugin_), ncclSuccess) << loader.report().outcome;
  EXPECT_EQ(plugin_->path(), checkerPath());
}

TEST_F(CheckedTestnet, OptionalSlotsFollowTheWrappedPlugin) {
  setenv("NCCLNET_CHECK_PLUGIN", testPlugin("sdk-testnet-min").c_str(), 1);
  void* lib = dlopen(checkerPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto* v12 = static_cast<const ncclNet_v12_t*>(dlsym(lib, "ncclNetPlugin_v12"));
  auto* v7 = static_cast<const ncclNet_v7_t*>(dlsym(lib, "ncclNetPlugin_v7"));
  ASSERT_NE(v12, nullptr);
  ASSERT_NE(v7, nullptr);
  EXPECT_STREQ(v12->name, "sdk-testnet-min");
  EXPECT_STREQ(v7->name, "sdk-testnet-min");
  EXPECT_EQ(v12->irecvConsumed, nullptr);
  EXPECT_EQ(v12->regMrDmaBuf, nullptr);
  EXPECT_EQ(v12->getDeviceMr, nullptr);
  EXPECT_EQ(v12->makeVDevice, nullptr);
  EXPECT_EQ(v12->setNetAttr, nullptr);
  EXPECT_EQ(v7->irecvConsumed, nullptr);
  EXPECT_NE(v12->isend, nullptr);
  dlclose(lib);
}

TEST_F(CheckedTestnet, UnsetPluginFailsInitWithOneWarning) {
  unsetenv("NCCLNET_CHECK_PLUGIN");
  ncclnet::host::LoaderOptions options;
  options.pluginList = checkerPath();
  options.netName = std::string();
  options.checkInit = false;
  ncclnet::host::Loader loader(options);
  ASSERT_EQ(loader.load(&plugin_), ncclSuccess);
  EXPECT_STREQ(plugin_->name(), "sdk-check");
  ncclNetCommConfig_v12_t config{};
  EXPECT_NE(net().init(&ctx_, 1, &config, captureLogger, nullptr), ncclSuccess);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, ""), 1);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "NCCLNET_CHECK_PLUGIN is not set"), 1);
}

TEST_F(CheckedTestnet, WrappingItselfFailsInitWithOneWarning) {
  setenv("NCCLNET_CHECK_PLUGIN", checkerPath().c_str(), 1);
  ncclnet::host::LoaderOptions options;
  options.pluginList = checkerPath();
  options.netName = std::string();
  options.checkInit = false;
  ncclnet::host::Loader loader(options);
  ASSERT_EQ(loader.load(&plugin_), ncclSuccess);
  ncclNetCommConfig_v12_t config{};
  EXPECT_NE(net().init(&ctx_, 1, &config, captureLogger, nullptr), ncclSuccess);
  // Its own tables are still empty while it loads: the loader finds none.
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, ""), 1);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "cannot load the plugin NCCLNET_CHECK_PLUGIN="), 1);
}

TEST_F(CheckedTestnet, BadKnobValueFailsInit) {
  setenv("NCCLNET_CHECK_PLUGIN", testPlugin("sdk-testnet").c_str(), 1);
  setenv("NCCLNET_CHECK_BLOCK_US", "soon", 1);
  ncclnet::host::LoaderOptions options;
  options.pluginList = checkerPath();
  options.checkInit = false;
  ncclnet::host::Loader loader(options);
  ASSERT_EQ(loader.load(&plugin_), ncclSuccess);
  ncclNetCommConfig_v12_t config{};
  EXPECT_EQ(net().init(&ctx_, 1, &config, captureLogger, nullptr), ncclInvalidUsage);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "NCCLNET_CHECK_BLOCK_US"), 1);
  unsetenv("NCCLNET_CHECK_BLOCK_US");
}

TEST_F(CheckedTestnet, CorrectPluginDrawsNoViolation) {
  load("none");
  connectPair();
  exchange(1, 100);
  exchange(3, 1024);
  closeAll();
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, kViolation), 0);
}

TEST_F(CheckedTestnet, OversizedReceiveIsRule32) {
  load("oversize");
  connectPair();
  exchange(1, 100);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN,
                          "NET/check rule 32 TruncationIsAnError: test reported "
                          "1073741824 bytes in buffer 0, which holds 1024"),
            1);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, kViolation), 1);
}

TEST_F(CheckedTestnet, GroupMissingASizeIsRule31) {
  load("short-group");
  connectPair();
  exchange(2, 100);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN,
                          "NET/check rule 31 GroupedCompletion: test reported done "
                          "without a size for buffer 1 of 2"),
            1);
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, kViolation), 1);
}

TEST_F(CheckedTestnet, SlowConnectIsRule48) {
  setenv("NCCLNET_CHECK_BLOCK_US", "5000", 1);
  load("slow-connect");
  connectPair();
  EXPECT_GE(countCaptured(NCCL_LOG_WARN, "NET/check rule 48 CallsReturnPromptly: connect took"), 1);
  unsetenv("NCCLNET_CHECK_BLOCK_US");
}

TEST_F(CheckedTestnet, TestAfterDoneIsRule35) {
  load("none");
  connectPair();
  void* request = nullptr;
  ASSERT_EQ(net().isend(send_, sendBuf_, 0, 0, sendMr_, nullptr, &request), ncclSuccess);
  void* recvRequest = nullptr;
  void* data = recvBuf_;
  size_t size = 16;
  int tag = 0;
  ASSERT_EQ(net().irecv(recv_, 1, &data, &size, &tag, &recvMr_, nullptr, &recvRequest),
            ncclSuccess);
  waitDone(request, 1);
  waitDone(recvRequest, 1);
  int done = 0;
  net().test(request, &done, nullptr);  // NCCL never does this
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN,
                          "NET/check rule 35 CompletionReportsSizes (caller): test of "
                          "request"),
            1);
}

TEST_F(CheckedTestnet, AbortsOnTheFirstViolationWhenAsked) {
  setenv("NCCLNET_CHECK_ABORT", "1", 1);
  EXPECT_EXIT(
      {
        load("oversize");
        connectPair();
        exchange(1, 100);
      },
      ::testing::KilledBySignal(SIGABRT), "");
  unsetenv("NCCLNET_CHECK_ABORT");
}

TEST_F(CheckedTestnet, WatchdogPrintsPendingRequestsOnceAndOnSigusr1) {
  setenv("NCCLNET_CHECK_HANG_S", "1", 1);
  load("none");
  connectPair();
  void* data = recvBuf_;
  size_t size = 64;
  int tag = 5;
  void* request = nullptr;
  ASSERT_EQ(net().irecv(recv_, 1, &data, &size, &tag, &recvMr_, nullptr, &request), ncclSuccess);
  auto waitFor = [](const char* needle, int count) {
    for (int i = 0; i < 100 && countCaptured(NCCL_LOG_WARN, needle) < count; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return countCaptured(NCCL_LOG_WARN, needle);
  };
  EXPECT_EQ(waitFor("watchdog (a request pending longer than 1 s): 1 request(s)", 1), 1);
  EXPECT_EQ(waitFor("irecv #1 [64 B tag 5]", 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(countCaptured(NCCL_LOG_WARN, "watchdog (a request"), 1) << "printed once";
  raise(SIGUSR1);
  EXPECT_EQ(waitFor("watchdog (SIGUSR1): 1 request(s)", 1), 1);
  unsetenv("NCCLNET_CHECK_HANG_S");
}

TEST_F(CheckedTestnet, TraceRecordsEveryCall) {
  char dir[] = "/tmp/ncclnet-check-trace-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("NCCLNET_CHECK_TRACE", dir, 1);
  load("none");
  connectPair();
  exchange(2, 100);
  closeAll();
  plugin_.reset();  // unloads the checker, which closes its trace
  std::string path = std::string(dir) + "/ncclnet-check.";
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  path += std::string(host) + "." + std::to_string(getpid()) + ".trace";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  std::string t = text.str();
  EXPECT_NE(t.find("# ncclnet-check trace 2 "), std::string::npos) << t;
  // The listen handle's hash, and the same on every connect to it: how a
  // replayer pairs the two across processes.
  size_t listen = t.find(" listen c=1 dev=0 h=");
  ASSERT_NE(listen, std::string::npos) << t;
  std::string hash = t.substr(listen + 20, 16);
  EXPECT_NE(hash, std::string(16, '0')) << t;
  EXPECT_NE(t.find(" connect c=0 dev=0 h=" + hash + " rc=0\n"), std::string::npos) << t;
  EXPECT_NE(t.find(" connect c=2 dev=0 h=" + hash + " rc=0\n"), std::string::npos) << t;
  // Registrations are numbered 1 (send) and 2 (recv); buffers by offset.
  EXPECT_NE(t.find(" irecv c=3 r=1 n=2 sizes=1024,1024 tags=0,1 m=2,2 o=0,1024 rc=0\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find(" isend c=2 r=2 size=100 tag=0 m=1 o=0 rc=0\n"), std::string::npos) << t;
  EXPECT_NE(t.find(" test r=1 done=1 sizes=100,100 rc=0\n"), std::string::npos) << t;
  EXPECT_NE(t.find(" closeListen c=1 rc=0\n"), std::string::npos) << t;
  std::remove(path.c_str());
  rmdir(dir);
  unsetenv("NCCLNET_CHECK_TRACE");
}

}  // namespace
