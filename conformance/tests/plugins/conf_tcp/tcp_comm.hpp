// SPDX-License-Identifier: Apache-2.0
// conf-tcp: the send and receive sides of one connection. One TCP socket
// per comm; each message is a header (tag, size) and the payload. All
// progress happens inside isend/irecv/test, non-blocking, in posting order.
//
// Correct, unless the Defects the plugin read at init name some that act on
// the data path (defects.hpp), so the conformance suite can be shown to
// catch them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "defects.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/request_pool.hpp"

namespace conftcp {

constexpr int kMaxRecvs = 8;
// The defects that only pipelined traffic shows act on messages larger than
// this; the API scenarios' messages are at most this large.
constexpr uint64_t kDefectSize = 65536;

struct Header {
  uint32_t magic;
  int32_t tag;
  uint64_t size;
};
constexpr uint32_t kHeaderMagic = 0x63746370;  // "ctcp"

struct Request {
  void* owner = nullptr;  // the SendComm or RecvComm
  bool isSend = false;
  bool done = false;
  ncclResult_t error = ncclSuccess;
  int n = 0;
  // send
  const char* data = nullptr;
  uint64_t size = 0;
  int tag = 0;
  size_t written = 0;  // header and payload bytes written so far
  // receive
  char* bufs[kMaxRecvs] = {};
  size_t caps[kMaxRecvs] = {};
  int tags[kMaxRecvs] = {};
  int sizes[kMaxRecvs] = {};
  bool filled[kMaxRecvs] = {};
  int filledCount = 0;
};

class SendComm {
 public:
  SendComm(int fd, const Defects& defects) : fd_(fd), defects_(defects) {}
  ~SendComm();
  ncclnet::RequestPool<Request>& pool() { return pool_; }
  void post(Request* r);
  void progress();

 private:
  void failAll(ncclResult_t error);
  int fd_;
  const Defects defects_;
  ncclResult_t error_ = ncclSuccess;
  ncclnet::RequestPool<Request> pool_{NCCL_NET_MAX_REQUESTS * kMaxRecvs};
  std::deque<Request*> queue_;
  Request* held_ = nullptr;  // reorders-sends: waits to be overtaken by the next send
  std::chrono::steady_clock::time_point heldAt_;
};

class RecvComm {
 public:
  RecvComm(int fd, const Defects& defects) : fd_(fd), defects_(defects) {}
  ~RecvComm();
  ncclnet::RequestPool<Request>& pool() { return pool_; }
  void post(Request* r);
  void progress();

 private:
  void failAll(ncclResult_t error);
  bool readHeader();
  void route();
  void complete(Request* r);   // the payload for slot_ is in
  void takeEarly(Request* r);  // gives a new receive the messages that wait for it
  int fd_;
  const Defects defects_;
  ncclResult_t error_ = ncclSuccess;
  ncclnet::RequestPool<Request> pool_{NCCL_NET_MAX_REQUESTS};
  std::deque<Request*> queue_;
  // The message being read.
  Header header_{};
  size_t headerGot_ = 0;
  bool routed_ = false;
  Request* target_ = nullptr;  // the receive completed by this payload
  char* dest_ = nullptr;       // where the payload goes; nullptr: discard it
  int slot_ = 0;
  uint64_t got_ = 0;
  // Messages that arrived before a receive with a free buffer for their tag
  // was posted (a sender of a shared comm running ahead). They are read off
  // the stream at once, so the messages behind them are not held up.
  struct Early {
    int tag;
    std::vector<char> payload;
  };
  std::deque<Early> early_;
  void keepOrPlace(Early e);
  bool stashing_ = false;
  std::vector<char> stash_;
  std::chrono::steady_clock::time_point payloadNotBefore_;  // completes-early: read late
};

}  // namespace conftcp
