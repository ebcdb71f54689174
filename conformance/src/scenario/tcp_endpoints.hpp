// SPDX-License-Identifier: Apache-2.0
// The TCP side of a plugin, seen without knowing its handle format: the
// listening sockets this process owns (/proc/self/net/tcp{,6} joined with
// the socket inodes of /proc/self/fd), so that a scenario can diff them
// around listen() and aim other connections at the plugin's endpoint; and
// plain sockets to play a stray client or a closed port.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace conformance {

struct TcpEndpoint {
  std::string address;  // numeric IPv4 or IPv6, as bound (may be a wildcard)
  uint16_t port = 0;
  bool operator<(const TcpEndpoint& o) const {
    return port != o.port ? port < o.port : address < o.address;
  }
};

// The TCP sockets in LISTEN state that this process owns.
std::set<TcpEndpoint> listeningEndpoints();
// Those of `after` not in `before`.
std::vector<TcpEndpoint> newEndpoints(const std::set<TcpEndpoint>& before,
                                      const std::set<TcpEndpoint>& after);

// "127.0.0.1:1234,::1:5678" and back, to pass endpoints between ranks.
std::string encodeEndpoints(const std::vector<TcpEndpoint>& endpoints);
std::vector<TcpEndpoint> decodeEndpoints(const std::string& text);

// A blocking TCP connect to `e` (a wildcard address means loopback), within
// `timeoutSec`; the socket, or -1.
int connectTcp(const TcpEndpoint& e, double timeoutSec);
// A port on loopback that nothing listens on (bound, then closed).
uint16_t closedLoopbackPort();
// Offsets at which `port` appears in network byte order in `bytes`.
std::vector<size_t> portOffsets(const char* bytes, size_t size, uint16_t port);
// Of `endpoints`, those whose port a handle carries (a peer can only learn
// the port from it); all of them when it carries none. Keeps apart the
// sockets a listen opened for its peers from others it caused (a software
// device's own wire, a helper service).
std::vector<TcpEndpoint> announcedIn(const char* handle, size_t size,
                                     const std::vector<TcpEndpoint>& endpoints);

}  // namespace conformance
