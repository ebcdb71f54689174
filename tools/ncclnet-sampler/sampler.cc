// SPDX-License-Identifier: Apache-2.0
// ncclnet-sampler: a CPU sampling profiler for a process that runs NCCL with
// a plugin, on machines that have no perf, gdb or strace (containers, the
// GPU hosts of a CI). Preload it into each rank:
//
//   LD_PRELOAD=libncclnet-sampler.so NCCLNET_SAMPLER_OUT=DIR  <rank command>
//
// Every thread gets a timer on its own CPU clock (created at its start,
// through pthread_create), so each thread is sampled in proportion to the
// CPU it burns: NCCL's proxy progress thread, a plugin's helpers, the CUDA
// driver's. At exit the process writes DIR/sampler.<pid>.txt
// (report.hpp), or DIR/sampler.<tag>.<pid>.txt with NCCLNET_SAMPLER_TAG
// set (which run a report belongs to). NCCLNET_SAMPLER_HZ: samples per
// CPU-second asked for (default 500; the kernel's tick caps it, and each
// sample is weighed by the CPU time it stands for); NCCLNET_SAMPLER_TOP:
// functions listed per thread (default 15).
//
// State: a preloaded library has nothing but process-global state to hang
// its timers and samples on; it is set up by the constructor and read by
// the destructor, and the handler only stores into memory mapped up front.
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "report.hpp"
#include "samples.hpp"

namespace ncclnet::sampler {
namespace {

struct Settings {
  std::string outDir;
  std::string tag;
  long hz = 500;
  int top = 15;
};

SampleStore* gStore = nullptr;
std::atomic<bool> gActive{false};
Settings* gSettings = nullptr;
std::chrono::steady_clock::time_point gStart;

thread_local __attribute__((tls_model("initial-exec"))) timer_t tTimer;
thread_local __attribute__((tls_model("initial-exec"))) bool tHasTimer = false;
thread_local __attribute__((tls_model("initial-exec"))) unsigned tSamples = 0;
thread_local __attribute__((tls_model("initial-exec"))) uint64_t tLastCpuNs = 0;

uint64_t threadCpuNs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ULL + uint64_t(ts.tv_nsec);
}

int currentTid() {
  return int(::syscall(SYS_gettid));
}

// The thread's name as the kernel has it now (NCCL names its threads after
// they start, so this is read again as the thread keeps running).
void recordName(int tid) {
  size_t slot = size_t(tid) % SampleStore::kThreads;
  for (size_t probe = 0; probe < SampleStore::kThreads; ++probe) {
    ThreadName& tn = gStore->threads[(slot + probe) % SampleStore::kThreads];
    int32_t seen = tn.tid.load(std::memory_order_acquire);
    if (seen == 0 && !tn.tid.compare_exchange_strong(seen, tid)) {
      // another thread took the slot meanwhile: `seen` now holds its tid
    }
    if (seen != 0 && seen != tid) continue;
    int fd = ::open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char name[kNameBytes] = {};
    ssize_t n = ::read(fd, name, sizeof name - 1);
    ::close(fd);
    if (n > 0 && name[n - 1] == '\n') name[n - 1] = '\0';
    std::memcpy(tn.name, name, sizeof name);
    return;
  }
}

void onSample(int, siginfo_t*, void*) {
  if (!gActive.load(std::memory_order_relaxed)) return;
  int savedErrno = errno;
  size_t i = gStore->next.fetch_add(1, std::memory_order_relaxed);
  if (i >= SampleStore::kCapacity) {
    gStore->dropped.fetch_add(1, std::memory_order_relaxed);
    errno = savedErrno;
    return;
  }
  Sample& s = gStore->samples[i];
  void* frames[kMaxDepth + 2];
  int n = ::backtrace(frames, kMaxDepth + 2);
  // Frame 0 is this handler and frame 1 the kernel's signal return: the
  // interrupted code starts at 2.
  int depth = n > 2 ? n - 2 : 0;
  std::memcpy(s.pc, frames + 2, sizeof(void*) * size_t(depth));
  s.tid = currentTid();
  s.depth = depth;
  uint64_t now = threadCpuNs();
  s.cpuNs = now - tLastCpuNs;
  tLastCpuNs = now;
  // First sample, then at growing intervals: the name a thread settles on.
  if ((tSamples & (tSamples - 1)) == 0 || tSamples % 1024 == 0) recordName(s.tid);
  ++tSamples;
  errno = savedErrno;
}

void startThreadTimer() {
  if (gSettings == nullptr) return;
  struct sigevent sev {};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGPROF;
  sev._sigev_un._tid = currentTid();
  if (::timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &tTimer) != 0) return;
  tLastCpuNs = threadCpuNs();
  long ns = 1000000000L / gSettings->hz;
  struct itimerspec spec {};
  spec.it_interval.tv_sec = ns / 1000000000L;
  spec.it_interval.tv_nsec = ns % 1000000000L;
  spec.it_value = spec.it_interval;
  tHasTimer = ::timer_settime(tTimer, 0, &spec, nullptr) == 0;
}

