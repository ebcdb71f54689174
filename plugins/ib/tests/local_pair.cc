// SPDX-License-Identifier: Apache-2.0
// sdk-ib tests: two comms of one process.
#include "local_pair.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <vector>

#include "softverbs/test_hooks.h"

namespace ncclnet::ib::testing {
ncclResult_t connectLocal(Session& sender, Session& receiver, LocalPair* pair, double seconds) {
  pair->sender = &sender;
  pair->receiver = &receiver;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  ncclResult_t res = listenOn(receiver, handle, &pair->listen);
  if (res != ncclSuccess) return res;
  return connectAndAccept(sender, receiver, handle, pair->listen, &pair->send, &pair->recv,
                          seconds);
}

void closeLocal(LocalPair* pair) {
  if (pair->send != nullptr) pair->sender->net().closeSend(pair->send);
  if (pair->recv != nullptr) pair->receiver->net().closeRecv(pair->recv);
  if (pair->listen != nullptr) pair->receiver->net().closeListen(pair->listen);
  pair->send = pair->recv = pair->listen = nullptr;
}

ncclResult_t transfer(LocalPair& pair, size_t size, uint64_t seed, std::string* why) {
  Session& s = *pair.sender;
  Session& r = *pair.receiver;
  std::vector<char> src(size + 1);
  std::vector<char> dst(size + 64);
  fillPattern(src.data(), size, seed);
  void* smh = nullptr;
  void* rmh = nullptr;
  ncclResult_t res = s.net().regMr(pair.send, src.data(), src.size(), NCCL_PTR_HOST, &smh);
  if (res == ncclSuccess)
    res = r.net().regMr(pair.recv, dst.data(), dst.size(), NCCL_PTR_HOST, &rmh);
  if (res != ncclSuccess) {
    *why = "regMr failed";
    return res;
  }
  void* data = dst.data();
  size_t capacity = dst.size();
  int tag = 0;
  void* rreq = nullptr;
  void* sreq = nullptr;
  res = r.net().irecv(pair.recv, 1, &data, &capacity, &tag, &rmh, nullptr, &rreq);
  if (res == ncclSuccess && rreq == nullptr) {
    *why = "irecv gave no request";
    res = ncclInternalError;
  }
  if (res == ncclSuccess) res = postSend(s, pair.send, src.data(), size, 0, smh, &sreq, 10);
  int sent = -1;
  int received = -1;
  if (res == ncclSuccess) res = waitFor(s, sreq, &sent);
  if (res == ncclSuccess) res = waitFor(r, rreq, &received);
  if (res != ncclSuccess) {
    if (why->empty()) *why = "isend/irecv/test failed";
  } else if (sent != static_cast<int>(size) || received != static_cast<int>(size)) {
    *why = "sizes " + std::to_string(sent) + "/" + std::to_string(received) + " for " +
           std::to_string(size);
    res = ncclInternalError;
  } else if (std::string bad = checkPattern(dst.data(), size, seed); !bad.empty()) {
    *why = bad;
    res = ncclInternalError;
  }
  s.net().deregMr(pair.send, smh);
  r.net().deregMr(pair.recv, rmh);
  return res;
}

int raiseAsyncEvent(int type, uint32_t element) {
  void* lib = dlopen(softverbsLibrary().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return ENOSYS;
  auto raise =
      reinterpret_cast<softverbs_raise_async_event_fn>(dlsym(lib, SOFTVERBS_RAISE_ASYNC_EVENT));
  int rc = raise != nullptr ? raise(0, type, element) : ENOSYS;
  dlclose(lib);
  return rc;
}

}  // namespace ncclnet::ib::testing
