// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: the full mesh of one collComm. NCCL's GIN/RMA connect is
// collective and blocking, called once per connection with every rank's
// handle (gin_host_proxy.cc ncclGinProxyConnect, rma_proxy.cc: no retry loop, unlike the net
// table's connect), so this builds the whole mesh in one call, bounded by
// NCCLNET_SOCKET_CONNECT_TIMEOUT_MS. Rank r dials every rank below it and
// accepts every rank above it: one TCP stream per pair. The rank itself
// needs none: its own operations are carried out in the calling thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../config.hpp"
#include "ncclnet/interfaces.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/socket_io.hpp"
#include "wire.hpp"

namespace ncclnet::socket::rma {

class Listener {
 public:
  // A listening socket on the interface's address, and its handle.
  static ncclResult_t open(const Interface& itf, const Logger& log, std::unique_ptr<Listener>* out,
                           Handle* handle);
  const Fd& fd() const { return fd_; }
  uint64_t cookie() const { return cookie_; }

 private:
  Listener(Fd fd, uint64_t cookie) : fd_(std::move(fd)), cookie_(cookie) {}
  Fd fd_;
  uint64_t cookie_;
};

// One connected, non-blocking socket per rank (the entry of `rank` stays
// empty), or ncclRemoteError / ncclSystemError after one WARN line when a
// peer does not appear or misbehaves within the connect timeout.
ncclResult_t buildMesh(const Listener& listener, const std::vector<Handle>& handles, int rank,
                       const Config& config, const Logger& log, std::vector<Fd>* peers);

}  // namespace ncclnet::socket::rma
