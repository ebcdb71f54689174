// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: one end of a local stream (a socketpair) between
// two processes of a test, for what travels outside the plugin: the
// 128-byte listen handle, "ready" signals, small results. Every read has a
// deadline; a peer that died reads as end of stream, at once.
//
//   char handle[NCCL_NET_HANDLE_MAXSIZE];
//   if (!channel.receive(handle, sizeof(handle), 20)) ...  // 20 s at most
#pragma once

#include <cstddef>
#include <string>

namespace ncclnet::testing {

// All `size` bytes to a descriptor (a socket or a pipe), retried after
// EINTR and short writes; false when the peer is gone (never SIGPIPE).
bool writeAll(int fd, const void* data, size_t size);

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd) : fd_(fd) {}  // takes ownership
  ~Channel();
  Channel(Channel&& other) noexcept;
  Channel& operator=(Channel&& other) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Both ends of a new channel (false when socketpair fails).
  static bool makePair(Channel* a, Channel* b);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close();

  bool send(const void* data, size_t size);
  // All `size` bytes, or false at end of stream, on error or after `seconds`.
  bool receive(void* data, size_t size, double seconds = 20);
  // Whatever the peer sent until it closed its end, or `seconds` passed.
  std::string receiveRest(double seconds);

  template <class T>
  bool sendValue(const T& value) {
    return send(&value, sizeof(T));
  }
  template <class T>
  bool receiveValue(T* value, double seconds = 20) {
    return receive(value, sizeof(T), seconds);
  }

  // One byte each way, for "I am ready" / "go on".
  bool signal();
  bool waitSignal(double seconds = 20);
  // Both ends call it; returns when both have arrived.
  bool barrier(double seconds = 60);

 private:
  int fd_ = -1;
};

}  // namespace ncclnet::testing
