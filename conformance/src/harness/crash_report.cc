// SPDX-License-Identifier: Apache-2.0
// Crash reports: signal handlers, the sigaction()/signal() interposers and
// the symbolizer. The handler side formats by hand into static storage: a
// crashing process may hold the malloc lock.
#include "harness/crash_report.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include "harness/wire.hpp"

namespace conformance::crash {

namespace {

constexpr int kFatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
constexpr int kMaxFrames = 48;
constexpr int kMaxSignal = 65;
constexpr size_t kActivityBytes = 384;
constexpr unsigned kHandlerWatchdogSec = 3;  // a handler stuck in a lock still ends

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

// What the ABI of signal handling forces to be process-wide: the handler
// has no argument to carry state in.
struct State {
  std::atomic<bool> armed{false};
  int fd = -1;
  SigactionFn real = nullptr;
  struct sigaction chained[kMaxSignal] = {};  // what the process asked for instead
  std::atomic<int> entries[kMaxSignal] = {};
  // Two activity slots, flipped on each update, so a reader in a handler
  // sees a whole text (a writer racing two updates ahead is harmless).
  char activity[2][kActivityBytes] = {};
  std::atomic<int> current{0};
  std::atomic<bool> fatalReported{false};
  std::atomic<bool> shouldStep{false};
};

State& state() {
  static State s;
  return s;
}

SigactionFn realSigaction() {
  State& s = state();
  if (s.real == nullptr) s.real = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
  return s.real;
}

bool intercepted(int sig) {
  if (sig == stackSignal()) return true;
  for (int f : kFatal) {
    if (f == sig) return true;
  }
  return false;
}

// A fixed buffer that only appends (no allocation, no locale).
class Text {
 public:
  void add(const char* s) {
    while (s != nullptr && *s != '\0' && used_ < sizeof(buf_) - 1) buf_[used_++] = *s++;
  }
  void hex(uintptr_t v) {
    char digits[2 * sizeof(v) + 1];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v != 0);
    add("0x");
    while (n > 0 && used_ < sizeof(buf_) - 1) buf_[used_++] = digits[--n];
  }
  void dec(long v) {
    char digits[24];
    int n = 0;
    bool negative = v < 0;
    unsigned long u =
        negative ? 0UL - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (negative) add("-");
    while (n > 0 && used_ < sizeof(buf_) - 1) buf_[used_++] = digits[--n];
  }
  void clear() {
    used_ = 0;
    buf_[0] = '\0';
  }
  const char* data() const {
    const_cast<char*>(buf_)[used_] = '\0';
    return buf_;
  }
  size_t size() const { return used_; }

