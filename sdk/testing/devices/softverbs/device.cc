// SPDX-License-Identifier: Apache-2.0
// softverbs: device registry, listener, progress thread and peer links.
#include "device.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine.hpp"

namespace softverbs {
namespace {

constexpr uint64_t kGuidBase = 0x025056fffe000000ull;  // EUI-64 of MAC 02:50:56:xx:xx:xx
constexpr uint64_t kMaxPayload = 1ull << 31;
constexpr int kPollStepMs = 100;
constexpr double kConnectSeconds = 5;

std::mutex gRegistryMutex;
// Devices of this process; a forked child finds its parent's entries stale
// (their threads did not survive the fork) and starts its own.
Device* gDevices[Device::kMaxDevices] = {};
pid_t gDevicesPid = 0;
ibv_device gVerbsDevices[Device::kMaxDevices];
std::once_flag gVerbsDevicesOnce;

int envInt(const char* name, int def, int min, int max) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || raw[0] == '\0') return def;
  char* end = nullptr;
  long value = std::strtol(raw, &end, 10);
  if (*end != '\0' || value < min || value > max) return def;
  return static_cast<int>(value);
}

// SOFTVERBS_PKEYS=0xffff,0x8001: the port's P_Key table (at most 16
// entries; anything unparsable leaves the default, one full-member 0xffff).
std::vector<uint16_t> pkeyTable() {
  const std::vector<uint16_t> fallback{0xffff};
  const char* raw = std::getenv("SOFTVERBS_PKEYS");
  if (raw == nullptr || raw[0] == '\0') return fallback;
  std::vector<uint16_t> table;
  const char* p = raw;
  while (*p != '\0' && table.size() < 16) {
    char* end = nullptr;
    unsigned long value = std::strtoul(p, &end, 0);
    if (end == p || value > 0xffff || (*end != ',' && *end != '\0')) return fallback;
    table.push_back(static_cast<uint16_t>(value));
    p = *end == ',' ? end + 1 : end;
  }
  return table.empty() ? fallback : table;
}

void fillVerbsDevices() {
  const char* sysfs = std::getenv("SOFTVERBS_SYSFS");
  for (int i = 0; i < Device::kMaxDevices; i++) {
    ibv_device& d = gVerbsDevices[i];
    std::memset(&d, 0, sizeof(d));
    d.node_type = IBV_NODE_CA;
    d.transport_type = IBV_TRANSPORT_IB;
    std::snprintf(d.name, sizeof(d.name), "softverbs%d", i);
    std::snprintf(d.dev_name, sizeof(d.dev_name), "uverbs%d", i);
    // A test may point SOFTVERBS_SYSFS at a tree with class/infiniband/<dev>/device
    // links, to give the devices PCI paths.
    std::snprintf(d.dev_path, sizeof(d.dev_path), "%s/class/infiniband_verbs/uverbs%d",
                  sysfs ? sysfs : "/sys", i);
    std::snprintf(d.ibdev_path, sizeof(d.ibdev_path), "%s/class/infiniband/softverbs%d",
                  sysfs ? sysfs : "/sys", i);
  }
}

sockaddr_in addressOf(uint32_t address) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(listenPort()));
  addr.sin_addr.s_addr = htonl(address);
  return addr;
}

// Whether the peer closed its end of a link (its device went: the process
// died or closed it). Peers never write on a link they accepted, so anything
// readable is the end of the stream. Without this an idle link learns of it
// only when a write fails, which is the second one after the close: the
// kernel takes the first, so a request of one packet (no payload: a
// zero-byte write, a read request) would wait for its acknowledgement
// forever instead of failing as retries exhausted.
bool peerClosed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLIN)) != 0;
}

void setNoDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

int listenPort() {
  return envInt("SOFTVERBS_PORT", 4791, 1, 65535);
}

