// SPDX-License-Identifier: Apache-2.0
// sdk-ofi tests on the SDK's test kit (sdk/testing): "roles" (a receiver, a
// sender) run in two forked children (the kit's runRoles), each loading the
// plugin through the SDK's Loader at a pinned ABI version, joined by a
// Channel for the handle. The gtest process itself never loads libfabric,
// so no provider state crosses fork.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ncclnet/testing/byte_pattern.hpp"
#include "ncclnet/testing/deadline.hpp"
#include "ncclnet/testing/handle_exchange.hpp"
#include "ncclnet/testing/log_lines.hpp"
#include "ncclnet/testing/net_polling.hpp"
#include "ncclnet/testing/process_roles.hpp"
#include "ncclnet/testing/role_check.hpp"

namespace ncclnet::ofi::testing {

// The tests read as if the kit were theirs.
using namespace ::ncclnet::testing;

// NCCL sizes the array it gives test() for this many grouped receives.
constexpr int kMaxSubs = 64;

// The other role.
using Link = Channel;

// One process's sdk-ofi, with the kit's polled calls as role steps: "" when
// done, else what failed (for ROLE_TRY). Every poll gives up after 20 s.
class Peer {
 public:
  // Loads and initialises sdk-ofi at ABI `version` over tcp;ofi_rxm on
  // loopback (unless the environment chose otherwise).
  std::string open(int version);
  // Finalizes, keeping the library loaded.
  void finalize();
  ncclnet::host::NetView& net() { return session_->net(); }
  void* ctx() const { return session_->ctx(); }
  PluginSession& session() { return *session_; }

  std::string connect(void* handle, void** sendComm);
  std::string accept(void* listenComm, void** recvComm);
  // connect and accept in this process, both polled until done.
  std::string connectPair(void* handle, void* listenComm, void** sendComm, void** recvComm);
  // isend/irecv, called again while they answer with a NULL request (the
  // plugin's back-pressure), as NCCL does.
  std::string isend(void* comm, void* data, size_t size, int tag, void* mhandle, void** request);
  std::string irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                    void** request);
  // test() until done: its result, or ncclTimeout after `timeoutMs`.
  ncclResult_t wait(void* request, int* sizes, int timeoutMs = 20000);
  // Waits for every request, in any order; the first error wins.
  std::string waitAll(std::vector<void*>& requests, std::vector<std::vector<int>>* sizes,
                      int timeoutMs = 20000);

 private:
  std::unique_ptr<PluginSession> session_;
};

using Role = std::function<std::string(Peer&, Link&)>;

// The receiver's half of a connection between two roles: listen, send the
// handle over `link`, accept, close the listen.
std::string listenAndAccept(Peer& peer, Link& link, void** recvComm);
// The sender's half: the handle from `link`, then connect.
std::string receiveHandleAndConnect(Peer& peer, Link& link, void** sendComm);

// Runs `first` and `second` in two children (`second` alone when `first`
// is null), each with its own Peer at `version`. Returns "" when both
// succeeded, else what failed; a child still running after `timeoutMs` is
// killed by its pid and reported stuck.
std::string runRoles(int version, const Role& first, const Role& second, int timeoutMs = 30000);

}  // namespace ncclnet::ofi::testing
