// SPDX-License-Identifier: Apache-2.0
// ncclnet-transport-bench: a plugin's bandwidth through the reference
// transport against the same plugin driven directly, in one run.
//
//   ncclnet-transport-bench --plugin PATH [--mib 256] [--iters 5] [--channels 1]
//
// Both runs move the same bytes between two comms of one process, in
// SIMPLE steps of NCCL_BUFFSIZE / 8 with up to 8 steps in flight per
// channel: "direct" is a sender thread and a receiver thread calling
// isend/irecv/test; "transport" is two Transports whose device peers move
// sizes and signals only (no payload touched), so the difference is the
// transport's own cost. Both poll the same way (yield when a pass moved
// nothing). Prints both and the ratio (target >= 0.95). On a loaded host the
// ratio is noisy; run it on an idle machine with >= 4 cores.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ncclnet/host/loader.hpp"
#include "ncclnet/transport/host_device_peer.hpp"
#include "ncclnet/transport/transport.hpp"
#include "ncclnet_cli.hpp"

using namespace ncclnet;
using namespace ncclnet::transport;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kTimeout = std::chrono::seconds(120);

struct Options {
  std::string plugin;
  size_t bytes = size_t{256} << 20;
  int iters = 5;
  int channels = 1;
};

// Parses argv; nullopt: run, else the exit status (after --help or a usage
// error, printed).
std::optional<int> parse(int argc, char** argv, Options* o) {
  auto app = ncclnet::cli::makeApp(
      "ncclnet-transport-bench",
      "ncclnet-transport-bench --plugin PATH [--mib N] [--iters N] [--channels N]",
      "A plugin's bandwidth through the reference transport against the same plugin\n"
      "driven directly, in one run; prints both and the ratio (target >= 0.95).",
      "exit status: 0 measured, 1 a load or transfer failed, 2 usage error");
  size_t mib = o->bytes >> 20;
  app->add_option("--plugin", o->plugin, "the plugin (NCCL_NET_PLUGIN syntax)")->type_name("PATH");
  app->add_option("--mib", mib, "MiB moved per iteration (default 256)")->type_name("N");
  app->add_option("--iters", o->iters, "iterations (default 5)")->type_name("N");
  app->add_option("--channels", o->channels, "channels (default 1)")->type_name("N");
  if (std::optional<int> exit = ncclnet::cli::parse(*app, argc, argv)) return exit;
  o->bytes = mib << 20;
  auto usageError = [](const std::string& what) {
    return std::optional<int>(ncclnet::cli::usageError("ncclnet-transport-bench", what));
  };
  if (o->plugin.empty()) return usageError("no plugin: give --plugin");
  if (o->iters <= 0) return usageError("--iters must be at least 1");
  if (o->channels <= 0) return usageError("--channels must be at least 1");
  return std::nullopt;
}