uint32_t netOctet() {
  return static_cast<uint32_t>(envInt("SOFTVERBS_NET", 127, 1, 223));
}

int Device::count() {
  return envInt("SOFTVERBS_DEVICES", 1, 0, kMaxDevices);
}

ibv_device* Device::verbsDevice(int index) {
  std::call_once(gVerbsDevicesOnce, fillVerbsDevices);
  return (index >= 0 && index < kMaxDevices) ? &gVerbsDevices[index] : nullptr;
}

int Device::indexOf(const ibv_device* device) {
  std::call_once(gVerbsDevicesOnce, fillVerbsDevices);
  for (int i = 0; i < kMaxDevices; i++) {
    if (device == &gVerbsDevices[i]) return i;
  }
  return -1;
}

uint32_t Device::idFor(int index) {
  // pid_max is at most 2^22, so pid and index fit the 24 bits of 127.0.0.0/8.
  return ((static_cast<uint32_t>(getpid()) << 2) | static_cast<uint32_t>(index)) & 0xffffffu;
}

uint64_t Device::guidFor(int index) {
  return kGuidBase | idFor(index);
}

bool Device::addressFromGid(const ibv_gid& gid, uint32_t* address) {
  const uint8_t* b = gid.raw;
  static const uint8_t kV4Prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const uint8_t kLinkLocal[13] = {0xfe, 0x80, 0,    0,    0,    0,   0,
                                         0,    0x02, 0x50, 0x56, 0xff, 0xfe};
  uint32_t id = (uint32_t{b[13]} << 16) | (uint32_t{b[14]} << 8) | b[15];
  if (std::memcmp(b, kV4Prefix, 12) == 0 && b[12] != 0) {
    *address = (uint32_t{b[12]} << 24) | id;
    return true;
  }
  // A link-local GID carries no network: the peer is taken to share ours.
  if (std::memcmp(b, kLinkLocal, 13) == 0) {
    *address = (netOctet() << 24) | id;
    return true;
  }
  return false;
}

void Device::gid(int index, ibv_gid* out, ibv_gid_type* type) const {
  // The table of a RoCE port as mlx5 lays it out: link-local v1, v2, then
  // the IPv4-mapped address v1, v2.
  std::memset(out, 0, sizeof(*out));
  uint8_t* b = out->raw;
  if (index < 2) {
    b[0] = 0xfe;
    b[1] = 0x80;
    uint64_t guid = kGuidBase | id_;
    for (int i = 0; i < 8; i++) b[8 + i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  } else {
    b[10] = b[11] = 0xff;
    b[12] = static_cast<uint8_t>(address_ >> 24);
    b[13] = static_cast<uint8_t>(id_ >> 16);
    b[14] = static_cast<uint8_t>(id_ >> 8);
    b[15] = static_cast<uint8_t>(id_);
  }
  *type = (index % 2 == 0) ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
}

Device* Device::acquireOpen(int index) {
  std::lock_guard<std::mutex> lock(gRegistryMutex);
  if (index < 0 || index >= kMaxDevices || gDevicesPid != getpid()) return nullptr;
  Device* device = gDevices[index];
  if (device != nullptr) device->refs_++;
  return device;
}

Device* Device::acquire(int index) {
  if (index < 0 || index >= count()) {
    errno = ENODEV;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(gRegistryMutex);
  if (gDevicesPid != getpid()) {
    // After fork: the parent's objects are unusable here; leave them.
    for (auto& d : gDevices) d = nullptr;
    gDevicesPid = getpid();
  }
  Device*& slot = gDevices[index];
  if (slot == nullptr) {
    auto* device = new Device(index);
    if (!device->start()) {
      int saved = errno;
      delete device;
      errno = saved;
      return nullptr;
    }
    slot = device;
  }
  slot->refs_++;
  return slot;
}

void Device::release(Device* device) {
  {
    std::lock_guard<std::mutex> lock(gRegistryMutex);
    if (--device->refs_ > 0) return;
    gDevices[device->index_] = nullptr;
  }
  delete device;
}

Device::Device(int index)
    : index_(index), id_(idFor(index)), address_((netOctet() << 24) | id_), pkeys_(pkeyTable()) {}

bool Device::pkey(int index, uint16_t* out) const {
  if (index < 0 || index >= pkeyCount()) return false;
  *out = pkeys_[static_cast<size_t>(index)];
  return true;
}

Device::~Device() {
  stop_.store(true);
  if (progress_.joinable()) progress_.join();
  // Links may call remoteUnreachable() while stopping: not under `mutex`.
  std::map<uint32_t, std::unique_ptr<Link>> links;
  {
    std::lock_guard<std::mutex> lock(mutex);
    links.swap(links_);
  }
  links.clear();
  for (const Peer& peer : inbound_) ::close(peer.fd);
  if (listenFd_ >= 0) ::close(listenFd_);
}

bool Device::start() {
  listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listenFd_ < 0) return false;
  int one = 1;
  ::setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = addressOf(address_);
  if (::bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listenFd_, 64) != 0) {
    int saved = errno;
    std::fprintf(stderr, "softverbs: cannot listen on %u.%u.%u.%u:%d: %s\n", address_ >> 24,
                 (address_ >> 16) & 0xff, (address_ >> 8) & 0xff, address_ & 0xff, listenPort(),
                 std::strerror(saved));
    errno = saved;
    return false;
  }
  progress_ = std::thread([this] { progress(); });
  return true;
}

