// SPDX-License-Identifier: Apache-2.0
// The logger and profiler callback a host hands a plugin's init: never
// NULL, and the profiler callback counts events and flags what NCCL would
// crash on with a profiler plugin loaded.
#include "ncclnet/host/callbacks.hpp"

#include <gtest/gtest.h>

#include "ncclnet/host/loader.hpp"

namespace ncclnet::host {
namespace {

TEST(HostCallbacks, LoaderDefaultLoggerIsAFunction) {
  LoaderOptions options;
  EXPECT_NE(options.logger.function(), nullptr);
  EXPECT_EQ(loggerFunction(Logger()), stderrLogger());
  EXPECT_EQ(loggerFunction(options.logger), options.logger.function());
}

TEST(HostCallbacks, StderrLoggerPrintsWarnings) {
  testing::internal::CaptureStderr();
  stderrLogger()(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, "device %d: %s", 3, "gone");
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("NCCL WARN device 3: gone"), std::string::npos) << printed;
}

TEST(HostCallbacks, ProfilerCallbackCountsEveryEventType) {
  ProfilerTally before = profilerTally();
  void* event = nullptr;
  int phandle = 0;  // what NCCL's proxy handed isend/irecv
  ncclProfilerCallback_t cb = profilerCallback();
  ASSERT_NE(cb, nullptr);
  EXPECT_EQ(cb(&event, ncclProfilerNetEventStart, &phandle, 1, nullptr), ncclSuccess);
  EXPECT_EQ(cb(&event, ncclProfilerNetEventUpdate, nullptr, 1, nullptr), ncclSuccess);
  EXPECT_EQ(cb(&event, ncclProfilerNetEventUpdate, nullptr, 1, nullptr), ncclSuccess);
  EXPECT_EQ(cb(&event, ncclProfilerNetEventStop, nullptr, 1, nullptr), ncclSuccess);
  EXPECT_EQ(cb(&event, ncclProfilerNetEventUpdateAndStop, nullptr, 1, nullptr), ncclSuccess);
  ProfilerTally after = profilerTally();
  EXPECT_EQ(after.start - before.start, 1u);
  EXPECT_EQ(after.update - before.update, 2u);
  EXPECT_EQ(after.stop - before.stop, 1u);
  EXPECT_EQ(after.updateAndStop - before.updateAndStop, 1u);
  EXPECT_EQ(after.findings, before.findings);
}

TEST(HostCallbacks, ProfilerCallbackFlagsMalformedEvents) {
  ProfilerTally before = profilerTally();
  void* event = nullptr;
  // Accepted, as NCCL accepts them, but recorded.
  EXPECT_EQ(profilerCallback()(&event, 7, nullptr, 1, nullptr), ncclSuccess);
  EXPECT_EQ(profilerCallback()(nullptr, ncclProfilerNetEventStop, nullptr, 1, nullptr),
            ncclSuccess);
  EXPECT_EQ(profilerCallback()(&event, ncclProfilerNetEventStart, nullptr, 1, nullptr),
            ncclSuccess);
  ProfilerTally after = profilerTally();
  EXPECT_EQ(after.findings - before.findings, 3u);
  if (before.findings == 0) {
    EXPECT_NE(after.firstFinding.find("type 7"), std::string::npos) << after.firstFinding;
  }
}

}  // namespace
}  // namespace ncclnet::host
