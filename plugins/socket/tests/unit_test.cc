// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the pieces on their own (no sockets).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <numeric>

#include "config.hpp"
#include "stream.hpp"
#include "stripe.hpp"
#include "timeline.hpp"
#include "wire.hpp"

namespace ncclnet::socket {
namespace {

TEST(Wire, HandleRoundTrip) {
  ListenHandle h;
  auto* in = reinterpret_cast<sockaddr_in*>(&h.addr);
  in->sin_family = AF_INET;
  in->sin_port = htons(4242);
  inet_pton(AF_INET, "10.1.2.3", &in->sin_addr);
  h.addrLen = sizeof(sockaddr_in);
  h.cookie = 0x1122334455667788ull;
  h.nThreads = 3;
  h.nSocksPerThread = 2;
  h.minTaskBytes = 65536;
  char buffer[NCCL_NET_HANDLE_MAXSIZE] = {};
  encodeHandle(h, buffer);
  ListenHandle out;
  ASSERT_EQ(decodeHandle(buffer, &out), WireVerdict::kOk);
  EXPECT_EQ(out.cookie, h.cookie);
  EXPECT_EQ(out.nThreads, 3);
  EXPECT_EQ(out.nSocksPerThread, 2);
  EXPECT_EQ(out.minTaskBytes, 65536u);
  EXPECT_EQ(std::memcmp(&out.addr, &h.addr, sizeof(sockaddr_in)), 0);
}

TEST(Wire, HandleIpv6RoundTrip) {
  ListenHandle h;
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&h.addr);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(1);
  inet_pton(AF_INET6, "fd00::2", &in6->sin6_addr);
  h.addrLen = sizeof(sockaddr_in6);
  h.nThreads = 0;
  h.nSocksPerThread = 4;
  h.minTaskBytes = 4096;
  char buffer[NCCL_NET_HANDLE_MAXSIZE] = {};
  encodeHandle(h, buffer);
  ListenHandle out;
  ASSERT_EQ(decodeHandle(buffer, &out), WireVerdict::kOk);
  EXPECT_EQ(out.addrLen, sizeof(sockaddr_in6));
  EXPECT_EQ(
      std::memcmp(&reinterpret_cast<sockaddr_in6*>(&out.addr)->sin6_addr, &in6->sin6_addr, 16), 0);
}

TEST(Wire, HandleRejectsForeignBytes) {
  char buffer[NCCL_NET_HANDLE_MAXSIZE] = {};
  ListenHandle out;
  EXPECT_EQ(decodeHandle(buffer, &out), WireVerdict::kNotOurs);
}

TEST(Wire, HelloChecksMagicVersionCookie) {
  Hello h;
  h.cookie = 42;
  h.connectionId = 7;
  h.index = 2;
  h.streams = 4;
  h.nThreads = 2;
  uint8_t bytes[kHelloBytes];
  encodeHello(h, bytes);
  Hello out;
  ASSERT_EQ(decodeHello(bytes, 42, &out), WireVerdict::kOk);
  EXPECT_EQ(out.connectionId, 7u);
  EXPECT_EQ(out.index, 2);
  EXPECT_EQ(out.streams, 4);
  EXPECT_EQ(decodeHello(bytes, 43, &out), WireVerdict::kWrongSecret);
  uint8_t old[kHelloBytes];
  std::memcpy(old, bytes, sizeof(old));
  old[4] ^= 0xff;  // protocol version
  EXPECT_EQ(decodeHello(old, 42, &out), WireVerdict::kWrongVersion);
  bytes[0] ^= 0xff;
  EXPECT_EQ(decodeHello(bytes, 42, &out), WireVerdict::kNotOurs);
  h.index = 5;  // beyond the stream count
  encodeHello(h, bytes);
  EXPECT_EQ(decodeHello(bytes, 42, &out), WireVerdict::kMalformed);
}

TEST(Wire, HeaderAndCtsRoundTrip) {
  DataHeader h;
  h.size = (1ull << 33) + 5;
  h.tag = -3;
  h.flags = kFlagTruncated;
  uint8_t bytes[kHeaderBytes];
  encodeHeader(h, bytes);
  DataHeader out;
  ASSERT_TRUE(decodeHeader(bytes, &out));
  EXPECT_EQ(out.size, h.size);
  EXPECT_EQ(out.tag, -3);
  EXPECT_EQ(out.flags, kFlagTruncated);
  bytes[1] ^= 1;
  EXPECT_FALSE(decodeHeader(bytes, &out));

  // An eager message larger than the eager limit, or a flag this version
  // does not know, is a broken peer: refused before any byte is read.
  h.flags = kFlagEager | kFlagInline;
  h.size = kEagerBytes;
  encodeHeader(h, bytes);
  ASSERT_TRUE(decodeHeader(bytes, &out));
  EXPECT_EQ(out.flags, kFlagEager | kFlagInline);
  h.size = kEagerBytes + 1;
  encodeHeader(h, bytes);
  EXPECT_FALSE(decodeHeader(bytes, &out));
  h.size = 1;
  h.flags = 0x40;
  encodeHeader(h, bytes);
  EXPECT_FALSE(decodeHeader(bytes, &out));
  h.flags = kFlagTruncated | kFlagInline;
  encodeHeader(h, bytes);
  EXPECT_FALSE(decodeHeader(bytes, &out));
  h.flags = kFlagTruncated | kFlagEager;
  encodeHeader(h, bytes);
  EXPECT_FALSE(decodeHeader(bytes, &out));

  ClearToSend c;
  c.n = 8;
  for (int i = 0; i < 8; i++) {
    c.sizes[i] = 1000u * i;
    c.tags[i] = 100 + i;
  }
  uint8_t frame[kCtsBytes];
  encodeCts(c, frame);
  ClearToSend back;
  ASSERT_TRUE(decodeCts(frame, &back));
  EXPECT_EQ(back.n, 8);
  EXPECT_EQ(back.sizes, c.sizes);
  EXPECT_EQ(back.tags, c.tags);
}

// Stripes cover the message exactly once, in order, on rotating sockets.
void expectCover(size_t size, int streams, size_t minTask, int first) {
  std::vector<Stripe> plan(streams);
  int n = planStripes(size, streams, minTask, first, plan.data());
  ASSERT_LE(n, streams);
  size_t offset = 0;
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(plan[i].offset, offset);
    EXPECT_GT(plan[i].length, 0u);
    EXPECT_EQ(plan[i].stream, (first + i) % streams);
    if (i + 1 < n) {
      EXPECT_GE(plan[i].length, std::min(minTask, size));
    }
    offset += plan[i].length;
  }
  EXPECT_EQ(offset, size);
}

