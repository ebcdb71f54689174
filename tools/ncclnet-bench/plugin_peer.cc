// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: driving a plugin the way NCCL's proxy does: post, then
// test the oldest request until it is done.
#include "plugin_peer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>

namespace ncclnet::bench {

namespace {
constexpr int kTag = 0;
constexpr double kSetupSeconds = 60;
}  // namespace

class PluginSession {
 public:
  static std::shared_ptr<PluginSession> load(const PluginOptions& options, std::string* why) {
    std::shared_ptr<PluginSession> session(new PluginSession());
    ncclnet::host::LoaderOptions lo;
    lo.pluginList = options.pluginList;
    lo.netName = options.netName;
    lo.pinnedVersion = options.abi;
    ncclnet::host::Loader loader(lo);
    if (loader.load(&session->plugin_) != ncclSuccess) {
      *why = "cannot load a plugin from '" + options.pluginList + "': " + loader.report().outcome;
      return nullptr;
    }
    ncclnet::host::NetView& net = session->plugin_->net();
    ncclNetCommConfig_v12_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    if (net.init(&session->ctx_, 0xbe9c4, &config, ncclnet::host::stderrLogger(),
                 ncclnet::host::profilerCallback()) != ncclSuccess) {
      *why = "init failed";
      return nullptr;
    }
    session->net_ = &net;
    int ndev = 0;
    ncclNetProperties_v12_t props;
    if (net.devices(&ndev) != ncclSuccess || options.dev >= ndev ||
        net.getProperties(options.dev, &props) != ncclSuccess) {
      *why = "device " + std::to_string(options.dev) + " does not exist";
      return nullptr;
    }
    session->device_ = props.name ? props.name : "?";
    return session;
  }
  ~PluginSession() {
    if (net_ != nullptr) net_->finalize(ctx_);
  }
  PluginSession(const PluginSession&) = delete;
  PluginSession& operator=(const PluginSession&) = delete;

  ncclnet::host::NetView* net() const { return net_; }
  void* ctx() const { return ctx_; }
  std::string name() const { return plugin_->name(); }
  std::string describe() const {
    return name() + " (ncclNetPlugin_v" + std::to_string(plugin_->version()) + ", device " +
           device_ + ")";
  }

