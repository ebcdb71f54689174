// SPDX-License-Identifier: Apache-2.0
// sdk-ofi tests: roles on the test kit (see peer.hpp).
#include "peer.hpp"

#include <cstdlib>

#include "built_file.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace ncclnet::ofi::testing {
namespace {

constexpr double kPollSeconds = 20;

// "" for ncclSuccess, else what `call` did.
std::string outcome(const char* call, ncclResult_t res) {
  if (res == ncclSuccess) return "";
  if (res == ncclTimeout) return format("%s did not complete in %.0f s", call, kPollSeconds);
  return format("%s returned %d", call, static_cast<int>(res));
}

}  // namespace

std::string Peer::open(int version) {
  // tcp;ofi_rxm on loopback unless the caller chose otherwise.
  ::setenv("FI_PROVIDER", "tcp;ofi_rxm", 0);
  ::setenv("FI_TCP_IFACE", "lo", 0);
  ::setenv("FI_SOCKETS_IFACE", "lo", 0);
  // No init by the loader: v6..v10 initialise once per process, and the
  // first init decides which logger the plugin keeps (the kit's).
  std::string plugin = ncclnet::testing::builtFile(SDK_OFI_PLUGIN_PATH, SDK_OFI_PLUGIN_REL);
  session_ = std::make_unique<PluginSession>(SessionOptions{.plugin = plugin,
                                                            .netName = "",
                                                            .version = version,
                                                            .loaderCheck = false,
                                                            .commId = 7,
                                                            .logger = nullptr});
  return session_->ok() ? "" : session_->error();
}

void Peer::finalize() {
  if (session_) session_->finalize();
}

std::string Peer::connect(void* handle, void** sendComm) {
  return outcome("connect", connectTo(*session_, handle, sendComm, kPollSeconds));
}

std::string Peer::accept(void* listenComm, void** recvComm) {
  return outcome("accept", acceptFrom(*session_, listenComm, recvComm, kPollSeconds));
}

std::string Peer::connectPair(void* handle, void* listenComm, void** sendComm, void** recvComm) {
  return outcome("connect/accept", connectAndAccept(*session_, *session_, handle, listenComm,
                                                    sendComm, recvComm, kPollSeconds));
}

std::string Peer::isend(void* comm, void* data, size_t size, int tag, void* mhandle,
                        void** request) {
  return outcome("isend",
                 postSend(*session_, comm, data, size, tag, mhandle, request, kPollSeconds));
}

std::string Peer::irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                        void** request) {
  return outcome("irecv",
                 postRecv(*session_, comm, n, data, sizes, tags, mhandles, request, kPollSeconds));
}

ncclResult_t Peer::wait(void* request, int* sizes, int timeoutMs) {
  return waitFor(*session_, request, sizes, timeoutMs / 1000.0);
}

std::string Peer::waitAll(std::vector<void*>& requests, std::vector<std::vector<int>>* sizes,
                          int timeoutMs) {
  if (sizes) sizes->assign(requests.size(), std::vector<int>(kMaxSubs, -1));
  std::vector<bool> done(requests.size(), false);
  size_t left = requests.size();
  Deadline deadline(timeoutMs / 1000.0);
  while (left > 0) {
    for (size_t i = 0; i < requests.size(); i++) {
      if (done[i]) continue;
      int finished = 0;
      ncclResult_t res = net().test(requests[i], &finished, sizes ? (*sizes)[i].data() : nullptr);
      if (res != ncclSuccess) return format("test of request %zu returned %d", i, res);
      if (finished) {
        done[i] = true;
        left--;
      }
    }
    ROLE_CHECK(!deadline.expired(), "%zu of %zu requests still pending after %d ms", left,
               requests.size(), timeoutMs);
  }
  return "";
}

std::string listenAndAccept(Peer& peer, Link& link, void** recvComm) {
  return outcome("listen/accept",
                 ::ncclnet::testing::listenAndAccept(peer.session(), link, recvComm, kPollSeconds));
}

std::string receiveHandleAndConnect(Peer& peer, Link& link, void** sendComm) {
  return outcome("handle/connect", ::ncclnet::testing::receiveHandleAndConnect(
                                       peer.session(), link, sendComm, kPollSeconds));
}

std::string runRoles(int version, const Role& first, const Role& second, int timeoutMs) {
  // A role in its child: the plugin opened first, finalized after.
  auto inChild = [version](const Role& role) -> ::ncclnet::testing::Role {
    if (!role) return nullptr;
    return [version, role](Channel& link) {
      Peer peer;
      std::string error = peer.open(version);
      if (error.empty()) error = role(peer, link);
      peer.finalize();
#if defined(__SANITIZE_ADDRESS__)
      // The child ends in _exit, which skips LeakSanitizer's exit hook:
      // check here, after finalize and while the library is still loaded
      // (so reports have symbols).
      if (error.empty() && __lsan_do_recoverable_leak_check() != 0) error = "memory leaked";
#endif
      return error;
    };
  };
  return ::ncclnet::testing::runRoles(inChild(first), inChild(second), timeoutMs / 1000.0);
}

}  // namespace ncclnet::ofi::testing
