// SPDX-License-Identifier: Apache-2.0
// ncclnet-churn: the TCP link between the two ranks. It carries only the
// plugin's handles and one verdict byte per cycle, never payload, so a fault
// injected on the plugin's interface leaves it alone when it runs over
// another one.
#pragma once

#include <cstddef>
#include <string>

namespace ncclnet::churn {

class Control {
 public:
  Control() = default;
  ~Control();
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;

  // Rank 0: binds host:port (port 0: any; boundPort() tells which).
  bool listen(const std::string& host, int port, std::string* why);
  int boundPort() const { return boundPort_; }
  // Rank 0: waits for rank 1 to connect.
  bool accept(double seconds, std::string* why);
  // Rank 1: connects, retrying until rank 0 listens or `seconds` pass.
  bool connect(const std::string& host, int port, double seconds, std::string* why);

  bool send(const void* data, size_t size);
  // False when the peer closed, failed, or sent nothing for `seconds`.
  bool recv(void* data, size_t size, double seconds);

 private:
  int listenFd_ = -1;
  int fd_ = -1;
  int boundPort_ = 0;
};

// "10.200.2.1:29500" -> host, port.
bool splitHostPort(const std::string& text, std::string* host, int* port);

}  // namespace ncclnet::churn
