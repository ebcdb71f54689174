// SPDX-License-Identifier: Apache-2.0
// conf-tcp: the send and receive sides of one connection. One TCP socket
// per comm; each message is a header (tag, size) and the payload. All
// progress happens inside isend/irecv/test, non-blocking, in posting order.
//
// Built correct, or with one CONF_TCP_DEFECT_* switch that breaks one rule
// on purpose, so the conformance suite can be shown to catch it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "ncclnet/abi/net.h"
#include "ncclnet/request_pool.hpp"

namespace conftcp {

constexpr int kMaxRecvs = 8;

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
  explicit SendComm(int fd) : fd_(fd) {}
  ~SendComm();
  ncclnet::RequestPool<Request>& pool() { return pool_; }
  void post(Request* r);
  void progress();

 private:
  void failAll(ncclResult_t error);
  int fd_;
  ncclResult_t error_ = ncclSuccess;
  ncclnet::RequestPool<Request> pool_{NCCL_NET_MAX_REQUESTS * kMaxRecvs};
  std::deque<Request*> queue_;
};

class RecvComm {
 public:
  explicit RecvComm(int fd) : fd_(fd) {}
  ~RecvComm();
  ncclnet::RequestPool<Request>& pool() { return pool_; }
  void post(Request* r);
  void progress();

 private:
  void failAll(ncclResult_t error);
  bool readHeader();
  bool route();
  int fd_;
  ncclResult_t error_ = ncclSuccess;
  ncclnet::RequestPool<Request> pool_{NCCL_NET_MAX_REQUESTS};
  std::deque<Request*> queue_;
  // The message being read.
  Header header_{};
  size_t headerGot_ = 0;
  bool routed_ = false;
  Request* target_ = nullptr;  // nullptr with routed_: discard the payload
  int slot_ = 0;
  uint64_t got_ = 0;
};

}  // namespace conftcp
