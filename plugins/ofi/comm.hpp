// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: the objects NCCL holds (listen, send and receive comms) and the
// requests it tests.
//
// Every object belongs to one device Endpoint and is only touched with that
// endpoint's mutex held. "Pending" counts the libfabric operations whose
// contexts point into the object: it may be freed only at zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "endpoint.hpp"
#include "ncclnet/object_model.hpp"
#include "ncclnet/request_pool.hpp"
#include "ncclnet/sticky_error.hpp"
#include "ncclnet/wire_stamp.hpp"

namespace ncclnet::ofi {

constexpr int kMaxRecvs = 8;                    // grouped receives per irecv (maxRecvs)
constexpr uint32_t kHandleMagic = 0x4f464931;   // "OFI1"
constexpr uint32_t kConnectMagic = 0x4f464943;  // "OFIC"
constexpr uint16_t kConnectVersion = 1;         // ConnectMessage's layout

// What listen writes into its part of NCCL's 128-byte handle (the SDK keeps
// a connect in progress in the rest).
struct Handle {
  uint32_t magic;
  uint16_t addressLength;
  uint16_t endpoint;  // the listener's endpoint index: a connect uses its own of that index
  uint64_t listenId;
  uint8_t address[kMaxAddress];  // the listener endpoint's fi_getname
};
static_assert(sizeof(Handle) <= kPluginHandleBytes, "the handle must fit the plugin's part");

// The first message of a connection, sent to the listener's endpoint with
// TagLayout::connect(listenId): who is calling, and the connection id its
// data messages will carry.
struct ConnectMessage {
  uint32_t magic;
  uint16_t addressLength;
  uint16_t version;
  uint32_t connId;
  uint32_t reserved;
  uint8_t address[kMaxAddress];  // the connector endpoint's fi_getname
};

// The stamps that lead both. The handle has neither version nor secret (the
// listen id is not one: a stray can guess it), the connect message no secret.
constexpr WireStamp kHandleStamp{"sdk-ofi",
                                 "listen handle",
                                 kHandleMagic,
                                 0,
                                 {{offsetof(Handle, magic), sizeof(Handle::magic)}, {}, {}}};
constexpr WireStamp kConnectStamp{
    "sdk-ofi",
    "connect message",
    kConnectMagic,
    kConnectVersion,
    {{offsetof(ConnectMessage, magic), sizeof(ConnectMessage::magic)},
     {offsetof(ConnectMessage, version), sizeof(ConnectMessage::version)},
     {}}};

class Comm;

struct Request final : CompletionSink {
  Comm* comm = nullptr;
  bool isSend = false;
  bool isFlush = false;
  bool cancelled = false;
  int n = 0;         // buffers in this request
  int posted = 0;    // handed to libfabric
  int finished = 0;  // came back, successfully or not
  int sizes[kMaxRecvs] = {};
  bool opDone[kMaxRecvs] = {};  // which posted buffers came back
  ncclResult_t error = ncclSuccess;
  // What is still to be posted when the provider said -FI_EAGAIN mid-group.
  void* data[kMaxRecvs] = {};
  size_t capacity[kMaxRecvs] = {};
  void* desc[kMaxRecvs] = {};
  uint64_t tags[kMaxRecvs] = {};
  int ncclTags[kMaxRecvs] = {};
  void* flushMhandle = nullptr;  // a flush read still to be posted: its target's registration
  OpContext ops[kMaxRecvs] = {};

  bool done() const { return finished == posted && (posted == n || error != ncclSuccess); }
  void onCompletion(int index, const fi_cq_tagged_entry& entry) override;
  void onError(int index, const fi_cq_err_entry& entry, const std::string& text) override;
};

class Comm : public Retirable {
 public:
  enum class Kind { Listen, Send, Recv };
  // `remote`: the peer of a send or receive comm (null for a listen).
  Comm(Kind kind, Endpoint* endpoint, Remote* remote);
  ~Comm() override;
  Kind kind() const { return kind_; }
  Endpoint& endpoint() const { return *endpoint_; }
  Remote* remote() const { return remote_; }
  int pending = 0;
  // The provider refused the last isend/irecv (-FI_EAGAIN): NCCL waits on
  // the peer although no operation is in flight.
  bool refused = false;
  bool quiescent() const override { return pending == 0; }
  // Cancels what can be cancelled (receives); sends run to completion.
  virtual void cancelAll() = 0;
  // The peer was declared gone since this comm was created: nothing on it
  // can complete any more (remote.hpp).
  bool gone() const { return remote_ != nullptr && remote_->deaths() != deathsAtStart_; }
  // The error of a call on a comm whose peer is gone: the comm's sticky
  // error, with one INFO line at the first such call (Remote::declareGone
  // logged the WARN for every comm of the peer).
  ncclResult_t goneError(const char* call);

