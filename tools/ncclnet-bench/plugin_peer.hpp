// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: a plugin loaded through the SDK host Loader and initialized
// once per process, with any number of comm pairs, each connected to its
// twin in the other process in both directions (NCCL opens one per channel).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "pair.hpp"
#include "peer.hpp"

namespace ncclnet::bench {

struct PluginOptions {
  std::string pluginList;              // NCCL_NET_PLUGIN value: a path or a name
  std::optional<std::string> netName;  // NCCL_NET
  int abi = 0;                         // 0: the newest the plugin exports
  int dev = 0;
  size_t maxSize = 0;
  int buffers = 4;  // distinct receive buffers cycled through
};

// The loaded plugin and its init context, shared by its comms; finalized
// when the last comm closes.
class PluginSession;

class PluginPeer : public Peer {
 public:
  // `comms` comm pairs of one plugin instance.
  static std::vector<std::unique_ptr<Peer>> open(const PluginOptions& options, int comms,
                                                 Pair& pair, std::string* why);
  ~PluginPeer() override;

  std::string label() const override;
  std::string describe() const override;
  bool stream(bool sender, size_t size, int iters, int window) override;
  bool pingpong(bool initiator, size_t size, int iters) override;

 private:
  explicit PluginPeer(std::shared_ptr<PluginSession> session);
  bool connect(const PluginOptions& options, Pair& pair, std::string* why);
  bool wait(void* request);
  void* postSend(size_t size);
  void* postRecv(size_t size, int buffer);

  std::shared_ptr<PluginSession> session_;
  ncclnet::host::NetView* net_ = nullptr;
  void* sendComm_ = nullptr;
  void* recvComm_ = nullptr;
  std::vector<char> sendBuffer_;
  void* sendMr_ = nullptr;
  std::vector<std::vector<char>> recvBuffers_;
  std::vector<void*> recvMrs_;
};

}  // namespace ncclnet::bench
