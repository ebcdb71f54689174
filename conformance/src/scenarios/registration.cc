// SPDX-License-Identifier: Apache-2.0
// Memory registration of host memory: on either comm, sub-ranges, many
// handles, and the cheap re-registration that regIsGlobal promises.
#include <algorithm>
#include <vector>

#include "harness/wire.hpp"
#include "scenario/registrations.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

void bothComms(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  // The same buffer registered twice gives two handles, both usable. A
  // handle is opaque to NCCL, NULL included: src/transport/net.cc
  // sendProxyConnect/recvProxyConnect store what regMr wrote for the
  // connection's buffers and hand it back to isend, irecv and deregMr
  // unchecked, and NCCL's own Socket transport (ncclNetSocketRegMr) writes
  // nothing.
  Buffer buf(1 << 20);
  void* first = c.reg(comm, buf.data(), buf.size());
  void* second = c.reg(comm, buf.data(), buf.size());
  if (first == nullptr && second == nullptr) c.note("regMr gave NULL handles (NCCL accepts them)");
  c.dereg(comm, first);
  c.transfer(comm, 0, 1, 1 << 20, 25);
  c.dereg(comm, second);
}

void subRanges(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  constexpr size_t kWhole = 1 << 20, kOffset = 4097, kLength = 65536 + 3;
  Buffer buf(kWhole);
  void* whole = c.reg(comm, buf.data(), kWhole);
  void* part = c.reg(comm, buf.data() + kOffset, kLength);
  std::string what = format("%zu B at offset %zu", kLength, kOffset);
  for (int round = 0; round < 2; round++) {
    // Round 0 uses the sub-range's own handle, round 1 the whole buffer's.
    void* mh = round == 0 ? part : whole;
    if (c.rank() == 0) {
      buf.fill(100 + round, kOffset, kLength);
      void* r = c.isend(comm, buf.data() + kOffset, kLength, 0, mh, what);
      int size = 0;
      CONF_OK(c.wait(r, &size, "isend " + what), Rule::CompletionReportsSizes,
              "test(isend " + what + ")");
    } else {
      buf.clear(0);
      void* data = buf.data() + kOffset;
      size_t cap = kLength;
      int tag = 0;
      void* r = c.irecv(comm, 1, &data, &cap, &tag, &mh, what);
      int size = -1;
      CONF_OK(c.wait(r, &size, "irecv " + what), Rule::CompletionReportsSizes,
              "test(irecv " + what + ")");
      CONF_EXPECT(size == static_cast<int>(kLength) &&
                      buf.verify(100 + round, kOffset, kLength) == Buffer::kMismatch,
                  Rule::RegMrHostAndCuda,
                  "a transfer through the %s handle of a sub-range delivered %d B or wrong bytes",
                  round == 0 ? "sub-range's own" : "whole buffer's", size);
      size_t where = 0;
      CONF_EXPECT(buf.untouched(0, 0, kOffset, &where) &&
                      buf.untouched(0, kOffset + kLength, kWhole - kOffset - kLength, &where),
                  Rule::TruncationIsAnError,
                  "a receive into a sub-range wrote at offset %zu, outside it", where);
    }
    c.barrier(format("sub-range round %d", round));
  }
}

void cacheCheap(Ctx& c) {
  if (!c.props().regIsGlobal) skip("regIsGlobal is 0: no cheap re-registration is promised");
  void* comm = c.link(0, 1, "connection");
  if (c.rank() != 0) return;
  constexpr size_t kWhole = 64 << 20;
  Buffer buf(kWhole);
  buf.clear(1);  // touch every page first: first-touch cost is not registration cost
  double start = nowSeconds();
  void* whole = c.reg(comm, buf.data(), kWhole);
  double first = nowSeconds() - start;
  constexpr int kSub = 200;
  start = nowSeconds();
  for (int i = 0; i < kSub; i++) {
    size_t offset = static_cast<size_t>(i) * 4096 * 7 % (kWhole / 2);
    void* mh = c.reg(comm, buf.data() + offset, 1 << 20);
    c.dereg(comm, mh);
  }
  double each = (nowSeconds() - start) / kSub;
  c.note(format("whole 64 MiB: %.1f us; sub-range reg+dereg: %.1f us", first * 1e6, each * 1e6));
  double allowed = std::max(100e-6 * c.profile().timeScale, first / 4);
  CONF_EXPECT(each <= allowed, Rule::GlobalRegistrationCheap,
              "re-registering 1 MiB sub-ranges of a registered buffer takes %.1f us each (first "
              "registration %.1f us); regIsGlobal=1 promises nearly free",
              each * 1e6, first * 1e6);
  c.dereg(comm, whole);
}

void everyHandle(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  constexpr int kCount = 100;
  std::vector<Buffer> bufs;
  registerThenDeregister(
      c, comm, kCount,
      [&](int i) {
        bufs.emplace_back(4096 + 64 * i);
        return c.reg(comm, bufs.back().data(), bufs.back().size());
      },
      27);
  // Still registering and moving data after 100 deregistrations.
  c.transfer(comm, 0, 1, 1 << 16, 27);
}

}  // namespace

void addRegistrationScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Registration",
                 .name = "HostOnSendAndRecvComm",
                 .rule = Rule::RegMrHostAndCuda,
                 .ranks = 2,
                 .run = bothComms,
                 .summary = "regMr(NCCL_PTR_HOST) on sendComm and recvComm, twice on one buffer"});
  out.push_back({.area = "Registration",
                 .name = "SubRanges",
                 .rule = Rule::RegMrHostAndCuda,
                 .ranks = 2,
                 .run = subRanges,
                 .summary =
                     "unaligned sub-range registrations; data through a sub-range's or the whole "
                     "buffer's handle"});
  out.push_back({.area = "Registration",
                 .name = "GlobalRegistrationIsCheap",
                 .rule = Rule::GlobalRegistrationCheap,
                 .ranks = 2,
                 .run = cacheCheap,
                 .summary = "regIsGlobal=1: re-registering sub-ranges costs little"});
  out.push_back({.area = "Registration",
                 .name = "DeregisterEveryHandle",
                 .rule = Rule::DeregMrReleases,
                 .ranks = 2,
                 .run = everyHandle,
                 .summary = "100 handles deregistered in random order; the comm still works"});
}

}  // namespace conformance