 private:
  StickyError error_;
  Kind kind_;
  Endpoint* endpoint_;
  Remote* remote_;
  uint32_t deathsAtStart_;
};

// Sequence numbers per NCCL tag (tag.hpp explains why).
class TagSequences {
 public:
  uint32_t peek(int tag) const {
    auto it = next_.find(tag);
    return it == next_.end() ? 0 : it->second;
  }
  void advance(int tag) { next_[tag]++; }

 private:
  std::unordered_map<int, uint32_t> next_;
};

class ListenComm final : public Comm, public CompletionSink {
 public:
  ListenComm(Endpoint* endpoint, uint64_t listenId);
  ~ListenComm() override;
  uint64_t listenId() const { return listenId_; }
  // Posts the receive for the next connect message (again after -FI_EAGAIN).
  ncclResult_t post();
  // A received, well-formed connect message of this wire version, or
  // nullptr. `error` set when the receive failed.
  const ConnectMessage* message(ncclResult_t* error);
  void consume() { received_ = false; }
  void cancelAll() override;
  void onCompletion(int index, const fi_cq_tagged_entry& entry) override;
  void onError(int index, const fi_cq_err_entry& entry, const std::string& text) override;

 private:
  // Why the message that just arrived is not a connect message (a stray),
  // or an empty string when it is one (perhaps of another version).
  std::string strayReason(size_t bytes) const;
  void dropStray(const char* why, size_t bytes);

  uint64_t listenId_;
  bool posted_ = false;
  bool received_ = false;
  ncclResult_t error_ = ncclSuccess;
  WarnLimit strays_;
  ConnectMessage buffer_{};
  OpContext op_{};
  MrCache::Entry* control_ = nullptr;
};

class SendComm final : public Comm, public CompletionSink {
 public:
  SendComm(Endpoint* endpoint, Remote* peer, uint32_t connId, uint64_t listenId);
  ~SendComm() override;
  // Connection: post the connect message (again after -FI_EAGAIN), then wait
  // for its completion.
  ncclResult_t postConnect();
  bool connected() const { return connectDone_ && connectError_ == ncclSuccess; }
  bool connectFailed(ncclResult_t* error) const;

  ncclResult_t isend(void* data, size_t size, int tag, void* mhandle, void** request);
  RequestPool<Request>& requests() { return requests_; }
  void cancelAll() override {}
  void onCompletion(int index, const fi_cq_tagged_entry& entry) override;
  void onError(int index, const fi_cq_err_entry& entry, const std::string& text) override;

 private:
  fi_addr_t peer_;
  uint32_t connId_;
  uint64_t listenId_;
  TagSequences sequences_;
  RequestPool<Request> requests_{NCCL_NET_MAX_REQUESTS * kMaxRecvs};
  ConnectMessage message_{};
  OpContext connectOp_{};
  bool connectPosted_ = false;
  bool connectDone_ = false;
  ncclResult_t connectError_ = ncclSuccess;
  MrCache::Entry* control_ = nullptr;
};

class RecvComm final : public Comm {
 public:
  RecvComm(Endpoint* endpoint, Remote* peer, uint32_t connId);
  ~RecvComm() override;
  ncclResult_t irecv(int n, void** data, size_t* sizes, int* tags, void** mhandles, void** request);
  ncclResult_t iflush(int n, void** data, int* sizes, void** mhandles, void** request);
  // Posts the buffers of `request` the provider refused earlier.
  void postRemaining(Request* request);
  // Posts a flush read the provider refused with -FI_EAGAIN (test() retries).
  void postFlush(Request* request);
  RequestPool<Request>& requests() { return requests_; }
  void cancelAll() override;

 private:
  fi_addr_t peer_;
  uint32_t connId_;
  TagSequences sequences_;
  // One extra request per slot for flushes, which NCCL issues while the
  // receive they follow is still held.
  RequestPool<Request> requests_{2 * NCCL_NET_MAX_REQUESTS};
  std::vector<Request*> inFlight_;  // receives handed to NCCL, not yet finished by test()
  uint64_t flushScratch_ = 0;       // where flush reads land
  MrCache::Entry* flushControl_ = nullptr;
  friend void releaseRequest(Comm*, Request*);
};

// test() for any request: drives progress and reports whether `request`
// is done (then with its sizes and result). A done request is still owned
// by its comm until releaseRequest. On a comm whose peer is gone a request
// is done at once, with ncclRemoteError, even while the provider still holds
// some of its operations (a send it cannot take back): its slot then stays
// taken until they return or the endpoint closes.
ncclResult_t testRequest(Comm* comm, Request* request, int* done, int* sizes);
void releaseRequest(Comm* comm, Request* request);

}  // namespace ncclnet::ofi