TEST(Stripes, CoverEveryByteOnce) {
  for (size_t size : {size_t{1}, size_t{4095}, size_t{65536}, size_t{65537}, size_t{1} << 20,
                      (size_t{64} << 20) + 3}) {
    for (int streams : {1, 2, 3, 8, 64}) {
      for (int first : {0, 1, streams - 1}) expectCover(size, streams, 65536, first);
    }
  }
}

TEST(Stripes, SmallMessagesStayWhole) {
  Stripe plan[8];
  EXPECT_EQ(planStripes(0, 8, 65536, 0, plan), 0);
  EXPECT_EQ(planStripes(1000, 8, 65536, 3, plan), 1);
  EXPECT_EQ(plan[0].stream, 3);
  EXPECT_EQ(planStripes(3 * 65536, 8, 65536, 0, plan), 3);
  EXPECT_EQ(planStripes(64 << 20, 8, 65536, 0, plan), 8);
  EXPECT_EQ(plan[0].length, size_t{8} << 20);
}

TEST(Config, CapsFollowNccl) {
  int threads = 32, socks = 8;
  capThreads(&threads, &socks);
  EXPECT_EQ(threads, kMaxThreads);
  EXPECT_EQ(socks, kMaxStreams / kMaxThreads);
  threads = 0;
  socks = 100;
  capThreads(&threads, &socks);
  EXPECT_EQ(socks, kMaxStreams);
  for (int cores : {1, 2, 4, 16, 64, 256}) {
    autoThreads(cores, &threads, &socks);
    EXPECT_GE(threads, 0);
    EXPECT_LE(threads, kMaxThreads);
    EXPECT_GE(socks, 1);
    EXPECT_LE(std::max(threads, 1) * socks, kMaxStreams);
    // Helpers spin only where the automatic choice gives them cores.
    EXPECT_EQ(autoSpinUs(cores) > 0, threads > 0);
    EXPECT_EQ(autoIdleSpinUs(cores) > 0, threads > 0);
  }
}

// The documented automatic shape: no helper below 8 cores, then one thread
// per 10 cores, 1 to 4, each with one socket, awake between messages.
TEST(Config, AutomaticShapeFollowsTheCores) {
  struct Row {
    int cores, threads;
  };
  for (Row row : {Row{2, 0}, Row{7, 0}, Row{8, 1}, Row{19, 1}, Row{20, 2}, Row{32, 3}, Row{40, 4},
                  Row{256, 4}}) {
    int threads = -1, socks = -1;
    autoThreads(row.cores, &threads, &socks);
    EXPECT_EQ(threads, row.threads) << row.cores << " cores";
    EXPECT_EQ(socks, 1) << row.cores << " cores";
    EXPECT_EQ(autoIdleSpinUs(row.cores), row.threads > 0 ? 1000 : 0) << row.cores << " cores";
  }
}

