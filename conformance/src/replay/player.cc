// SPDX-License-Identifier: Apache-2.0
// One rank of a replay: listens, the handle exchange, then every comm's
// stream of calls, interleaved.
#include "replay/player.hpp"

#include <sched.h>

#include <cstring>
#include <deque>
#include <map>
#include <memory>

namespace conformance::replay {

namespace {

// NCCL_PROXY_MAX_SUBS: the most buffers one test reports.
constexpr int kMaxSizes = 64;
// Steps a stream may take in one pass before the others get a turn.
constexpr int kStepsPerPass = 16;

class Player {
 public:
  Player(Ctx& c, const Plan& plan) : c_(c), me_(plan.ranks[static_cast<size_t>(c.rank())]) {}

  void run() {
    listenAndExchange();
    std::vector<Live> live(me_.streams.size());
    // Every transfer first, each stream stopping at its close; then, once
    // every rank got there, the closes and what follows them. The trace
    // does not show what held the closes back in the recorded job (NCCL
    // tears connections down in ncclCommDestroy, after its ranks synchronize;
    // the reference transport behind a barrier), and a comm closed while its
    // peer still receives may take the peer's bytes with it.
    playUntil(live, true);
    c_.barrier("replay: every rank's transfers done, before the closes");
    playUntil(live, false);
    for (const ListenPlan& l : me_.listens) {
      if (!l.closedByStream) c_.closeListen(listens_.at(l.id));
    }
  }

 private:
  // What a stream has reached.
  struct Live {
    size_t next = 0;   // its next step
    double since = 0;  // when that step became next
    int attempts = 0;  // calls made for it so far
    void* comm = nullptr;
    Handle handle;                 // a connect's, kept across its calls
    std::deque<void*> unconsumed;  // completed receives, for irecvConsumed
  };

  // Plays the streams, interleaved, until each is done (or, with
  // `stopAtClose`, has its close next).
  void playUntil(std::vector<Live>& live, bool stopAtClose) {
    for (;;) {
      bool finished = true, moved = false;
      for (size_t i = 0; i < live.size(); i++) {
        const Stream& s = me_.streams[i];
        auto waiting = [&] {
          if (live[i].next >= s.steps.size()) return false;
          Op op = s.steps[live[i].next].op;
          return !(stopAtClose && (op == Op::CloseSend || op == Op::CloseRecv));
        };
        for (int n = 0; n < kStepsPerPass && waiting(); n++) {
          if (live[i].since == 0) live[i].since = nowSeconds();
          if (!attempt(s.steps[live[i].next], live[i])) break;
          live[i].next++;
          live[i].since = 0;
          live[i].attempts = 0;
          moved = true;
        }
        if (waiting()) finished = false;
      }
      if (finished) return;
      if (!moved) sched_yield();
    }
  }

  struct Posted {
    void* request;
    const Step* step;
  };
  struct Registration {
    std::unique_ptr<Buffer> buffer;
    void* mhandle;
  };

  int dev(int recorded) {
    int count = c_.devices();
    return count > 0 ? recorded % count : 0;
  }

  // Every rank's listens, then one exchange of (hash, new handle) pairs.
  void listenAndExchange() {
    std::string mine;
    for (const ListenPlan& l : me_.listens) {
      Handle handle;
      listens_[l.id] = c_.listen(dev(l.dev), &handle);
      mine.append(reinterpret_cast<const char*>(&l.hash), sizeof(l.hash));
      mine.append(handle.bytes, sizeof(handle.bytes));
    }
    constexpr size_t kEntry = sizeof(uint64_t) + NCCL_NET_HANDLE_MAXSIZE;
    for (const std::string& theirs : c_.allgather("replay: listen handles", mine)) {
      for (size_t at = 0; at + kEntry <= theirs.size(); at += kEntry) {
        uint64_t hash;
        std::memcpy(&hash, theirs.data() + at, sizeof(hash));
        std::memcpy(handles_[hash].bytes, theirs.data() + at + sizeof(hash), sizeof(Handle::bytes));
      }
    }
  }

  // One call for `step`; true when the step is done. Throws at a divergence.
  bool attempt(const Step& step, Live& live) {
    try {
      bool done = call(step, live);
      live.attempts++;
      if (!done && nowSeconds() - live.since > c_.waitLimit())
        fail(ruleOfTimeout(step.op), "%s", stillWaiting(step, live).c_str());
      return done;
    } catch (Violation& v) {
      v.message = "diverged from " + me_.file + ":" + std::to_string(step.line) + " (" + step.text +
                  "): " + v.message;
      throw;
    }
  }

