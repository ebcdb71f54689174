// SPDX-License-Identifier: Apache-2.0
// softverbs: one software RoCE v2 port per device, per process. A device
// listens on 127.a.b.c:<port>, where a.b.c is its 24-bit id; the same id is
// the tail of every GID, so a destination GID names the peer's address the
// way a RoCE GID names an IP address. Requests travel over one outbound TCP
// link per peer (a writer thread each); inbound links are read by one
// progress thread, which executes requests as the responder.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "objects.hpp"
#include "wire.hpp"

namespace softverbs {

class Device;

// Packets to one peer device, written in order by a thread of its own, so
// that neither the application nor the progress thread ever blocks on TCP.
class Link {
 public:
  Link(Device* device, uint32_t remoteId);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // False when the peer is unreachable (the packet is dropped).
  bool enqueue(OutPacket packet);

 private:
  void run();
  bool connectToPeer(int* fd);

  Device* device_;
  uint32_t remoteId_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<OutPacket> queue_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

class Device {
 public:
  static constexpr int kMaxDevices = 4;
  static constexpr int kGidTableLen = 4;
  static constexpr uint8_t kPort = 1;

  // SOFTVERBS_DEVICES (1..4, default 1).
  static int count();
  static ibv_device* verbsDevice(int index);
  static int indexOf(const ibv_device* device);  // -1: not one of ours
  // The device with this index, opened for one more context; nullptr (and
  // errno) when its listener cannot be set up.
  static Device* acquire(int index);
  // The device with this index if this process has it open (one more
  // reference, released with release()); nullptr otherwise.
  static Device* acquireOpen(int index);
  static void release(Device* device);

  static uint32_t idFor(int index);
  static uint64_t guidFor(int index);  // host order
  // The address (network octet and device id) a GID of any softverbs port
  // carries; false for others.
  static bool addressFromGid(const ibv_gid& gid, uint32_t* address);

  int index() const { return index_; }
  uint32_t id() const { return id_; }
  // Where the device listens and how peers name it: the IPv4 address
  // SOFTVERBS_NET.a.b.c (127 unless set) with a.b.c = id(). Another
  // network than 127 lets peers in other network namespaces reach it
  // through routes (scripts/netns/run.sh).
  uint32_t address() const { return address_; }
  void gid(int index, ibv_gid* out, ibv_gid_type* type) const;
  // The P_Key table (SOFTVERBS_PKEYS, default one entry: 0xffff).
  int pkeyCount() const { return static_cast<int>(pkeys_.size()); }
  bool pkey(int index, uint16_t* out) const;
  // Whether an injected IBV_EVENT_PORT_ERR took the port down (until
  // IBV_EVENT_PORT_ACTIVE).
  bool portDown() const { return portDown_.load(); }
  void setPortDown(bool down) { portDown_.store(down); }

  // Guards every QP, MR, context list and their queues on this device.
  std::mutex mutex;

  uint32_t addQp(Qp* qp);
  void removeQp(uint32_t qpn);
  Qp* findQp(uint32_t qpn);
  void addMr(Mr* mr);  // assigns lkey and rkey
  void removeMr(uint32_t key);
  Mr* findMr(uint32_t key);
  void addContext(Context* context);
  void removeContext(Context* context);
  // Queues a device or port event on every context of the device.
  void broadcast(const ibv_async_event& event);
  // IBV_EVENT_DEVICE_FATAL: every QP goes to the error state.
  void failAllQps();

  // Hands a packet to the link towards `remoteId` (mutex held). False when
  // that peer is unreachable.
  bool transmit(uint32_t remoteId, OutPacket packet);
  // A link found `remoteId` gone: requests to it fail as retries exhausted.
  void remoteUnreachable(uint32_t remoteId);

 private:
  explicit Device(int index);
  ~Device();
  bool start();
  void progress();
  void acceptPeer();
  bool readPacket(int fd, uint32_t peer);

  int index_;
  uint32_t id_;
  uint32_t address_;  // SOFTVERBS_NET.a.b.c, a.b.c = id_
  std::vector<uint16_t> pkeys_;
  std::atomic<bool> portDown_{false};
  int refs_ = 0;
  int listenFd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread progress_;
  uint32_t nextQpn_ = 0x100;
  uint32_t nextKey_ = 0x1000;
  std::unordered_map<uint32_t, Qp*> qps_;
  std::unordered_map<uint32_t, Mr*> mrs_;
  std::vector<Context*> contexts_;
  std::map<uint32_t, std::unique_ptr<Link>> links_;
  struct Peer {
    int fd;
    uint32_t id;
  };
  std::vector<Peer> inbound_;  // touched by the progress thread only
};

// TCP port every device listens on (SOFTVERBS_PORT, default 4791, RoCE v2's).
int listenPort();

}  // namespace softverbs