// NCCLNET_SOCKET_IDLE_SPIN_US: unset, -1 and -2 take the automatic value
// for the cores; an explicit value, 0 included, is kept.
TEST(Config, IdlePatienceIsAutomaticUnlessSet) {
  auto idleSpin = [](const char* value, int cores) {
    if (value != nullptr) setenv("NCCLNET_SOCKET_IDLE_SPIN_US", value, 1);
    ParamTable params(Logger(nullptr, "test"));
    Config c;
    EXPECT_EQ(Config::read(params, cores, &c), ncclSuccess);
    unsetenv("NCCLNET_SOCKET_IDLE_SPIN_US");
    return c.idleSpinUs;
  };
  for (int cores : {2, 32}) {
    int automatic = autoIdleSpinUs(cores);
    EXPECT_EQ(idleSpin(nullptr, cores), automatic) << cores << " cores";
    EXPECT_EQ(idleSpin("-1", cores), automatic) << cores << " cores";
    EXPECT_EQ(idleSpin("-2", cores), automatic) << cores << " cores";
    EXPECT_EQ(idleSpin("0", cores), 0) << cores << " cores";
    EXPECT_EQ(idleSpin("250", cores), 250) << cores << " cores";
  }
  EXPECT_EQ(autoIdleSpinUs(32), 1000);
}

// NCCL_SOCKET_INLINE: unset, 64 KiB when comms have no helper thread (the
// caller moves every byte anyway) and 4 KiB with helpers; a value set in
// the environment is kept either way.
TEST(Config, InlineSizeFollowsTheHelperThreadsUnlessSet) {
  auto inlineBytes = [](const char* value, const char* threads, int cores) {
    if (value != nullptr) setenv("NCCL_SOCKET_INLINE", value, 1);
    if (threads != nullptr) setenv("NCCL_SOCKET_NTHREADS", threads, 1);
    ParamTable params(Logger(nullptr, "test"));
    Config c;
    EXPECT_EQ(Config::read(params, cores, &c), ncclSuccess);
    unsetenv("NCCL_SOCKET_INLINE");
    unsetenv("NCCL_SOCKET_NTHREADS");
    return c.inlineBytes;
  };
  EXPECT_EQ(inlineBytes(nullptr, nullptr, 2), kInlineWithoutHelpers);
  EXPECT_EQ(inlineBytes(nullptr, nullptr, 32), size_t{4096});
  EXPECT_EQ(inlineBytes(nullptr, "0", 32), kInlineWithoutHelpers);
  EXPECT_EQ(inlineBytes(nullptr, "2", 2), size_t{4096});
  EXPECT_EQ(inlineBytes("4096", nullptr, 2), size_t{4096});
  EXPECT_EQ(inlineBytes("0", nullptr, 2), size_t{0});
  EXPECT_EQ(inlineBytes("131072", nullptr, 32), size_t{131072});
}

// Only counts nobody set may be halved for a crowded process: an operator's
// NCCL_SOCKET_NTHREADS is kept even when it equals the automatic value.
TEST(Config, OnlyAutomaticThreadCountsMayShrink) {
  auto automatic = [](const char* threads, const char* socks) {
    if (threads != nullptr) setenv("NCCL_SOCKET_NTHREADS", threads, 1);
    if (socks != nullptr) setenv("NCCL_NSOCKS_PERTHREAD", socks, 1);
    ParamTable params(Logger(nullptr, "test"));
    Config c;
    EXPECT_EQ(Config::read(params, 32, &c), ncclSuccess);
    unsetenv("NCCL_SOCKET_NTHREADS");
    unsetenv("NCCL_NSOCKS_PERTHREAD");
    int autoT = 0, autoS = 0;
    autoThreads(32, &autoT, &autoS);
    EXPECT_EQ(c.nThreads,
              threads == nullptr || std::atoi(threads) < 0 ? autoT : std::atoi(threads));
    return c.threadsAutomatic;
  };
  EXPECT_TRUE(automatic(nullptr, nullptr));
  EXPECT_TRUE(automatic("-2", "-1"));
  EXPECT_FALSE(automatic("3", nullptr));  // the automatic value on 32 cores, but set
  EXPECT_FALSE(automatic(nullptr, "1"));
}

