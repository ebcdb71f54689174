// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: an out-of-band TCP channel for a connection handshake, the
// one every verbs or RDMA plugin needs to swap queue numbers, addresses and
// keys before its fabric can carry a byte (sdk-ib uses it; NCCL's own IB
// transport does the same over its sockets). Every call is non-blocking:
// NCCL polls connect and accept and expects them to return at once.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ncclnet/socket_io.hpp"

namespace ncclnet {

// The address the handshake listens on: the first interface NCCL would
// take (ncclnet::findInterfaces with NCCL_SOCKET_IFNAME's value `ifname`,
// any family, loopback as the last resort, as NCCL's IB transport does).
bool oobLocalAddress(const std::string& ifname, sockaddr_storage* out, std::string* why);

// A non-blocking listening socket on `addr` with a kernel-chosen port;
// `*bound` receives the full address.
bool oobListen(const sockaddr_storage& addr, Fd* fd, sockaddr_storage* bound, std::string* why);
// Starts a non-blocking connect.
bool oobConnectStart(const sockaddr_storage& addr, Fd* fd, std::string* why);
enum class Progress { kPending, kDone, kFailed };
Progress oobConnectDone(const Fd& fd, std::string* why);
Progress oobAccept(const Fd& listener, Fd* accepted, std::string* why);

// Moves bytes between `buffer` and the socket; `*offset` remembers how far.
Progress oobSend(const Fd& fd, const void* buffer, size_t size, size_t* offset, std::string* why);
Progress oobRecv(const Fd& fd, void* buffer, size_t size, size_t* offset, std::string* why);

// A comm keeps its handshake connection as its peer's liveness signal: a
// process that dies closes it at once. A host that dies or drops off the
// network closes nothing; TCP keepalive declares it gone after
// idle + probes * interval seconds (10 + 3 * 5 = 25 s).
constexpr KeepAlive kOobKeepAlive{10, 5, 3};
inline void oobKeepAlive(const Fd& fd) {
  setKeepAlive(fd.get(), kOobKeepAlive);
}

// The address at the other end of a connected socket ("?" if unknown).
std::string oobPeer(const Fd& fd);

}  // namespace ncclnet