 private:
  char buf_[8192];
  size_t used_ = 0;
};

Text& scratch() {
  static Text text;  // one report per process: the process ends after it
  return text;
}

uintptr_t faultingPc(void* context) {
  if (context == nullptr) return 0;
  auto* uc = static_cast<ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

// `skip`: frames of the reporter itself, when no interrupted instruction is
// known (exit()).
__attribute__((noinline)) void addFrames(Text& t, uintptr_t pc, int skip) {
  void* frames[kMaxFrames];
  int n = backtrace(frames, kMaxFrames);
  // The host program's module, as dladdr names it: the stack is cut below
  // its first frame.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&addFrames), &self) != 0 && self.dli_fname != nullptr) {
    t.add("P\t");
    t.add(self.dli_fname);
    t.add("\n");
  }
  // Start at the interrupted instruction when the unwinder went through the
  // signal frame (it usually does); the handler's own frames say nothing.
  int first = std::min(skip + 1, n);  // +1: this function
  for (int i = 0; i < n && pc != 0; i++) {
    if (reinterpret_cast<uintptr_t>(frames[i]) == pc) {
      first = i;
      break;
    }
  }
  for (int i = first; i < n; i++) {
    uintptr_t addr = reinterpret_cast<uintptr_t>(frames[i]);
    // A return address points after its call: look up the call itself.
    uintptr_t lookup = addr == pc ? addr : addr - 1;
    Dl_info info{};
    t.add("F\t");
    if (dladdr(reinterpret_cast<void*>(lookup), &info) != 0 && info.dli_fname != nullptr) {
      t.add(info.dli_fname);
      t.add("\t");
      t.hex(lookup - reinterpret_cast<uintptr_t>(info.dli_fbase));
      t.add("\t");
      t.add(info.dli_sname);
      t.add("\t");
      if (info.dli_sname != nullptr) t.hex(lookup - reinterpret_cast<uintptr_t>(info.dli_saddr));
    } else {
      t.add("?\t");
      t.hex(lookup);
      t.add("\t\t");
    }
    t.add("\n");
  }
}

void send(const Text& body) {
  State& s = state();
  if (s.fd < 0) return;
  static char frame[sizeof(uint32_t) * 2 + 8192];
  uint32_t header[2] = {static_cast<uint32_t>(Msg::Crash), static_cast<uint32_t>(body.size())};
  memcpy(frame, header, sizeof(header));
  memcpy(frame + sizeof(header), body.data(), body.size());
  size_t total = sizeof(header) + body.size(), done = 0;
  while (done < total) {
    ssize_t w = write(s.fd, frame + done, total - done);
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}

__attribute__((noinline)) void report(const char* event, uintptr_t pc, int skip) {
  State& s = state();
  Text& t = scratch();
  t.clear();
  t.add(event);
  t.add("\n");
  t.add(s.activity[s.current.load(std::memory_order_acquire)]);
  t.add("\n");
  if (s.shouldStep.load()) t.add("S\n");
  addFrames(t, pc, skip + 1);
  send(t);
}

void chain(int sig, siginfo_t* info, void* context) {
  State& s = state();
  const struct sigaction& next = s.chained[sig];
  bool custom = (next.sa_flags & SA_SIGINFO)
                    ? next.sa_sigaction != nullptr
                    : (next.sa_handler != SIG_DFL && next.sa_handler != SIG_IGN);
  if (custom && s.entries[sig].load() <= 1) {
    if (next.sa_flags & SA_SIGINFO)
      next.sa_sigaction(sig, info, context);
    else
      next.sa_handler(sig);
    return;
  }
  // The default action: a fault re-executes and ends the process, a raised
  // signal is delivered again once this handler returns.
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  realSigaction()(sig, &fallback, nullptr);
  raise(sig);
}

void onSignal(int sig, siginfo_t* info, void* context) {
  int saved = errno;
  State& s = state();
  if (sig == stackSignal()) {
    report("stack of the main thread when the deadline expired", faultingPc(context), 1);
    errno = saved;
    return;
  }
  if (s.entries[sig].fetch_add(1) == 0) {
    alarm(kHandlerWatchdogSec);
    Text event;
    event.add("killed by SIG");
    const char* name = sigabbrev_np(sig);
    event.add(name ? name : "?");
    if (info != nullptr && (sig == SIGSEGV || sig == SIGBUS)) {
      event.add(" (fault at ");
      event.hex(reinterpret_cast<uintptr_t>(info->si_addr));
      event.add(")");
    }
    bool custom = (s.chained[sig].sa_flags & SA_SIGINFO)
                      ? s.chained[sig].sa_sigaction != nullptr
                      : s.chained[sig].sa_handler != SIG_DFL && s.chained[sig].sa_handler != SIG_IGN;
    if (custom) event.add("; a handler the plugin's libraries installed runs next");
    s.fatalReported.store(true);
    report(event.data(), faultingPc(context), 1);
    alarm(0);
  }
  chain(sig, info, context);
  errno = saved;
}

__attribute__((noinline)) void onExit() {
  State& s = state();
  // After a fatal signal, exit() is what a library's handler made of it:
  // the signal's report stands.
  if (!s.armed.load() || s.fatalReported.load()) return;
  report("the plugin (or a library it loads) called exit()", 0, 1);
}

}  // namespace

int stackSignal() {
  return SIGRTMIN + 4;
}

void arm(int fd) {
  State& s = state();
  s.fd = fd;
  void* warm[2];
  backtrace(warm, 2);  // loads the unwinder now, not inside a handler
  // A stack overflow leaves no stack to report it on: the main thread's
  // handler runs on a stack of its own.
  static char altStack[1 << 16];
  stack_t alt{};
  alt.ss_sp = altStack;
  alt.ss_size = sizeof(altStack);
  sigaltstack(&alt, nullptr);
  struct sigaction ours {};
  ours.sa_sigaction = onSignal;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  for (int sig : kFatal) realSigaction()(sig, &ours, &s.chained[sig]);
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  realSigaction()(stackSignal(), &ours, nullptr);
  std::atexit(onExit);
  s.armed.store(true);
}

void disarm() {
  State& s = state();
  s.armed.store(false);
  s.fd = -1;
}

void setShouldStep(bool inStep) {
  state().shouldStep.store(inStep);
}

bool inShouldStep(const std::string& body) {
  return body.find("\nS\n") != std::string::npos;
}

void setActivity(const std::string& what) {
  State& s = state();
  int next = 1 - s.current.load(std::memory_order_relaxed);
  size_t n = std::min(what.size(), kActivityBytes - 1);
  memcpy(s.activity[next], what.data(), n);
  s.activity[next][n] = '\0';
  s.current.store(next, std::memory_order_release);
}

namespace {

constexpr size_t kMaxShownFrames = 12;

struct Frame {
  std::string module;
  std::string offset;  // hex, as sent
  std::string symbol;  // dladdr's: exported symbols only
  std::string symbolOffset;
};

std::string basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// An offset as the reporting rank writes it: "0x" and hex digits. The frame
// body comes over the control channel, so nothing else reaches addr2line.
bool isHexOffset(const std::string& o) {
  if (o.size() < 3 || o.size() > 18 || o.compare(0, 2, "0x") != 0) return false;
  return o.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
}

// Runs addr2line on `module` without a shell (the module path is the
// rank's word, quotes and all) and returns what it printed; stderr dropped.
std::string runAddr2line(const std::string& module, const std::vector<std::string>& offsets) {
  std::vector<std::string> args{"addr2line", "-f", "-C", "-e", module};
  args.insert(args.end(), offsets.begin(), offsets.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, "addr2line", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string text;
  char chunk[4096];
  for (ssize_t n; rc == 0 && (n = read(out[0], chunk, sizeof(chunk))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  close(out[0]);
  if (rc == 0) waitpid(pid, nullptr, 0);
  return text;
}

// addr2line's "function\nfile:line" pairs for offsets of one module; empty
// where it knows nothing (or is not installed, or an offset is not hex).
std::vector<std::string> addr2line(const std::string& module,
                                   const std::vector<std::string>& offsets) {
  std::vector<std::string> out(offsets.size());
  if (!std::all_of(offsets.begin(), offsets.end(), isHexOffset)) return out;
  std::istringstream lines(runAddr2line(module, offsets));
  for (size_t i = 0; i < offsets.size(); i++) {
    std::string fn, where;
    if (!std::getline(lines, fn) || !std::getline(lines, where)) break;
    if (fn == "??") continue;
    out[i] = fn;
    size_t colon = where.rfind(':');
    if (where.compare(0, 2, "??") != 0 && colon != std::string::npos &&
        where.compare(colon, 3, ":0") != 0 && where.compare(colon, 2, ":?") != 0) {
      out[i] += " (" + basename(where) + ")";
    }
  }
  return out;
}

}  // namespace

std::string describe(const std::string& body) {
  std::istringstream in(body);
  std::string event, activity, line;
  std::getline(in, event);
  std::getline(in, activity);
  std::vector<Frame> frames;
  std::string program;
  while (std::getline(in, line)) {
    if (line.compare(0, 2, "P\t") == 0) {
      program = line.substr(2);
      continue;
    }
    std::vector<std::string> f;
    std::istringstream fields(line);
    std::string field;
    while (std::getline(fields, field, '\t')) f.push_back(field);
    if (f.size() < 3 || f[0] != "F") continue;
    frames.push_back({f[1], f[2], f.size() > 3 ? f[3] : "", f.size() > 4 ? f[4] : ""});
  }
  std::map<std::string, std::vector<size_t>> byModule;
  for (size_t i = 0; i < frames.size(); i++) byModule[frames[i].module].push_back(i);
  std::vector<std::string> names(frames.size());
  for (const auto& [module, indices] : byModule) {
    if (module == "?") continue;
    std::vector<std::string> offsets;
    for (size_t i : indices) offsets.push_back(frames[i].offset);
    std::vector<std::string> found = addr2line(module, offsets);
    for (size_t k = 0; k < indices.size(); k++) names[indices[k]] = found[k];
  }
  std::string out = event + (activity.empty() ? "" : " while " + activity);
  if (frames.empty()) return out;
  out += "; stack:";
  // Down to the first frame of the host program, which called the plugin;
  // what lies below it (the harness, gtest, main) says nothing more.
  if (program.empty()) program = frames.back().module;
  size_t shown = frames.size();
  for (size_t i = 0; i < frames.size(); i++) {
    if (frames[i].module == program) {
      shown = i + 1;
      break;
    }
  }
  shown = std::min(shown, kMaxShownFrames);
  for (size_t i = 0; i < shown; i++) {
    const Frame& f = frames[i];
    std::string name = names[i];
    if (name.empty() && !f.symbol.empty()) name = f.symbol + "+" + f.symbolOffset;
    if (name.empty()) name = "??";
    out += (i == 0 ? " #" : " | #") + std::to_string(i) + " " + name + " in " + basename(f.module) +
           "+" + f.offset;
  }
  if (shown < frames.size()) out += " | ...";
  return out;
}

}  // namespace conformance::crash

// The interposers. A plugin's libraries resolve sigaction() and signal()
// to these (the executable exports them, see conformance/CMakeLists.txt).
// Unarmed, they pass every call through; armed, a handler asked for a
// signal the crash reporter owns is kept aside and chained to.
extern "C" int sigaction(int sig, const struct sigaction* __restrict act,
                         struct sigaction* __restrict old) noexcept {
  using namespace conformance::crash;
  State& s = state();
  if (!s.armed.load() || sig <= 0 || sig >= kMaxSignal || !intercepted(sig) ||
      sig == stackSignal()) {
    return realSigaction()(sig, act, old);
  }
  if (old != nullptr) *old = s.chained[sig];
  if (act != nullptr) s.chained[sig] = *act;
  return 0;
}

extern "C" __sighandler_t signal(int sig, __sighandler_t handler) noexcept {
  struct sigaction act {
  }, old{};
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  act.sa_flags = SA_RESTART;
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}