void stopThreadTimer() {
  if (tHasTimer) ::timer_delete(tTimer);
  tHasTimer = false;
}

struct Start {
  void* (*fn)(void*);
  void* arg;
};

void* startSampled(void* raw) {
  Start start = *static_cast<Start*>(raw);
  delete static_cast<Start*>(raw);
  startThreadTimer();
  void* result = start.fn(start.arg);
  stopThreadTimer();
  return result;
}

long envLong(const char* name, long fallback, long lo, long hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi) {
    std::fprintf(stderr, "ncclnet-sampler: %s=%s is not in %ld..%ld; using %ld\n", name, v, lo, hi,
                 fallback);
    return fallback;
  }
  return x;
}

__attribute__((constructor)) void begin() {
  const char* dir = std::getenv("NCCLNET_SAMPLER_OUT");
  if (dir == nullptr || *dir == '\0') return;
  void* mem = ::mmap(nullptr, sizeof(SampleStore), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "ncclnet-sampler: cannot map %zu bytes for samples; not sampling\n",
                 sizeof(SampleStore));
    return;
  }
  gStore = new (mem) SampleStore();
  const char* tag = std::getenv("NCCLNET_SAMPLER_TAG");
  gSettings = new Settings{dir, tag != nullptr ? tag : "", envLong("NCCLNET_SAMPLER_HZ", 500, 1, 10000),
                           int(envLong("NCCLNET_SAMPLER_TOP", 15, 1, 1000))};
  // backtrace() loads the unwinder on its first call: not in a handler.
  void* warm[4];
  ::backtrace(warm, 4);
  struct sigaction sa {};
  sa.sa_sigaction = onSample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGPROF, &sa, nullptr);
  gStart = std::chrono::steady_clock::now();
  gActive.store(true);
  startThreadTimer();
}

__attribute__((destructor)) void end() {
  if (gSettings == nullptr) return;
  gActive.store(false);
  stopThreadTimer();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - gStart).count();
  std::string name = gSettings->tag.empty() ? "" : gSettings->tag + ".";
  std::string path = gSettings->outDir + "/sampler." + name + std::to_string(::getpid()) + ".txt";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "ncclnet-sampler: cannot write %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return;
  }
  writeReport(*gStore, wall, gSettings->top, out);
  std::fclose(out);
}

}  // namespace
}  // namespace ncclnet::sampler

// Every thread the process starts is sampled from its first instruction.
extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                                     const pthread_attr_t* attr,
                                                                     void* (*fn)(void*),
                                                                     void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Create next = reinterpret_cast<Create>(::dlsym(RTLD_NEXT, "pthread_create"));
  if (next == nullptr) return EAGAIN;
  if (ncclnet::sampler::gSettings == nullptr) return next(thread, attr, fn, arg);
  auto* start = new (std::nothrow) ncclnet::sampler::Start{fn, arg};
  if (start == nullptr) return EAGAIN;
  int res = next(thread, attr, ncclnet::sampler::startSampled, start);
  if (res != 0) delete start;
  return res;
}
