// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the Transport object — plugin context,
// connection setup (NCCL's sendSetup/recvSetup and their proxy halves) and
// posting operations.
#include "ncclnet/transport/transport.hpp"

#include "ncclnet/host/callbacks.hpp"

#include <algorithm>

#include "ncclnet/transport/steps.hpp"

#include "progress_engine.hpp"
#include "transport_state.hpp"

namespace ncclnet::transport {

namespace detail {

TransportState::TransportState(host::NetView& netView, TransportConfig cfg, Logger logger,
                               std::shared_ptr<MemoryProvider> mem)
    : net(netView), config(cfg), log(logger), memory(std::move(mem)) {}

TransportState::~TransportState() = default;

}  // namespace detail

using detail::ConnectionState;
using detail::TransportState;

Transport::Transport(std::unique_ptr<TransportState> core) : core_(std::move(core)) {}

ncclResult_t Transport::create(host::NetView& net, TransportOptions options,
                               std::unique_ptr<Transport>* out) {
  RT_CHECK(options.logger, options.config.validate(options.logger));
  if (!options.memory) options.memory = std::make_shared<HostMemoryProvider>();
  auto core = std::make_unique<TransportState>(net, options.config, options.logger, options.memory);
  ncclNetCommConfig_v12_t commConfig{.trafficClass = options.trafficClass};
  RT_CHECK(core->log, net.init(&core->ctx, options.commId, &commConfig,
                               host::loggerFunction(options.logger), host::profilerCallback()));
  core->initialized = true;
  core->engine = std::make_unique<detail::ProgressEngine>(*core);
  out->reset(new Transport(std::move(core)));
  return ncclSuccess;
}

Transport::~Transport() {
  core_->engine.reset();
  if (core_->liveConnections != 0) {
    NCCLNET_WARN(core_->log, "transport destroyed with %d connections still open",
                 core_->liveConnections);
  }
  if (core_->initialized) {
    ncclResult_t res = core_->net.finalize(core_->ctx);
    if (res != ncclSuccess) NCCLNET_WARN(core_->log, "finalize returned %d", res);
  }
}

namespace {

// NCCL's proxy setup: the properties decide groups, device handles and the
// p2p pool; maxP2pBytes must lie in (0, 1 TiB].
ncclResult_t readProperties(TransportState& core, ConnectionState& c) {
  ncclNetProperties_v12_t props{};
  RT_CHECK(core.log, core.net.getProperties(c.spec.netDev, &props));
  if (props.maxP2pBytes == 0 || props.maxP2pBytes > NCCL_MAX_NET_SIZE_BYTES) {
    NCCLNET_WARN(core.log, "device %d: maxP2pBytes %zu outside (0, %llu]", c.spec.netDev,
                 props.maxP2pBytes, static_cast<unsigned long long>(NCCL_MAX_NET_SIZE_BYTES));
    return ncclInternalError;
  }
  c.maxRecvs = props.maxRecvs;
  c.netDeviceType = props.netDeviceType;
  c.netDeviceVersion = props.netDeviceVersion;
  // p2p connections other than connIndex 0 use the pool unless disabled.
  bool wantShared = core.config.sharedBuffers == -2 ? true : core.config.sharedBuffers != 0;
  c.shared = !c.spec.graph && c.spec.connIndex != 0 && wantShared;
  c.sharedComm = c.shared && c.maxRecvs > 1 && core.config.sharedComms;
  // NCCL's rule: GPU-direct buffers are registered through DMA-BUF when the
  // plugin takes it, the GPU and driver can export it and
  // NCCL_DMABUF_ENABLE is not 0; otherwise with regMr(NCCL_PTR_CUDA).
  c.useDmaBuf = c.spec.useGdr && (props.ptrSupport & NCCL_PTR_DMABUF) != 0 &&
                core.config.dmaBufEnable && core.memory->canExportDmaBuf() &&
                core.net.provides(host::Optional::RegMrDmaBuf);
  if (c.spec.tpRemoteProxyRank < 0) c.spec.tpRemoteProxyRank = c.spec.tpRemoteRank;
  return ncclSuccess;
}

}  // namespace

ncclResult_t Transport::sendSetup(const ConnectionSpec& spec, std::unique_ptr<Connection>* out) {
  auto state = std::make_unique<ConnectionState>();
  state->core = core_.get();
  state->direction = Direction::Send;
  state->spec = spec;
  std::lock_guard<std::mutex> lock(core_->setupMutex);
  RT_CHECK(core_->log, readProperties(*core_, *state));
  core_->liveConnections++;
  out->reset(new Connection(std::move(state)));
  return ncclSuccess;
}

ncclResult_t Transport::recvSetup(const ConnectionSpec& spec, NetHandle* handle,
                                  std::unique_ptr<Connection>* out) {
  auto state = std::make_unique<ConnectionState>();
  state->core = core_.get();
  state->direction = Direction::Recv;
  state->spec = spec;
  std::lock_guard<std::mutex> lock(core_->setupMutex);
  RT_CHECK(core_->log, readProperties(*core_, *state));
  RT_CHECK(core_->log, core_->net.listen(core_->ctx, spec.netDev, state->listenHandle.bytes,
                                         &state->listenComm));
  *handle = state->listenHandle;
  core_->liveConnections++;
  out->reset(new Connection(std::move(state)));
  return ncclSuccess;
}

size_t Transport::sliceCapacity(const Connection& c, Protocol p, int sliceSteps) const {
  const ConnectionState& s = const_cast<Connection&>(c).state();
  if (p == Protocol::Simple && s.shared) return core_->config.p2pChunkSize * sliceSteps;
  return transport::sliceCapacity(p, core_->config.stepSize(p), sliceSteps);
}

ncclResult_t Transport::post(const ProxyOpSpec& spec, std::shared_ptr<OpCompletion>* out) {
  const Logger& log = core_->log;
  auto completion = std::make_shared<OpCompletion>();
  auto op = std::make_unique<detail::ProxyOpState>();
  op->protocol = spec.protocol;
  op->sliceSteps = spec.sliceSteps;
  op->chunkSteps = spec.chunkSteps;
  op->completion = completion;
  if (spec.subs.empty() || spec.subs.size() > static_cast<size_t>(kMaxSubs) ||
      spec.sliceSteps < 1 || spec.chunkSteps < 1 ||
      (spec.protocol != Protocol::Simple && spec.sliceSteps != 1)) {
    NCCLNET_WARN(log, "post: %zu subs (1..%d), sliceSteps %d, chunkSteps %d (LL/LL128 need 1)",
                 spec.subs.size(), kMaxSubs, spec.sliceSteps, spec.chunkSteps);
    return ncclInvalidArgument;
  }
  op->direction = spec.subs[0].connection->direction();
  bool anyShared = false;
  for (const SubOpSpec& sub : spec.subs) {
    ConnectionState& c = sub.connection->state();
    if (!c.connected || c.direction != op->direction || sub.nsteps < 1 ||
        sub.nsteps % spec.sliceSteps != 0 || c.buffers[index(spec.protocol)] == nullptr) {
      NCCLNET_WARN(log,
                   "post: sub on %s connection (ch %d) not usable: connected %d, nsteps %d, "
                   "%s buffer %s",
                   directionName(c.direction), c.spec.channelId, c.connected, sub.nsteps,
                   protocolName(spec.protocol),
                   c.buffers[index(spec.protocol)] ? "present" : "absent");
      return ncclInvalidArgument;
    }
    if (!c.needsProxyProgress) continue;  // the plugin's device side moves it
    // A registered sub carries the handle regMr gave: NCCL posts one only
    // when that handle was not NULL (src/transport/net.cc netRegisterBuffer;
    // runRound falls back to the connection's buffers as NCCL does).
    if (sub.userBuffer != nullptr || sub.userMhandle != nullptr) {
      size_t steps = std::max<size_t>(1, divUp(sub.userBytes, core_->config.maxNetSize));
      if (spec.protocol != Protocol::Simple || spec.sliceSteps != 1 || sub.userMhandle == nullptr ||
          static_cast<size_t>(sub.nsteps) != steps) {
        NCCLNET_WARN(log,
                     "post: a registered buffer needs SIMPLE, sliceSteps 1, its mhandle and %zu "
                     "steps of maxNetSize for %zu bytes (got %d)",
                     steps, sub.userBytes, sub.nsteps);
        return ncclInvalidArgument;
      }
      op->subs.push_back(detail::SubProgress{.conn = &c,
                                             .nsteps = sub.nsteps,
                                             .userBuffer = sub.userBuffer,
                                             .userBytes = sub.userBytes,
                                             .userMhandle = sub.userMhandle});
      op->keys.emplace_back(&c, -1);
      continue;
    }
    bool pooled = c.shared && spec.protocol == Protocol::Simple;
    if (pooled && spec.sliceSteps != 1) {
      NCCLNET_WARN(log, "post: shared (p2p) SIMPLE operations use sliceSteps 1");
      return ncclInvalidArgument;
    }
    anyShared = anyShared || pooled;
    op->subs.push_back(detail::SubProgress{.conn = &c, .nsteps = sub.nsteps});
    // The connection's step counter and slots are its own: one operation
    // at a time on it. A pooled operation also owns its pool channel's slots.
    op->keys.emplace_back(&c, -1);
    if (pooled) op->keys.emplace_back(c.pool, c.spec.channelId);
  }
  if (anyShared && op->subs.size() > static_cast<size_t>(kSharedSteps)) {
    NCCLNET_WARN(log, "post: a shared operation has at most %d subs", kSharedSteps);
    return ncclInvalidArgument;
  }
  *out = completion;
  if (op->subs.empty()) {
    completion->finish(ncclSuccess);
    return ncclSuccess;
  }
  core_->engine->post(std::move(op));
  return ncclSuccess;
}

const TransportConfig& Transport::config() const {
  return core_->config;
}
host::NetView& Transport::net() {
  return core_->net;
}
RegistrationCounts Transport::registrations() const {
  return RegistrationCounts{.host = core_->hostRegistrations.load(),
                            .device = core_->deviceRegistrations.load(),
                            .dmaBuf = core_->dmaBufRegistrations.load()};
}
MemoryProvider& Transport::memory() {
  return *core_->memory;
}

}  // namespace ncclnet::transport
