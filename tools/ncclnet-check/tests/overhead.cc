// SPDX-License-Identifier: Apache-2.0
// ncclnet-check-overhead: what the checker adds to each message, measured
// in one process on sdk-testnet (whose sends and receives meet in memory,
// so the plugin's own cost is small and steady): CPU time per message
// (isend, irecv, and their tests until done) through the plugin directly and
// through libnccl-net-sdk-check.so, in alternating rounds. Thread CPU time,
// not wall time, so that a loaded machine's descheduling does not count.
// Then the same for a test() that finds nothing done, the call NCCL's proxy
// repeats most.
//
//   export NCCLNET_CHECK_PLUGIN=build/sdk/tests/libnccl-net-sdk-testnet.so
//   ncclnet-check-overhead CHECKER.so TESTNET.so [messages] [rounds]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ncclnet/host/loader.hpp"

namespace {

double threadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void quiet(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

struct Subject {
  std::unique_ptr<ncclnet::host::LoadedPlugin> plugin;
  void* ctx = nullptr;
  void* listen = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  void* sendMr = nullptr;
  void* recvMr = nullptr;
  std::vector<char> sendBuf = std::vector<char>(4096);
  std::vector<char> recvBuf = std::vector<char>(4096);

  ncclnet::host::NetView& net() { return plugin->net(); }

  bool open(const std::string& path) {
    ncclnet::host::LoaderOptions options;
    options.pluginList = path;
    options.netName = std::string();
    options.checkInit = false;
    options.logger = ncclnet::Logger(quiet, "overhead");
    ncclnet::host::Loader loader(options);
    if (loader.load(&plugin) != ncclSuccess) {
      std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(), loader.report().outcome.c_str());
      return false;
    }
    ncclNetCommConfig_v12_t config{};
    config.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    if (net().init(&ctx, 1, &config, quiet, nullptr) != ncclSuccess ||
        net().listen(ctx, 0, handle, &listen) != ncclSuccess)
      return false;
    for (int i = 0; i < 100 && (send == nullptr || recv == nullptr); i++) {
      if (send == nullptr && net().connect(ctx, 0, handle, &send, nullptr) != ncclSuccess)
        return false;
      if (recv == nullptr && net().accept(listen, &recv, nullptr) != ncclSuccess) return false;
    }
    return send != nullptr && recv != nullptr &&
           net().regMr(send, sendBuf.data(), sendBuf.size(), NCCL_PTR_HOST, &sendMr) ==
               ncclSuccess &&
           net().regMr(recv, recvBuf.data(), recvBuf.size(), NCCL_PTR_HOST, &recvMr) == ncclSuccess;
  }

  bool waitDone(void* request) {
    int done = 0, size = 0;
    while (!done) {
      if (net().test(request, &done, &size) != ncclSuccess) return false;
    }
    return true;
  }

  // CPU nanoseconds per message over `messages` messages of 64 bytes.
  double perMessage(int messages) {
    void* data = recvBuf.data();
    size_t size = recvBuf.size();
    int tag = 0;
    double start = threadSeconds();
    for (int i = 0; i < messages; i++) {
      void* r = nullptr;
      void* s = nullptr;
      if (net().irecv(recv, 1, &data, &size, &tag, &recvMr, nullptr, &r) != ncclSuccess ||
          net().isend(send, sendBuf.data(), 64, tag, sendMr, nullptr, &s) != ncclSuccess ||
          r == nullptr || s == nullptr || !waitDone(s) || !waitDone(r)) {
        std::fprintf(stderr, "message %d failed\n", i);
        std::exit(1);
      }
    }
    return (threadSeconds() - start) * 1e9 / messages;
  }

  // CPU nanoseconds per test() of a receive whose send is not posted yet:
  // the poll that NCCL's proxy repeats on every outstanding request until
  // one completes. Each receive takes `polls` of them, then its send.
  double perPoll(int messages, int polls) {
    void* data = recvBuf.data();
    size_t size = recvBuf.size();
    int tag = 0;
    double spent = 0;
    for (int i = 0; i < messages; i++) {
      void* r = nullptr;
      void* s = nullptr;
      int done = 0, got = 0;
      if (net().irecv(recv, 1, &data, &size, &tag, &recvMr, nullptr, &r) != ncclSuccess ||
          r == nullptr) {
        std::fprintf(stderr, "receive %d failed\n", i);
        std::exit(1);
      }
      double start = threadSeconds();
      for (int p = 0; p < polls && !done; p++) {
        if (net().test(r, &done, &got) != ncclSuccess) std::exit(1);
      }
      spent += threadSeconds() - start;
      if (done || net().isend(send, sendBuf.data(), 64, tag, sendMr, nullptr, &s) != ncclSuccess ||
          s == nullptr || !waitDone(s) || !waitDone(r)) {
        std::fprintf(stderr, "receive %d done without a send, or its send failed\n", i);
        std::exit(1);
      }
    }
    return spent * 1e9 / (double(messages) * polls);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CHECKER.so PLUGIN.so [messages] [rounds]\n", argv[0]);
    return 2;
  }
  int messages = argc > 3 ? std::atoi(argv[3]) : 200000;
  int rounds = argc > 4 ? std::atoi(argv[4]) : 7;
  Subject checked, direct;
  if (!checked.open(argv[1]) || !direct.open(argv[2])) return 1;
  std::vector<double> c, d, delta;
  checked.perMessage(messages / 10);  // warm both
  direct.perMessage(messages / 10);
  for (int round = 0; round < rounds; round++) {
    double a = round % 2 ? checked.perMessage(messages) : direct.perMessage(messages);
    double b = round % 2 ? direct.perMessage(messages) : checked.perMessage(messages);
    double checkedNs = round % 2 ? a : b;
    double directNs = round % 2 ? b : a;
    c.push_back(checkedNs);
    d.push_back(directNs);
    delta.push_back(checkedNs - directNs);
  }
  std::printf("%d rounds of %d messages (isend + irecv + tests until done), CPU ns per message\n",
              rounds, messages);
  std::printf(
      "direct  %.0f (min %.0f)\nchecked %.0f (min %.0f)\nadded   %.0f (median of "
      "per-round differences)\n",
      median(d), *std::min_element(d.begin(), d.end()), median(c),
      *std::min_element(c.begin(), c.end()), median(delta));

  const int polls = 100, receives = std::max(1, messages / polls);
  std::vector<double> pc, pd, pdelta;
  for (int round = 0; round < rounds; round++) {
    double first = round % 2 ? checked.perPoll(receives, polls) : direct.perPoll(receives, polls);
    double second = round % 2 ? direct.perPoll(receives, polls) : checked.perPoll(receives, polls);
    pc.push_back(round % 2 ? first : second);
    pd.push_back(round % 2 ? second : first);
    pdelta.push_back(pc.back() - pd.back());
  }
  std::printf("%d rounds of %d receives x %d tests that find nothing done, CPU ns per test\n",
              rounds, receives, polls);
  std::printf("direct  %.0f\nchecked %.0f\nadded   %.0f (median of per-round differences)\n",
              median(pd), median(pc), median(pdelta));
  return 0;
}