 private:
  PluginSession() = default;
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin_;
  ncclnet::host::NetView* net_ = nullptr;  // set once init succeeded
  void* ctx_ = nullptr;
  std::string device_;
};

std::vector<std::unique_ptr<Peer>> PluginPeer::open(const PluginOptions& options, int comms,
                                                    Pair& pair, std::string* why) {
  std::vector<std::unique_ptr<Peer>> peers;
  std::shared_ptr<PluginSession> session = PluginSession::load(options, why);
  if (!session) return peers;
  for (int c = 0; c < comms; c++) {
    std::unique_ptr<PluginPeer> peer(new PluginPeer(session));
    if (!peer->connect(options, pair, why)) {
      peers.clear();
      return peers;
    }
    peers.push_back(std::move(peer));
  }
  return peers;
}

PluginPeer::PluginPeer(std::shared_ptr<PluginSession> session)
    : session_(std::move(session)), net_(session_->net()) {}

bool PluginPeer::connect(const PluginOptions& options, Pair& pair, std::string* why) {
  ncclnet::host::NetView& net = *net_;
  char mine[NCCL_NET_HANDLE_MAXSIZE] = {};
  char theirs[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listenComm = nullptr;
  if (net.listen(session_->ctx(), options.dev, mine, &listenComm) != ncclSuccess ||
      !pair.send(mine, sizeof(mine)) || !pair.recv(theirs, sizeof(theirs))) {
    *why = "listen or the handle exchange failed";
    return false;
  }
  // connect and accept interleaved: a plugin may need the peer's accept to
  // finish its connect.
  auto start = Clock::now();
  while ((sendComm_ == nullptr || recvComm_ == nullptr) && secondsSince(start) < kSetupSeconds) {
    if (sendComm_ == nullptr &&
        net.connect(session_->ctx(), options.dev, theirs, &sendComm_, nullptr) != ncclSuccess) {
      break;
    }
    if (recvComm_ == nullptr && net.accept(listenComm, &recvComm_, nullptr) != ncclSuccess) {
      break;
    }
  }
  net.closeListen(listenComm);
  if (sendComm_ == nullptr || recvComm_ == nullptr) {
    *why = "connect/accept did not complete";
    return false;
  }
  size_t bytes = std::max<size_t>(options.maxSize, 1);
  sendBuffer_.assign(bytes, 1);
  if (net.regMr(sendComm_, sendBuffer_.data(), bytes, NCCL_PTR_HOST, &sendMr_) != ncclSuccess) {
    *why = "regMr failed";
    return false;
  }
  for (int i = 0; i < options.buffers; i++) {
    recvBuffers_.emplace_back(bytes, 0);
    void* mr = nullptr;
    if (net.regMr(recvComm_, recvBuffers_.back().data(), bytes, NCCL_PTR_HOST, &mr) !=
        ncclSuccess) {
      *why = "regMr failed";
      return false;
    }
    recvMrs_.push_back(mr);
  }
  return true;
}

PluginPeer::~PluginPeer() {
  if (sendMr_) net_->deregMr(sendComm_, sendMr_);
  for (void* mr : recvMrs_) net_->deregMr(recvComm_, mr);
  if (sendComm_) net_->closeSend(sendComm_);
  if (recvComm_) net_->closeRecv(recvComm_);
}

std::string PluginPeer::label() const {
  return session_->name();
}

std::string PluginPeer::describe() const {
  return session_->describe();
}

void* PluginPeer::postSend(size_t size) {
  void* request = nullptr;
  if (net_->isend(sendComm_, sendBuffer_.data(), size, kTag, sendMr_, nullptr, &request) !=
      ncclSuccess) {
    return reinterpret_cast<void*>(-1);
  }
  return request;
}

void* PluginPeer::postRecv(size_t size, int buffer) {
  void* data = recvBuffers_[buffer].data();
  int tag = kTag;
  void* mr = recvMrs_[buffer];
  void* request = nullptr;
  if (net_->irecv(recvComm_, 1, &data, &size, &tag, &mr, nullptr, &request) != ncclSuccess) {
    return reinterpret_cast<void*>(-1);
  }
  return request;
}

bool PluginPeer::wait(void* request) {
  int done = 0;
  int sizes[NCCL_NET_MAX_REQUESTS * 2] = {};
  while (!done) {
    if (net_->test(request, &done, sizes) != ncclSuccess) return false;
  }
  return true;
}

bool PluginPeer::stream(bool sender, size_t size, int iters, int window) {
  const void* failed = reinterpret_cast<void*>(-1);
  std::deque<void*> inFlight;
  int posted = 0, completed = 0;
  int nbuf = static_cast<int>(recvBuffers_.size());
  while (completed < iters) {
    while (static_cast<int>(inFlight.size()) < window && posted < iters) {
      void* request = sender ? postSend(size) : postRecv(size, posted % nbuf);
      if (request == failed) return false;
      if (request == nullptr) break;  // back-pressure: test, then retry
      inFlight.push_back(request);
      posted++;
    }
    if (inFlight.empty()) continue;
    int done = 0;
    int sizes[NCCL_NET_MAX_REQUESTS * 2] = {};
    if (net_->test(inFlight.front(), &done, sizes) != ncclSuccess) return false;
    if (done) {
      inFlight.pop_front();
      completed++;
    }
  }
  return true;
}

bool PluginPeer::pingpong(bool initiator, size_t size, int iters) {
  // Both sides keep kPrepost receives posted ahead, as NCCL's proxy keeps
  // its steps' receives posted: a plugin may then prepare a receive while
  // the previous message is still in flight.
  constexpr int kPrepost = 4;
  const void* failed = reinterpret_cast<void*>(-1);
  std::deque<void*> recvs;
  int posted = 0;
  auto post = [&]() {
    void* r = postRecv(size, 0);
    if (r == failed || r == nullptr) return false;
    recvs.push_back(r);
    posted++;
    return true;
  };
  auto send = [&]() {
    void* r = nullptr;
    while (r == nullptr) r = postSend(size);
    return r != failed && wait(r);
  };
  while (posted < iters && posted < kPrepost) {
    if (!post()) return false;
  }
  for (int i = 0; i < iters; i++) {
    if (initiator && !send()) return false;
    if (!wait(recvs.front())) return false;
    recvs.pop_front();
    if (!initiator && !send()) return false;
    if (posted < iters && !post()) return false;
  }
  return true;
}

}  // namespace ncclnet::bench