// Sets (or unsets) one variable for a scope.
struct Env {
  const char* name;
  Env(const char* n, const char* v) : name(n) {
    if (v != nullptr)
      setenv(n, v, 1);
    else
      unsetenv(n);
  }
  ~Env() { unsetenv(name); }
};

// UNPACK mode is taken only where NCCL will unpack every step: with
// NCCL_PROTO leaving SIMPLE alone; otherwise one warning and host mode.
TEST(Config, UnpackNeedsSimpleOnly) {
  Env unpack("NCCLNET_SOCKET_UNPACK", "1");
  Env pat("NCCL_PAT_ENABLE", "0");
  for (const char* proto : {"Simple", "^LL,LL128", "simple"}) {
    Env p("NCCL_PROTO", proto);
    ParamTable params(Logger(nullptr, "test"));
    Config c;
    ASSERT_EQ(Config::read(params, 2, &c), ncclSuccess);
    EXPECT_TRUE(c.unpack) << proto;
    EXPECT_EQ(c.unpackArenaBytes, size_t(8) << 20);
  }
  for (const char* proto : {static_cast<const char*>(nullptr), "LL,Simple", "^LL", "bogus"}) {
    Env p("NCCL_PROTO", proto);
    ParamTable params(Logger(nullptr, "test"));
    Config c;
    ASSERT_EQ(Config::read(params, 2, &c), ncclSuccess);
    EXPECT_FALSE(c.unpack) << (proto ? proto : "(unset)");
  }
  Env p("NCCL_PROTO", "Simple");
  Env arena("NCCLNET_SOCKET_UNPACK_ARENA_MB", "256");
  Env comms("NCCLNET_SOCKET_UNPACK_COMMS", "17");  // 4.25 GiB: over what 32-bit offsets reach
  ParamTable params(Logger(nullptr, "test"));
  Config c;
  EXPECT_EQ(Config::read(params, 2, &c), ncclInvalidUsage);
}

// ... and with PAT off: NCCL 2.24 to 2.30 run allgather and reduce-scatter
// as PAT on an UNPACK device when each node has one rank, and PAT kernels
// have no unpack step (inside NCCL 2.28.9 an 8-byte allgather then read
// a step buffer still holding an earlier all-reduce's bytes).
TEST(Config, UnpackNeedsPatOff) {
  Env unpack("NCCLNET_SOCKET_UNPACK", "1");
  Env proto("NCCL_PROTO", "Simple");
  for (const char* value : {"0", "0x0"}) {
    Env pat("NCCL_PAT_ENABLE", value);
    ParamTable params(Logger(nullptr, "test"));
    Config c;
    ASSERT_EQ(Config::read(params, 2, &c), ncclSuccess);
    EXPECT_TRUE(c.unpack) << value;
  }
  for (const char* value : {static_cast<const char*>(nullptr), "", "1", "2"}) {
    Env pat("NCCL_PAT_ENABLE", value);
    ParamTable params(Logger(nullptr, "test"));
    Config c;
    ASSERT_EQ(Config::read(params, 2, &c), ncclSuccess);
    EXPECT_FALSE(c.unpack) << (value ? value : "(unset)");
  }
}

// A trace directory that cannot take files fails init with a line naming
// the knob, rather than losing the trace at close.
TEST(Config, TraceDirMustBeAWritableDirectory) {
  ParamTable params(Logger(nullptr, "test"));
  Config c;
  setenv("NCCLNET_SOCKET_TRACE_DIR", "/nonexistent/trace", 1);
  EXPECT_EQ(Config::read(params, 2, &c), ncclInvalidUsage);
  setenv("NCCLNET_SOCKET_TRACE_DIR", "/dev/null", 1);  // not a directory
  EXPECT_EQ(Config::read(params, 2, &c), ncclInvalidUsage);
  setenv("NCCLNET_SOCKET_TRACE_DIR", "/tmp", 1);
  ASSERT_EQ(Config::read(params, 2, &c), ncclSuccess);
  EXPECT_EQ(c.traceDir, "/tmp");
  EXPECT_TRUE(c.timelineOptions().summary == false && c.timelineOptions().traceDir == "/tmp");
  unsetenv("NCCLNET_SOCKET_TRACE_DIR");
}

