// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: polling the plugin's calls with deadlines.
#include "ncclnet/testing/net_polling.hpp"

#include <chrono>
#include <cstring>

#include "ncclnet/testing/deadline.hpp"

namespace ncclnet::testing {
namespace {

// Between two connect or accept calls: the handshake moves on the plugin's
// own threads or the peer's, so a short rest leaves them the CPU.
constexpr std::chrono::microseconds kHandshakePause(50);

// Calls `step` (a plugin call that leaves its out-pointer NULL while it is
// not done) until `out` is set, the call fails, or the deadline passes.
template <class Step>
ncclResult_t pollCall(double seconds, void** out, Step step,
                      std::chrono::microseconds pause = std::chrono::microseconds(0)) {
  *out = nullptr;
  Deadline deadline(seconds);
  ncclResult_t res = ncclSuccess;
  bool done = pollUntil(
      deadline,
      [&] {
        res = step();
        return res != ncclSuccess || *out != nullptr;
      },
      pause);
  return done ? res : ncclTimeout;
}

}  // namespace

ncclResult_t listenOn(PluginSession& s, char handle[NCCL_NET_HANDLE_MAXSIZE], void** listenComm,
                      int dev) {
  std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  return s.net().listen(s.ctx(), dev, handle, listenComm);
}

ncclResult_t connectTo(PluginSession& s, void* handle, void** sendComm, double seconds) {
  return pollCall(
      seconds, sendComm, [&] { return s.net().connect(s.ctx(), 0, handle, sendComm, nullptr); },
      kHandshakePause);
}

ncclResult_t acceptFrom(PluginSession& s, void* listenComm, void** recvComm, double seconds) {
  return pollCall(
      seconds, recvComm, [&] { return s.net().accept(listenComm, recvComm, nullptr); },
      kHandshakePause);
}

ncclResult_t connectAndAccept(PluginSession& sender, PluginSession& receiver, void* handle,
                              void* listenComm, void** sendComm, void** recvComm, double seconds) {
  *sendComm = *recvComm = nullptr;
  Deadline deadline(seconds);
  ncclResult_t res = ncclSuccess;
  bool done = pollUntil(
      deadline,
      [&] {
        if (*sendComm == nullptr)
          res = sender.net().connect(sender.ctx(), 0, handle, sendComm, nullptr);
        if (res == ncclSuccess && *recvComm == nullptr)
          res = receiver.net().accept(listenComm, recvComm, nullptr);
        return res != ncclSuccess || (*sendComm != nullptr && *recvComm != nullptr);
      },
      kHandshakePause);
  return done ? res : ncclTimeout;
}

ncclResult_t connectLoopback(PluginSession& sender, PluginSession& receiver, void** sendComm,
                             void** recvComm, double seconds) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listenComm = nullptr;
  ncclResult_t res = listenOn(receiver, handle, &listenComm);
  if (res != ncclSuccess) return res;
  res = connectAndAccept(sender, receiver, handle, listenComm, sendComm, recvComm, seconds);
  ncclResult_t closed = receiver.net().closeListen(listenComm);
  return res != ncclSuccess ? res : closed;
}

const char* listenStillAccepts(PluginSession& s, const char* handle, void* listenComm,
                               double seconds) {
  // A copy: NCCL's connect may write into the handle it is given.
  char copy[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(copy, handle, sizeof(copy));
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  ncclResult_t res = connectAndAccept(s, s, copy, listenComm, &sendComm, &recvComm, seconds);
  const char* why = nullptr;
  if (res == ncclTimeout)
    why = "the real peer was not accepted in time";
  else if (res != ncclSuccess)
    why = sendComm == nullptr ? "the real peer's connect failed" : "accept of the real peer failed";
  if (sendComm != nullptr) s.net().closeSend(sendComm);
  if (recvComm != nullptr) s.net().closeRecv(recvComm);
  return why;
}

ncclResult_t postSend(PluginSession& s, void* sendComm, void* data, size_t size, int tag,
                      void* mhandle, void** request, double seconds) {
  return pollCall(seconds, request, [&] {
    return s.net().isend(sendComm, data, size, tag, mhandle, nullptr, request);
  });
}

ncclResult_t postRecv(PluginSession& s, void* recvComm, int n, void** data, size_t* sizes,
                      int* tags, void** mhandles, void** request, double seconds) {
  return pollCall(seconds, request, [&] {
    return s.net().irecv(recvComm, n, data, sizes, tags, mhandles, nullptr, request);
  });
}

ncclResult_t waitFor(PluginSession& s, void* request, int* sizes, double seconds) {
  Deadline deadline(seconds);
  ncclResult_t res = ncclSuccess;
  bool done = pollUntil(deadline, [&] {
    int finished = 0;
    res = s.net().test(request, &finished, sizes);
    return res != ncclSuccess || finished != 0;
  });
  return done ? res : ncclTimeout;
}

}  // namespace ncclnet::testing