  // The rule a step that never completes breaks.
  static Rule ruleOfTimeout(Op op) {
    if (op == Op::Connect || op == Op::Accept) return Rule::ConnectAcceptNeverBlock;
    if (op == Op::Isend || op == Op::Irecv) return Rule::InFlightLimits;  // NULL for ever
    return Rule::CompletionReportsSizes;
  }

  std::string stillWaiting(const Step& step, const Live& live) const {
    const char* what = step.op == Op::Connect  ? "connect returned no comm"
                       : step.op == Op::Accept ? "accept returned no comm"
                       : step.op == Op::Test   ? "test did not report the request done"
                       : step.op == Op::Isend  ? "isend kept returning a NULL request"
                       : step.op == Op::Irecv  ? "irecv kept returning a NULL request"
                                               : "the call did not complete";
    return format("timeout: %s in %d calls over %.1f s (the recording got there)", what,
                  live.attempts, c_.waitLimit());
  }

  bool call(const Step& step, Live& live) {
    switch (step.op) {
      case Op::Connect: {
        if (live.attempts == 0) {
          auto it = handles_.find(step.hash);
          CONF_EXPECT(it != handles_.end(), Rule::ProfileExpectation,
                      "no rank published the listen this connect pairs with");
          live.handle = it->second;
        }
        ncclNetDeviceHandle_v12_t* devComm = nullptr;
        live.comm = c_.connectOnce(dev(step.dev), &live.handle, &devComm, live.attempts + 1);
        return live.comm != nullptr;
      }
      case Op::Accept: {
        ncclNetDeviceHandle_v12_t* devComm = nullptr;
        live.comm = c_.acceptOnce(listens_.at(step.listen), &devComm, live.attempts + 1);
        return live.comm != nullptr;
      }
      case Op::CloseListen: c_.closeListen(listens_.at(step.listen)); return true;
      case Op::RegMr: {
        Registration& r = registrations_[step.mr];
        r.buffer = std::make_unique<Buffer>(step.size);
        r.mhandle = c_.reg(live.comm, r.buffer->data(), step.size);
        return true;
      }
      case Op::DeregMr: c_.dereg(live.comm, registrations_.at(step.mr).mhandle); return true;
      case Op::Isend:
        return post(step, [&](void** request) {
          const PlacedBuffer& b = step.buffers[0];
          Registration* r = registration(b);
          if (r != nullptr) r->buffer->fill(b.seed, b.offset, b.size);
          return c_.net().isend(live.comm, r ? r->buffer->data() + b.offset : nullptr, b.size,
                                b.tag, r ? r->mhandle : nullptr, phandle_, request);
        });
      case Op::Irecv:
      case Op::Iflush:
        return post(step, [&](void** request) {
          int n = static_cast<int>(step.buffers.size());
          std::vector<void*> data(n), mhandles(n), phandles(n, phandle_);
          std::vector<size_t> sizes(n);
          std::vector<int> tags(n), intSizes(n);
          for (int i = 0; i < n; i++) {
            const PlacedBuffer& b = step.buffers[i];
            Registration* r = registration(b);
            data[i] = r ? r->buffer->data() + b.offset : nullptr;
            mhandles[i] = r ? r->mhandle : nullptr;
            sizes[i] = b.size;
            intSizes[i] = static_cast<int>(b.size);
            tags[i] = b.tag;
          }
          if (step.op == Op::Iflush)
            return c_.net().iflush(live.comm, n, data.data(), intSizes.data(), mhandles.data(),
                                   request);
          return c_.net().irecv(live.comm, n, data.data(), sizes.data(), tags.data(),
                                mhandles.data(), phandles.data(), request);
        });
      case Op::Test: return test(step, live);
      case Op::Consumed: {
        if (!c_.net().provides(ncclnet::host::Optional::IrecvConsumed)) return true;
        CONF_EXPECT(!live.unconsumed.empty(), Rule::IrecvConsumedAccepted,
                    "no completed receive of this comm is left to consume");
        void* request = live.unconsumed.front();
        live.unconsumed.pop_front();
        CONF_OK(c_.net().irecvConsumed(live.comm, step.n, request), Rule::IrecvConsumedAccepted,
                format("irecvConsumed(n=%d)", step.n));
        return true;
      }
      case Op::CloseSend: c_.closeSend(live.comm); return true;
      case Op::CloseRecv: c_.closeRecv(live.comm); return true;
    }
    return true;
  }

  Registration* registration(const PlacedBuffer& b) {
    auto it = registrations_.find(b.mr);
    return it == registrations_.end() ? nullptr : &it->second;
  }

