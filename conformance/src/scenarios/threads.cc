// SPDX-License-Identifier: Apache-2.0
// Threads (rule 40): NCCL calls a plugin from several threads at once: the
// proxy progress threads of several GPUs drive their own comms while a
// service thread registers user buffers. Here every comm gets its own thread
// on both ranks, and one more thread registers and deregisters memory on the
// first comm while data moves on it.
#include <atomic>
#include <thread>

#include "harness/wire.hpp"
#include "scenario/registry.hpp"
#include "scenario/thread_failures.hpp"

namespace conformance {

namespace {

constexpr int kComms = 4;
constexpr int kMessages = 32;
constexpr size_t kSize = 65536;

// Polls test() until done, the plugin errs, or the time limit passes.
bool waitDone(Ctx& c, void* request, int* size, double limit, const std::string& what,
              ThreadFailures* failures) {
  int done = 0;
  while (!done) {
    ncclResult_t res = c.net().test(request, &done, size);
    if (res != ncclSuccess) {
      failures->add(format("test(%s) returned %s", what.c_str(), resultText(res).c_str()));
      return false;
    }
    if (!done && nowSeconds() > limit) {
      failures->add(format("test(%s) not done in time", what.c_str()));
      return false;
    }
  }
  return true;
}

// Moves kMessages messages over one comm; the receiver checks every byte.
void driveComm(Ctx& c, void* comm, void* mhandle, Buffer* buffer, int index, double limit,
               ThreadFailures* failures) {
  bool sender = c.rank() == 0;
  for (int m = 0; m < kMessages && failures->count() == 0; m++) {
    uint64_t seed = 4000 + static_cast<uint64_t>(index) * 100 + m;
    std::string what = format("comm %d message %d", index, m);
    if (sender)
      buffer->fill(seed, 0, kSize);
    else
      buffer->clear(0, 0, kSize);
    void* request = nullptr;
    while (request == nullptr) {  // NULL: not now, try again (rule 29)
      void* data = buffer->data();
      size_t size = kSize;
      int tag = index;
      ncclResult_t res =
          sender ? c.net().isend(comm, data, kSize, tag, mhandle, nullptr, &request)
                 : c.net().irecv(comm, 1, &data, &size, &tag, &mhandle, nullptr, &request);
      if (res != ncclSuccess) {
        failures->add(format("%s(%s) returned %s", sender ? "isend" : "irecv", what.c_str(),
                             resultText(res).c_str()));
        return;
      }
      if (request == nullptr && nowSeconds() > limit) {
        failures->add(
            format("%s(%s) kept returning NULL", sender ? "isend" : "irecv", what.c_str()));
        return;
      }
    }
    int size = -1;
    if (!waitDone(c, request, &size, limit, what, failures)) return;
    if (!sender &&
        (size != static_cast<int>(kSize) || buffer->verify(seed, 0, kSize) != Buffer::kMismatch)) {
      failures->add(format("%s arrived with %d B or wrong bytes", what.c_str(), size));
      return;
    }
  }
}

void concurrentComms(Ctx& c) {
  std::vector<void*> comms;
  std::vector<Buffer> buffers;
  std::vector<void*> mhandles;
  buffers.reserve(kComms);
  for (int i = 0; i < kComms; i++) {
    comms.push_back(c.link(0, 1, format("comm %d", i)));
    buffers.emplace_back(kSize);
    mhandles.push_back(c.reg(comms[i], buffers[i].data(), kSize));
  }
  c.barrier("comms ready");
  ThreadFailures failures;
  double limit = nowSeconds() + c.waitLimit();
  std::atomic<bool> moving{true};
  // The service thread's part: user-buffer registrations on a busy comm.
  std::thread registrar([&] {
    Buffer scratch(kSize);
    while (moving.load() && failures.count() == 0) {
      void* mh = nullptr;
      ncclResult_t res = c.net().regMr(comms[0], scratch.data(), kSize, NCCL_PTR_HOST, &mh);
      if (res == ncclSuccess) res = c.net().deregMr(comms[0], mh);
      if (res != ncclSuccess) {
        failures.add(format("regMr/deregMr on a busy comm returned %s", resultText(res).c_str()));
      }
    }
  });
  std::vector<std::thread> workers;
  for (int i = 0; i < kComms; i++) {
    workers.emplace_back(driveComm, std::ref(c), comms[i], mhandles[i], &buffers[i], i, limit,
                         &failures);
  }
  for (auto& t : workers) t.join();
  moving = false;
  registrar.join();
  CONF_EXPECT(failures.count() == 0, Rule::ThreadSafe,
              "with %d comms driven from %d threads and a registering thread: %s (%d failures)",
              kComms, kComms, failures.first().c_str(), failures.count());
  c.barrier("all moved");
  for (int i = 0; i < kComms; i++) c.dereg(comms[i], mhandles[i]);
}

}  // namespace

void addThreadScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Threads",
                 .name = "ConcurrentCommsAndRegistration",
                 .rule = Rule::ThreadSafe,
                 .ranks = 2,
                 .run = concurrentComms,
                 .summary = "4 comms each driven by its own thread while another thread registers "
                            "memory on a busy comm; every byte verified"});
}

}  // namespace conformance