uint32_t Device::addQp(Qp* qp) {
  uint32_t qpn = nextQpn_++ & 0xffffffu;
  qps_[qpn] = qp;
  return qpn;
}
void Device::removeQp(uint32_t qpn) {
  qps_.erase(qpn);
}
Qp* Device::findQp(uint32_t qpn) {
  auto it = qps_.find(qpn);
  return it == qps_.end() ? nullptr : it->second;
}

void Device::addMr(Mr* mr) {
  // Real keys carry an index and a variant byte; a stale key is unlikely to
  // name a live MR.
  uint32_t index = nextKey_++;
  uint32_t key = (index << 8) | ((index * 167u + id_) & 0xffu);
  mr->mr.lkey = mr->mr.rkey = key;
  mrs_[key] = mr;
}
void Device::removeMr(uint32_t key) {
  mrs_.erase(key);
}
Mr* Device::findMr(uint32_t key) {
  auto it = mrs_.find(key);
  return it == mrs_.end() ? nullptr : it->second;
}

void Device::addContext(Context* context) {
  std::lock_guard<std::mutex> lock(mutex);
  contexts_.push_back(context);
}

void Device::removeContext(Context* context) {
  std::lock_guard<std::mutex> lock(mutex);
  contexts_.erase(std::remove(contexts_.begin(), contexts_.end(), context), contexts_.end());
}

void Device::broadcast(const ibv_async_event& event) {
  for (Context* context : contexts_) {
    if (context->async) context->async->push(event);
  }
}

void Device::failAllQps() {
  for (auto& entry : qps_) {
    if (entry.second->qp.state != IBV_QPS_RESET) enterError(entry.second);
  }
}

bool Device::transmit(uint32_t remoteId, OutPacket packet) {
  auto it = links_.find(remoteId);
  if (it == links_.end()) {
    it = links_.emplace(remoteId, std::make_unique<Link>(this, remoteId)).first;
  }
  return it->second->enqueue(std::move(packet));
}

void Device::remoteUnreachable(uint32_t remoteId) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto& entry : qps_) {
    Qp* qp = entry.second;
    if (qp->remoteDevice != remoteId || qp->sq.empty()) continue;
    if (qp->qp.state == IBV_QPS_RTS || qp->qp.state == IBV_QPS_SQD) {
      failHead(qp, IBV_WC_RETRY_EXC_ERR);
    }
  }
}

