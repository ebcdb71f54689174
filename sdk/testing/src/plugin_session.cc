// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: a plugin loaded and initialized for a test.
#include "ncclnet/testing/plugin_session.hpp"

#include "ncclnet/host/callbacks.hpp"
#include "ncclnet/testing/log_lines.hpp"

namespace ncclnet::testing {

PluginSession::PluginSession(SessionOptions options) : options_(std::move(options)) {
  ncclnet::host::LoaderOptions loaderOptions;
  loaderOptions.pluginList = options_.plugin;
  loaderOptions.netName = options_.netName;
  loaderOptions.pinnedVersion = options_.version;
  loaderOptions.checkInit = options_.loaderCheck;
  ncclnet::host::Loader loader(loaderOptions);
  if (loader.load(&plugin_) != ncclSuccess) {
    error_ = "load failed: " + loader.report().outcome;
    return;
  }
  init();
}

PluginSession::~PluginSession() {
  finalize();
}

ncclResult_t PluginSession::init() {
  if (plugin_ == nullptr) return ncclInternalError;
  if (initialized_) return ncclSuccess;
  ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ncclDebugLogger_t logger = options_.logger != nullptr ? options_.logger : testLogger;
  ncclResult_t res = plugin_->net().init(&ctx_, options_.commId, &config, logger,
                                         ncclnet::host::profilerCallback());
  if (res != ncclSuccess) {
    error_ = "init failed with " + std::to_string(res);
    return res;
  }
  initialized_ = true;
  return ncclSuccess;
}

void PluginSession::finalize() {
  if (!initialized_) return;
  plugin_->net().finalize(ctx_);
  ctx_ = nullptr;
  initialized_ = false;
}

}  // namespace ncclnet::testing
