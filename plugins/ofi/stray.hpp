// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: shuts down idle TCP connections to the endpoint's own port.
//
// tcp-based providers (tcp, tcp;ofi_rxm in libfabric 1.17) accept every TCP
// connection to the endpoint's port and then wait, without a deadline, for
// the provider's connection request on it. A port scanner or a confused
// client that connects and sends nothing keeps a file descriptor of this
// process for as long as it likes, and libfabric offers no hook to bound
// that. So the sweeper looks at this process's sockets itself: a TCP socket
// whose local port is the endpoint's, that is not the listening socket, and
// that has received no byte in its life (the provider's own peers send
// their connection request at once) for the stray timeout is shut down.
// shutdown(), not close(): the descriptor stays the provider's, which sees
// end-of-file and frees it on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ncclnet/log.hpp"

namespace ncclnet::ofi {

class StraySweeper {
 public:
  // Null when `address` is not an IPv4/IPv6 socket address (nothing to do).
  static std::unique_ptr<StraySweeper> forAddress(const std::vector<uint8_t>& address, int idleMs,
                                                  const Logger& log);
  // `local`: the endpoint's sockaddr_in or sockaddr_in6.
  StraySweeper(const std::vector<uint8_t>& local, uint16_t port, int idleMs, const Logger& log)
      : local_(local), port_(port), idleMs_(idleMs), log_(log) {}
  // One look at every socket of the process; returns how many it shut down.
  int sweep();
  uint16_t port() const { return port_; }

 private:
  bool isStray(int fd) const;

  // Both the address and the port must match: another local address may
  // use the same port number for something that is none of our business.
  bool isOurs(const void* sockaddr, size_t length) const;

  std::vector<uint8_t> local_;
  uint16_t port_;  // host order
  int idleMs_;
  const Logger& log_;
  int64_t lastWarnMs_ = -1;  // WARN at most once a minute; INFO otherwise
};

}  // namespace ncclnet::ofi
