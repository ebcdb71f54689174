// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): NCCL's net transport, host side, in one
// object per process (NCCL's proxy state): connection setup, buffers, shared
// pools and comms, and one progress thread that drives every posted
// operation through the plugin exactly as NCCL's proxy does.
//
//   auto plugin = ...;                               // host::Loader
//   std::unique_ptr<Transport> t;
//   Transport::create(plugin->net(), {}, &t);
//   std::unique_ptr<Connection> recv;  NetHandle h;
//   t->recvSetup(spec, &h, &recv);                   // listen
//   ... hand h to the sender, who calls sendSetup + connect(h) ...
//   while (recv->accept() == ncclInProgress) {}      // with a deadline
//   std::shared_ptr<OpCompletion> op;
//   t->post({Protocol::Simple, 1, 1, {{recv.get(), nsteps}}}, &op);
//   op->wait(timeout);                               // the device peer consumes
#pragma once

#include <cstdint>
#include <memory>

#include "ncclnet/host/net_view.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/transport/config.hpp"
#include "ncclnet/transport/connection.hpp"
#include "ncclnet/transport/memory.hpp"
#include "ncclnet/transport/proxy_op.hpp"
#include "ncclnet/transport/steps.hpp"

namespace ncclnet::transport {

namespace detail {
class TransportState;
}

// How a Transport registered its connection buffers (for reports: a run
// on GPU memory says how many registrations went through DMA-BUF).
struct RegistrationCounts {
  uint64_t host = 0;    // regMr(NCCL_PTR_HOST)
  uint64_t device = 0;  // regMr(MemoryProvider::devicePtrType()): device buffers, no DMA-BUF
  uint64_t dmaBuf = 0;  // regMrDmaBuf of an exported device buffer
};

struct TransportOptions {
  TransportConfig config;
  Logger logger{nullptr, "NET/transport"};
  std::shared_ptr<MemoryProvider> memory;  // nullptr: HostMemoryProvider
  uint64_t commId = 0;                     // passed to the plugin's init
  int trafficClass = -1;                   // NCCL_NET_TRAFFIC_CLASS_UNDEF
};

class Transport {
 public:
  // Calls the plugin's init (one context per Transport, as per communicator
  // in NCCL) and starts the progress thread.
  static ncclResult_t create(host::NetView& net, TransportOptions options,
                             std::unique_ptr<Transport>* out);
  // Stops the progress thread and finalizes the plugin context. Every
  // Connection must be destroyed first.
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // NCCL's sendSetup + sendProxySetup: reads the device properties.
  ncclResult_t sendSetup(const ConnectionSpec& spec, std::unique_ptr<Connection>* out);
  // NCCL's recvSetup + recvProxySetup: reads the properties and listens;
  // `handle` is what the sender connects to.
  ncclResult_t recvSetup(const ConnectionSpec& spec, NetHandle* handle,
                         std::unique_ptr<Connection>* out);

  // Queues an operation for the progress thread. Operations on the same
  // connection (or on the same p2p pool) run one after another in posting
  // order, as NCCL chains them; others run concurrently.
  ncclResult_t post(const ProxyOpSpec& op, std::shared_ptr<OpCompletion>* out);

  // Payload one slice carries on `c` for protocol `p` (what both the proxy
  // operation and the device work are planned with).
  size_t sliceCapacity(const Connection& c, Protocol p, int sliceSteps) const;

  const TransportConfig& config() const;
  host::NetView& net();
  // Every registration made so far (a shared pool counts once per
  // connection that registers it, as NCCL registers it).
  RegistrationCounts registrations() const;
  MemoryProvider& memory();  // where connection (and test user) memory comes from

 private:
  explicit Transport(std::unique_ptr<detail::TransportState> core);
  std::unique_ptr<detail::TransportState> core_;
};

}  // namespace ncclnet::transport
