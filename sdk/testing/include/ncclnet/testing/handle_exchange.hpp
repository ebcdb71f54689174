// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: one connection between two processes of a test, as
// NCCL makes it: the receiving side listens and hands its 128-byte handle to
// the other over a Channel (NCCL uses its bootstrap network), then accepts;
// the sending side connects to that handle.
//
//   // in the child                           // in the test
//   listenAndAccept(s, parent, &recvComm);    receiveHandleAndConnect(s, child.channel(),
//   &sendComm);
#pragma once

#include "ncclnet/testing/channel.hpp"
#include "ncclnet/testing/plugin_session.hpp"

namespace ncclnet::testing {

// listen on device 0, send the handle to `peer`, accept, close the listen
// (also when accept failed). The first failure's result; ncclSystemError
// when the handle could not be sent; ncclTimeout when accept did not finish
// within `seconds`.
ncclResult_t listenAndAccept(PluginSession& s, Channel& peer, void** recvComm, double seconds = 20);
// The handle from `peer` (ncclTimeout when none came within `seconds`),
// then connect to it.
ncclResult_t receiveHandleAndConnect(PluginSession& s, Channel& peer, void** sendComm,
                                     double seconds = 20);

}  // namespace ncclnet::testing
