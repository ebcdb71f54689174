// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: a plugin loaded through the SDK host Loader, connected to
// its twin in the other process in both directions.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "pair.hpp"
#include "peer.hpp"

namespace bench {

struct PluginOptions {
  std::string pluginList;              // NCCL_NET_PLUGIN value: a path or a name
  std::optional<std::string> netName;  // NCCL_NET
  int abi = 0;                         // 0: the newest the plugin exports
  int dev = 0;
  size_t maxSize = 0;
  int buffers = 4;  // distinct receive buffers cycled through
};

class PluginPeer : public Peer {
 public:
  static std::unique_ptr<PluginPeer> open(const PluginOptions& options, Pair& pair,
                                          std::string* why);
  ~PluginPeer() override;

  std::string describe() const override;
  bool stream(bool sender, size_t size, int iters, int window) override;
  bool pingpong(bool initiator, size_t size, int iters) override;

 private:
  PluginPeer() = default;
  bool wait(void* request);
  void* postSend(size_t size);
  void* postRecv(size_t size, int buffer);

  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin_;
  ncclnet::host::NetView* net_ = nullptr;
  void* ctx_ = nullptr;
  void* sendComm_ = nullptr;
  void* recvComm_ = nullptr;
  std::string device_;
  std::vector<char> sendBuffer_;
  void* sendMr_ = nullptr;
  std::vector<std::vector<char>> recvBuffers_;
  std::vector<void*> recvMrs_;
};

}  // namespace bench