void Device::progress() {
  while (!stop_.load()) {
    std::vector<pollfd> fds;
    fds.push_back(pollfd{listenFd_, POLLIN, 0});
    for (const Peer& peer : inbound_) fds.push_back(pollfd{peer.fd, POLLIN, 0});
    int n = ::poll(fds.data(), fds.size(), kPollStepMs);
    if (n <= 0) continue;
    std::vector<Peer> alive;
    std::vector<uint32_t> gone;
    for (size_t i = 1; i < fds.size(); i++) {
      const Peer& peer = inbound_[i - 1];
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && !readPacket(peer.fd, peer.id)) {
        ::close(peer.fd);
        gone.push_back(peer.id);
      } else {
        alive.push_back(peer);
      }
    }
    inbound_.swap(alive);
    for (uint32_t id : gone) remoteUnreachable(id);
    if (fds[0].revents & POLLIN) acceptPeer();  // after the sweep: it grows inbound_
  }
}

void Device::acceptPeer() {
  int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return;
  setNoDelay(fd);
  Hello hello;
  if (!recvAll(fd, &hello, sizeof(hello), stop_, 5) || hello.magic != kHelloMagic) {
    ::close(fd);
    return;
  }
  inbound_.push_back(Peer{fd, hello.deviceId});
}

bool Device::readPacket(int fd, uint32_t peer) {
  Inbound in;
  if (!recvAll(fd, &in.header, sizeof(in.header), stop_)) return false;
  const PacketHeader& h = in.header;
  if (h.magic != kPacketMagic) return false;
  bool carriesData =
      h.op == Op::kSend || h.op == Op::kWrite || h.op == Op::kWriteImm || h.op == Op::kReadResp;
  if (carriesData) {
    if (h.length > kMaxPayload) return false;
    in.payload.resize(h.length);
    if (h.length > 0 && !recvAll(fd, in.payload.data(), h.length, stop_)) return false;
  }
  std::lock_guard<std::mutex> lock(mutex);
  handleInbound(*this, peer, std::move(in));
  return true;
}

// ---- Link ------------------------------------------------------------------

Link::Link(Device* device, uint32_t remoteId) : device_(device), remoteId_(remoteId) {
  thread_ = std::thread([this] { run(); });
}

Link::~Link() {
  stop_.store(true);
  ready_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Link::enqueue(OutPacket packet) {
  if (failed_.load()) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(packet));
  }
  ready_.notify_one();
  return true;
}

bool Link::connectToPeer(int* out) {
  sockaddr_in addr = addressOf(remoteId_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kConnectSeconds);
  while (!stop_.load() && std::chrono::steady_clock::now() < deadline) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return false;
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 1000) == 1) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
      }
    }
    if (rc == 0) {
      setNoDelay(fd);
      Hello hello;
      hello.deviceId = device_->address();
      if (sendAll(fd, &hello, sizeof(hello), stop_)) {
        *out = fd;
        return true;
      }
    }
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void Link::run() {
  int fd = -1;
  bool ok = connectToPeer(&fd);
  while (ok && !stop_.load()) {
    OutPacket packet;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!ready_.wait_for(lock, std::chrono::milliseconds(kPollStepMs),
                           [this] { return !queue_.empty() || stop_.load(); })) {
        ok = !peerClosed(fd);
        continue;
      }
      if (queue_.empty()) break;
      packet = std::move(queue_.front());
      queue_.pop_front();
    }
    ok = sendAll(fd, &packet.header, sizeof(packet.header), stop_) &&
         (packet.payload.empty() ||
          sendAll(fd, packet.payload.data(), packet.payload.size(), stop_));
  }
  if (fd >= 0) ::close(fd);
  if (!ok && !stop_.load()) {
    failed_.store(true);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.clear();
    }
    device_->remoteUnreachable(remoteId_);
  }
}

}  // namespace softverbs
