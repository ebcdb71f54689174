// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: a plugin loaded the way NCCL loads it (the SDK
// host Loader: NCCL_NET_PLUGIN, NCCL_NET, one pinned ABI version) and
// initialized for one communicator; finalized when the session goes.
//
//   ncclnet::testing::PluginSession s({.plugin = MY_PLUGIN_PATH, .netName = "my-net",
//                                      .version = 8});
//   ASSERT_TRUE(s.ok()) << s.error();
//   s.net().devices(&n);  // the v12 view, whatever version the plugin exports
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ncclnet/host/loader.hpp"

namespace ncclnet::testing {

struct SessionOptions {
  std::string plugin;   // what NCCL_NET_PLUGIN would hold: a path or a name
  std::string netName;  // what NCCL_NET would hold; "" accepts any name
  int version = 0;      // the ABI version to load through; 0: the newest exported
  // The Loader's own assignment check (init, devices, finalize) before the
  // session's init. Off for a test that expects zero devices, and for
  // v6..v10 plugins whose first init decides the logger they keep.
  bool loaderCheck = true;
  uint64_t commId = 1;                 // what init is given as the communicator id
  ncclDebugLogger_t logger = nullptr;  // nullptr: testLogger() (log_lines.hpp)
};

class PluginSession {
 public:
  explicit PluginSession(SessionOptions options);
  ~PluginSession();
  PluginSession(const PluginSession&) = delete;
  PluginSession& operator=(const PluginSession&) = delete;

  // Loaded and initialized; else error() says which step failed and why.
  bool ok() const { return initialized_; }
  const std::string& error() const { return error_; }
  ncclnet::host::NetView& net() { return plugin_->net(); }
  void* ctx() const { return ctx_; }
  int version() const { return plugin_ ? plugin_->version() : 0; }
  const SessionOptions& options() const { return options_; }

  // init and finalize again on the same loaded library (the constructor
  // calls init once): for tests of what survives a finalize.
  ncclResult_t init();
  void finalize();

 private:
  SessionOptions options_;
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin_;
  void* ctx_ = nullptr;
  bool initialized_ = false;
  std::string error_;
};

}  // namespace ncclnet::testing
