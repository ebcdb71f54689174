// SPDX-License-Identifier: Apache-2.0
// sdk-socket: connection setup. Every step is non-blocking and resumable:
// NCCL polls connect (with the same handle buffer) and accept until they
// hand back a comm.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "ncclnet/socket_io.hpp"
#include "ncclnet/interfaces.hpp"
#include "recv_comm.hpp"
#include "send_comm.hpp"
#include "wire.hpp"

namespace ncclnet::socket {

using Clock = std::chrono::steady_clock;

class ListenComm {
 public:
  // Binds an ephemeral port on the interface's address and fills `handle`.
  static ncclResult_t open(const Interface& itf, const Config& config, const Logger& log,
                           std::unique_ptr<ListenComm>* out, ListenHandle* handle);

  // One step: takes new sockets, reads their hellos, refuses strays, and
  // returns a comm in *out once all sockets of one connect have arrived.
  ncclResult_t accept(std::unique_ptr<RecvComm>* out);

 private:
  ListenComm(Fd fd, const Config& config, const Logger& log, uint64_t cookie, std::string where);

  struct Arrival {  // an accepted socket that has not finished its hello
    Fd fd;
    uint8_t hello[kHelloBytes] = {};
    size_t got = 0;
    Clock::time_point since;
    std::string peer;
  };
  struct Group {  // the sockets of one connect, by hello index
    std::vector<Fd> sockets;
    int count = 0;
    Clock::time_point since;
    std::string peer;
  };

  void takeNewSockets();
  void readHellos();
  void dropStale();
  void refuse(Arrival& a, const char* why);

  Fd fd_;
  Config config_;
  Logger log_;
  uint64_t cookie_;
  std::string where_;
  // Strays are anyone's to send: their lines pass a rate limit.
  WarnLimit strays_;
  std::vector<Arrival> arrivals_;
  std::map<uint64_t, Group> groups_;
};

class Connector {
 public:
  Connector(const ListenHandle& handle, const Config& config, const Logger& log);
  // One step: ncclSuccess with *out set when connected, with *out empty to
  // be called again; an error when the listener stays unreachable.
  ncclResult_t step(std::unique_ptr<SendComm>* out);

 private:
  enum class Stage { Start, Connecting, Hello, Done };
  struct Link {
    Fd fd;
    Stage stage = Stage::Start;
    uint8_t hello[kHelloBytes] = {};
    size_t sent = 0;
    Clock::time_point retryAt;
  };
  ncclResult_t advance(Link& link);
  void retryLater(Link& link, int err);

  ListenHandle handle_;
  Config config_;
  Logger log_;
  std::string where_;
  std::vector<Link> links_;  // 0: control, then one per data stream
  Clock::time_point deadline_;
  int lastError_ = 0;
};

// A random 64-bit value (cookies and connection ids).
uint64_t randomId();

}  // namespace ncclnet::socket