// The three stages are the gaps between the four stamps, averaged over the
// messages; a message with no byte ranges (inline) counts its bytes as
// moved when it matched. Calls into the comm are summed apart.
TEST(Timeline, AveragesTheGapsBetweenStamps) {
  const char* const stages[3] = {"wait", "move", "report"};
  Timeline off(TimelineOptions{}, stages);
  off.add(0, 1000, 2000, 3000, 10);
  off.addCall(1000);
  EXPECT_EQ(off.messages(), 0);
  EXPECT_EQ(off.summary(),
            "0 messages of 0 bytes on average: wait 0.0 us (max 0), move 0.0 us "
            "(max 0), report 0.0 us (max 0)");

  Timeline t(TimelineOptions{true, ""}, stages);
  constexpr int64_t us = 1000;
  t.add(0, 10 * us, 50 * us, 52 * us, 1000);            // 10, 40, 2
  t.add(100 * us, 130 * us, 0, 134 * us, 3000);         // inline: 30, 0, 4
  t.add(200 * us, 220 * us, 300 * us, 306 * us, 2000);  // 20, 80, 6
  EXPECT_EQ(t.messages(), 3);
  EXPECT_EQ(t.summary(),
            "3 messages of 2000 bytes on average: wait 20.0 us (max 30), move 40.0 us "
            "(max 80), report 4.0 us (max 6)");
  t.addCall(2 * us);
  t.addCall(450 * us);  // one call that held NCCL's progress thread
  t.addCall(1 * us);
  EXPECT_EQ(t.summary(),
            "3 messages of 2000 bytes on average: wait 20.0 us (max 30), move 40.0 us "
            "(max 80), report 4.0 us (max 6); 3 calls of 151.0 us on average (max 450)");
}

// A request's count of moving ranges remembers when its last range
// finished.
TEST(Pending, StampsWhenTheLastRangeFinishes) {
  Pending p;
  EXPECT_TRUE(p.drained());
  p.add(2);
  p.finishOne();
  EXPECT_FALSE(p.drained());
  int64_t before = steadyNowNs();
  p.finishOne();
  EXPECT_TRUE(p.drained());
  EXPECT_GE(p.drainedAtNs.load(), before);
  Pending reused;
  reused = p;  // the request pool recycles a slot by assignment
  EXPECT_TRUE(reused.drained());
  EXPECT_EQ(reused.drainedAtNs.load(), 0);
}

// Every helper thread counts itself while it runs; more helpers than cores
// is "crowded", and crowded helpers sleep instead of spinning.
TEST(HelperCensus, CountsLiveHelpersAgainstCores) {
  HelperCensus census(2);
  Health health(Logger(nullptr, "test"), "census test");
  {
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < 3; i++) {
      workers.push_back(
          std::make_unique<Worker>(std::vector<Stream*>{}, Patience{}, &census, &health));
      EXPECT_EQ(census.threads(), i + 1);
      EXPECT_EQ(census.crowded(), i + 1 > 2);
    }
  }
  EXPECT_EQ(census.threads(), 0);
  EXPECT_FALSE(census.crowded());
  EXPECT_TRUE(health.ok());
}

// A comm with automatic thread counts starts one thread per socket while the
// process's helpers fit its cores, half as many once they would not.
TEST(HelperCensus, NewCommsStartFewerThreadsOnceTheCoresAreTaken) {
  HelperCensus census(8);
  Health health(Logger(nullptr, "test"), "census test");
  // What a comm would get with the census as it is: claimed, then released.
  auto wouldGet = [&census](int wanted) {
    int granted = census.claim(wanted);
    census.release(granted);
    return granted;
  };
  EXPECT_EQ(wouldGet(8), 8);
  EXPECT_EQ(wouldGet(1), 1);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 6; i++) {
    workers.push_back(
        std::make_unique<Worker>(std::vector<Stream*>{}, Patience{}, &census, &health));
  }
  EXPECT_EQ(wouldGet(2), 2);  // 8 threads: still fits
  EXPECT_EQ(wouldGet(8), 4);
  EXPECT_EQ(wouldGet(3), 2);
  EXPECT_EQ(wouldGet(1), 1);  // a comm always gets a thread
}

// Two comms built at the same moment, before either's threads have joined:
// the second sees the first's claim (8 cores: 8, then 4, not 8 and 8), and
// a released claim no longer counts.
TEST(HelperCensus, ClaimsCountUntilReleased) {
  HelperCensus census(8);
  EXPECT_EQ(census.claim(8), 8);
  EXPECT_EQ(census.claim(8), 4);
  census.release(8);
  census.release(4);
  EXPECT_EQ(census.claim(8), 8);
  census.release(8);
}

// The automatic values are sized for the CPUs the process may use, not for
// the machine: under taskset (or a container's cpuset) that is fewer.
TEST(Config, CoresFollowTheAffinityMask) {
  cpu_set_t saved;
  CPU_ZERO(&saved);
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(usableCores(), CPU_COUNT(&saved));
  int first = 0;
  while (!CPU_ISSET(first, &saved)) first++;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(usableCores(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

}  // namespace
}  // namespace ncclnet::socket
