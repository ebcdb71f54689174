// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: the plugin calls NCCL polls, polled the same way
// and bounded by a deadline. connect and accept are called again until
// they give a comm, isend and irecv while they give a NULL request (the
// plugin's back-pressure), test until done. A call that fails ends the
// poll with its result; a deadline that passes first gives ncclTimeout.
//
//   ASSERT_EQ(connectTo(s, handle, &sendComm), ncclSuccess);
//   ASSERT_EQ(postSend(s, sendComm, buf, size, tag, mh, &request), ncclSuccess);
//   ASSERT_EQ(waitFor(s, request, &size), ncclSuccess);
#pragma once

#include <cstddef>

#include "ncclnet/testing/plugin_session.hpp"

namespace ncclnet::testing {

// listen on device `dev` into a zeroed `handle`.
ncclResult_t listenOn(PluginSession& s, char handle[NCCL_NET_HANDLE_MAXSIZE], void** listenComm,
                      int dev = 0);
ncclResult_t connectTo(PluginSession& s, void* handle, void** sendComm, double seconds = 10);
ncclResult_t acceptFrom(PluginSession& s, void* listenComm, void** recvComm, double seconds = 10);
// connect from `sender` and accept on `receiver`'s `listenComm` (they may be
// one session), both polled in turn from this thread: connect never waits
// for accept. On failure, a comm already made is left in *sendComm/*recvComm.
ncclResult_t connectAndAccept(PluginSession& sender, PluginSession& receiver, void* handle,
                              void* listenComm, void** sendComm, void** recvComm,
                              double seconds = 10);
// Both ends of one connection made in this process: listen on `receiver`,
// connectAndAccept, close the listen.
ncclResult_t connectLoopback(PluginSession& sender, PluginSession& receiver, void** sendComm,
                             void** recvComm, double seconds = 10);
// The listen still takes a real peer (a connect from the same session),
// e.g. after hostile input: nullptr, or what failed. The comms are closed.
const char* listenStillAccepts(PluginSession& s, const char* handle, void* listenComm,
                               double seconds);

ncclResult_t postSend(PluginSession& s, void* sendComm, void* data, size_t size, int tag,
                      void* mhandle, void** request, double seconds = 20);
ncclResult_t postRecv(PluginSession& s, void* recvComm, int n, void** data, size_t* sizes,
                      int* tags, void** mhandles, void** request, double seconds = 20);
// test() until done; `sizes` as test() takes it (may be NULL).
ncclResult_t waitFor(PluginSession& s, void* request, int* sizes, double seconds = 20);

}  // namespace ncclnet::testing