#define BENCH_CHECK(call)                                                                   \
  do {                                                                                      \
    ncclResult_t benchRes = (call);                                                         \
    if (benchRes != ncclSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, benchRes); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// One comm pair and its registered 8-slot buffers.
struct DirectPair {
  void *listen = nullptr, *send = nullptr, *recv = nullptr, *smh = nullptr, *rmh = nullptr;
  std::vector<char> sbuf, rbuf;
};

double runDirect(host::NetView& net, void* ctx, const Options& o, size_t stepSize) {
  std::vector<DirectPair> pairs(o.channels);
  for (DirectPair& p : pairs) {
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    BENCH_CHECK(net.listen(ctx, 0, handle, &p.listen));
    ncclNetDeviceHandle_v12_t* none = nullptr;
    auto deadline = Clock::now() + kTimeout;
    while ((!p.send || !p.recv) && Clock::now() < deadline) {
      if (!p.send) BENCH_CHECK(net.connect(ctx, 0, handle, &p.send, &none));
      if (!p.recv) BENCH_CHECK(net.accept(p.listen, &p.recv, &none));
    }
    p.sbuf.assign(stepSize * kSteps, 1);
    p.rbuf.assign(stepSize * kSteps, 0);
    BENCH_CHECK(net.regMr(p.send, p.sbuf.data(), p.sbuf.size(), NCCL_PTR_HOST, &p.smh));
    BENCH_CHECK(net.regMr(p.recv, p.rbuf.data(), p.rbuf.size(), NCCL_PTR_HOST, &p.rmh));
  }
  size_t steps = o.bytes / stepSize / o.channels;
  auto sender = [&] {
    std::vector<std::vector<void*>> reqs(o.channels, std::vector<void*>(kSteps));
    std::vector<size_t> posted(o.channels), done(o.channels);
    for (bool busy = true; busy;) {
      busy = false;
      bool moved = false;
      for (int c = 0; c < o.channels; c++) {
        DirectPair& p = pairs[c];
        if (done[c] == steps) continue;
        busy = true;
        if (posted[c] < steps && posted[c] < done[c] + kSteps) {
          int slot = posted[c] % kSteps;
          BENCH_CHECK(net.isend(p.send, p.sbuf.data() + slot * stepSize, stepSize, 0, p.smh,
                                nullptr, &reqs[c][slot]));
          if (reqs[c][slot]) posted[c]++, moved = true;
        }
        if (done[c] < posted[c]) {
          int finished = 0, size = 0;
          BENCH_CHECK(net.test(reqs[c][done[c] % kSteps], &finished, &size));
          if (finished) done[c]++, moved = true;
        }
      }
      // Yield when idle, as the transport's progress thread does, so both
      // runs poll the same way.
      if (!moved) std::this_thread::yield();
    }
  };
  auto receiver = [&] {
    std::vector<std::vector<void*>> reqs(o.channels, std::vector<void*>(kSteps));
    std::vector<size_t> posted(o.channels), done(o.channels);
    for (bool busy = true; busy;) {
      busy = false;
      bool moved = false;
      for (int c = 0; c < o.channels; c++) {
        DirectPair& p = pairs[c];
        if (done[c] == steps) continue;
        busy = true;
        if (posted[c] < steps && posted[c] < done[c] + kSteps) {
          int slot = posted[c] % kSteps;
          void* data = p.rbuf.data() + slot * stepSize;
          size_t size = stepSize;
          int tag = 0;
          BENCH_CHECK(net.irecv(p.recv, 1, &data, &size, &tag, &p.rmh, nullptr, &reqs[c][slot]));
          if (reqs[c][slot]) posted[c]++, moved = true;
        }
        if (done[c] < posted[c]) {
          int finished = 0, sizes[1] = {};
          BENCH_CHECK(net.test(reqs[c][done[c] % kSteps], &finished, sizes));
          if (finished) done[c]++, moved = true;
        }
      }
      // Yield when idle, as the transport's progress thread does, so both
      // runs poll the same way.
      if (!moved) std::this_thread::yield();
    }
  };
  auto start = Clock::now();
  std::thread s(sender), r(receiver);
  s.join();
  r.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (DirectPair& p : pairs) {
    BENCH_CHECK(net.deregMr(p.send, p.smh));
    BENCH_CHECK(net.deregMr(p.recv, p.rmh));
    BENCH_CHECK(net.closeSend(p.send));
    BENCH_CHECK(net.closeRecv(p.recv));
    BENCH_CHECK(net.closeListen(p.listen));
  }
  return static_cast<double>(steps * stepSize * o.channels) / seconds / 1e9;
}

struct TransportSide {
  std::unique_ptr<Transport> transport;
  std::unique_ptr<HostDevicePeer> device;
};

double runTransport(TransportSide& a, TransportSide& b,
                    std::vector<std::unique_ptr<Connection>>& sends,
                    std::vector<std::unique_ptr<Connection>>& recvs, const Options& o,
                    size_t stepSize) {
  size_t perChannel = o.bytes / stepSize / o.channels * stepSize;
  ProxyOpSpec sendOp, recvOp;
  std::vector<DeviceWork> sendWorks, recvWorks;
  for (int c = 0; c < o.channels; c++) {
    int nsteps = planSteps(perChannel, stepSize, 1).nsteps;
    sendOp.subs.push_back({sends[c].get(), nsteps});
    recvOp.subs.push_back({recvs[c].get(), nsteps});
    DeviceWork w{.connection = sends[c]->device(),
                 .protocol = Protocol::Simple,
                 .sliceSteps = 1,
                 .chunkSteps = 1,
                 .nbytes = perChannel,
                 .sliceCapacity = stepSize,
                 .seed = 0,
                 .mode = DataMode::None};
    sendWorks.push_back(w);
    w.connection = recvs[c]->device();
    recvWorks.push_back(w);
  }
  auto start = Clock::now();
  std::shared_ptr<OpCompletion> sop, rop;
  std::shared_ptr<DeviceCompletion> sk, rk;
  BENCH_CHECK(b.transport->post(recvOp, &rop));
  BENCH_CHECK(a.transport->post(sendOp, &sop));
  BENCH_CHECK(b.device->launch(
      recvWorks, std::chrono::duration_cast<std::chrono::milliseconds>(kTimeout), &rk));
  BENCH_CHECK(a.device->launch(
      sendWorks, std::chrono::duration_cast<std::chrono::milliseconds>(kTimeout), &sk));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(kTimeout);
  std::string why;
  BENCH_CHECK(sk->wait(ms, &why));
  BENCH_CHECK(rk->wait(ms, &why));
  BENCH_CHECK(sop->wait(ms, &why));
  BENCH_CHECK(rop->wait(ms, &why));
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(perChannel * o.channels) / seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (std::optional<int> exit = parse(argc, argv, &o)) return *exit;
  host::LoaderOptions lo;
  lo.pluginList = o.plugin;
  lo.netName = std::string();
  host::Loader loader(lo);
  std::unique_ptr<host::LoadedPlugin> plugin;
  if (loader.load(&plugin) != ncclSuccess) {
    std::fprintf(stderr, "cannot load %s: %s\n", o.plugin.c_str(), loader.report().outcome.c_str());
    return 1;
  }
  host::NetView& net = plugin->net();
  TransportConfig config;
  size_t stepSize = config.stepSize(Protocol::Simple);

  TransportSide a, b;
  TransportOptions to;
  to.config = config;
  BENCH_CHECK(Transport::create(net, to, &a.transport));
  BENCH_CHECK(Transport::create(net, to, &b.transport));
  a.device = std::make_unique<HostDevicePeer>();
  b.device = std::make_unique<HostDevicePeer>();
  std::vector<std::unique_ptr<Connection>> sends(o.channels), recvs(o.channels);
  for (int c = 0; c < o.channels; c++) {
    ConnectionSpec spec{.netDev = 0, .channelId = c, .tpRank = 0, .tpRemoteRank = 1};
    ConnectionSpec rspec{.netDev = 0, .channelId = c, .tpRank = 1, .tpRemoteRank = 0};
    NetHandle h;
    BENCH_CHECK(b.transport->recvSetup(rspec, &h, &recvs[c]));
    BENCH_CHECK(a.transport->sendSetup(spec, &sends[c]));
    auto deadline = Clock::now() + kTimeout;
    for (bool pending = true; pending && Clock::now() < deadline;) {
      ncclResult_t s = sends[c]->connect(h), r = recvs[c]->accept();
      if (s != ncclSuccess && s != ncclInProgress) BENCH_CHECK(s);
      if (r != ncclSuccess && r != ncclInProgress) BENCH_CHECK(r);
      pending = s == ncclInProgress || r == ncclInProgress;
    }
  }
  void* ctx = nullptr;
  ncclNetCommConfig_v12_t cc{.trafficClass = -1};
  BENCH_CHECK(net.init(&ctx, 0xbe4c, &cc, host::stderrLogger(), host::profilerCallback()));

  std::vector<double> direct, through;
  for (int i = 0; i < o.iters; i++) {  // interleaved, so drift hits both alike
    direct.push_back(runDirect(net, ctx, o, stepSize));
    through.push_back(runTransport(a, b, sends, recvs, o, stepSize));
  }
  std::sort(direct.begin(), direct.end());
  std::sort(through.begin(), through.end());
  double d = direct[direct.size() / 2], t = through[through.size() / 2];
  std::printf("plugin %s (v%d), %d channel(s), %zu MiB per run, step %zu KiB, median of %d\n",
              plugin->name(), plugin->version(), o.channels, o.bytes >> 20, stepSize >> 10,
              o.iters);
  std::printf("direct     %8.2f GB/s\n", d);
  std::printf("transport  %8.2f GB/s\n", t);
  std::printf("ratio      %8.3f (target >= 0.95)\n", t / d);
  sends.clear();
  recvs.clear();
  a.device.reset();
  b.device.reset();
  a.transport.reset();
  b.transport.reset();
  BENCH_CHECK(net.finalize(ctx));
  return 0;
}