  // An isend, irecv or iflush: one call; a NULL request is tried again on
  // the next pass (rule 29), except from iflush, where it means "nothing to
  // flush".
  template <class Call>
  bool post(const Step& step, Call&& call) {
    void* request = nullptr;
    const char* name = step.op == Op::Isend ? "isend" : step.op == Op::Irecv ? "irecv" : "iflush";
    double start = nowSeconds();
    ncclResult_t res = call(&request);
    double took = nowSeconds() - start;
    CONF_EXPECT(res == ncclSuccess, Rule::NullRequestRetry,
                "%s returned %s, the recording ncclSuccess", name, resultText(res).c_str());
    if (took > c_.callLimit())
      c_.deferShould(Rule::CallsReturnPromptly, format("%s blocked for %.2f s", name, took));
    if (request == nullptr && step.op != Op::Iflush) return false;
    if (step.op == Op::Iflush && step.request == 0) {
      // The recording had nothing to flush; this plugin has: wait here.
      if (request != nullptr) waitFlush(request);
      return true;
    }
    posted_[step.request] = Posted{request, &step};
    return true;
  }

  void waitFlush(void* request) {
    double limit = nowSeconds() + c_.waitLimit();
    for (int done = 0; !done;) {
      CONF_OK(c_.net().test(request, &done, nullptr), Rule::FlushMakesVisible, "test(iflush)");
      CONF_EXPECT(done || nowSeconds() < limit, Rule::FlushMakesVisible,
                  "timeout: the iflush request was not done after %.1f s", c_.waitLimit());
      if (!done) sched_yield();
    }
  }

  bool test(const Step& step, Live& live) {
    auto it = posted_.find(step.request);
    CONF_EXPECT(it != posted_.end(), Rule::ProfileExpectation, "the request was never posted");
    Posted posted = it->second;
    if (posted.request == nullptr) {  // an iflush with nothing to flush
      posted_.erase(it);
      return true;
    }
    int done = 0;
    int sizes[kMaxSizes];
    std::fill(sizes, sizes + kMaxSizes, -1);
    ncclResult_t res = c_.net().test(posted.request, &done, sizes);
    const Step& post = *posted.step;
    CONF_EXPECT(res == ncclSuccess, Rule::CompletionReportsSizes,
                "test of the %s posted at line %d returned %s, the recording ncclSuccess",
                opName(post.op), post.line, resultText(res).c_str());
    if (!done) return false;
    posted_.erase(it);
    if (post.op == Op::Iflush) return true;
    size_t n = std::min(post.buffers.size(), static_cast<size_t>(kMaxSizes));
    for (size_t i = 0; i < n && i < step.reported.size(); i++) {
      CONF_EXPECT(sizes[i] == step.reported[i], Rule::CompletionReportsSizes,
                  "%s of line %d, buffer %zu: test reported %d bytes, the recording %lld",
                  opName(post.op), post.line, i, sizes[i], step.reported[i]);
    }
    if (post.op == Op::Irecv) {
      for (size_t i = 0; i < n; i++) verify(post, i, sizes[i]);
      live.unconsumed.push_back(posted.request);
    }
    return true;
  }

  // The bytes of buffer i of a receive that reported `size`.
  void verify(const Step& post, size_t i, int size) {
    const PlacedBuffer& b = post.buffers[i];
    Registration* r = registration(b);
    if (r == nullptr || size <= 0) return;
    size_t bad = r->buffer->verify(b.seed, b.offset, static_cast<size_t>(size));
    CONF_EXPECT(bad == Buffer::kMismatch, Rule::CompletionReportsSizes,
                "irecv of line %d, buffer %zu (tag %d, %d bytes): byte %zu differs from what the "
                "sender sent (the message's own pattern)",
                post.line, i, b.tag, size, bad);
    long where = 0;
    CONF_EXPECT(r->buffer->guardsIntact(&where), Rule::TruncationIsAnError,
                "irecv of line %d: the plugin wrote outside the registered memory (offset %ld)",
                post.line, where);
  }

  static const char* opName(Op op) {
    return op == Op::Isend ? "isend" : op == Op::Irecv ? "irecv" : "iflush";
  }

  Ctx& c_;
  const RankPlan& me_;
  // What isend/irecv get as phandles, as NCCL's proxy passes one per step
  // (v10+; the view drops them for older tables).
  alignas(16) char phandleStorage_[16] = {};
  void* const phandle_ = phandleStorage_;
  std::map<uint64_t, void*> listens_;               // listen number -> listen comm
  std::map<uint64_t, Handle> handles_;              // hash -> this replay's handle
  std::map<uint64_t, Registration> registrations_;  // registration number -> memory
  std::map<uint64_t, Posted> posted_;               // request number -> request
};

}  // namespace

void play(Ctx& c, const Plan& plan) {
  CONF_EXPECT(plan.ranks.size() == static_cast<size_t>(c.nranks()), Rule::ProfileExpectation,
              "the replay has %zu traces but runs on %d ranks", plan.ranks.size(), c.nranks());
  Player(c, plan).run();
}

}  // namespace conformance::replay
