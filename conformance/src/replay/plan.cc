// SPDX-License-Identifier: Apache-2.0
// Recorded traces -> per-rank streams, with every connection paired.
#include "replay/plan.hpp"

#include <cstdlib>
#include <map>
#include <utility>

namespace conformance::replay {

namespace {

struct Refusal {
  std::string why;
};

[[noreturn]] void refuseAt(const std::string& file, int line, const std::string& text,
                           const std::string& why) {
  throw Refusal{"cannot replay: " + file + ":" + std::to_string(line) + " (" + text + "): " + why};
}

[[noreturn]] void refuse(const std::string& file, const RecordedCall* call,
                         const std::string& why) {
  if (call != nullptr) refuseAt(file, call->line, call->text, why);
  throw Refusal{"cannot replay: " + file + ": " + why};
}

uint64_t hexKey(const RecordedCall& call, const std::string& key) {
  auto it = call.keys.find(key);
  if (it == call.keys.end()) return 0;
  return std::strtoull(it->second.c_str(), nullptr, 16);
}

// Builds one rank's streams; each connection end is keyed by its hash.
class RankBuilder {
 public:
  explicit RankBuilder(const RecordedProcess& p) : p_(p) { plan_.file = p.name; }

  RankPlan build() {
    if (p_.version < kReplayableTraceVersion)
      refuse(p_.name, nullptr,
             "trace version " + std::to_string(p_.version) +
                 " does not say which connect meets which listen (no handle hashes); record it "
                 "again with this ncclnet-check (trace version 2)");
    for (const RecordedCall& call : p_.calls) {
      if (call.rc() != 0) continue;  // failed in the recording: nothing to repeat
      add(call);
    }
    return std::move(plan_);
  }

 private:
  Step step(Op op, const RecordedCall& call) const {
    Step s;
    s.op = op;
    s.line = call.line;
    s.text = call.text;
    return s;
  }

  Stream& stream(uint64_t comm, const RecordedCall& call) {
    auto it = streamOf_.find(comm);
    if (it == streamOf_.end())
      refuse(p_.name, &call, "comm " + std::to_string(comm) + " was never opened in this trace");
    return plan_.streams[it->second];
  }

  Stream& open(uint64_t comm, bool send, const RecordedCall& call) {
    if (streamOf_.count(comm))
      refuse(p_.name, &call, "comm " + std::to_string(comm) + " is opened twice");
    streamOf_[comm] = plan_.streams.size();
    plan_.streams.push_back(Stream{comm, send, {}});
    return plan_.streams.back();
  }

  std::vector<PlacedBuffer> buffers(const RecordedCall& call, bool send) {
    std::vector<long long> sizes = call.numbers(send ? "size" : "sizes");
    std::vector<long long> tags = call.numbers(send ? "tag" : "tags");
    std::vector<long long> mrs = call.numbers("m");
    std::vector<long long> offsets = call.numbers("o");
    size_t n = send ? 1 : static_cast<size_t>(call.number("n"));
    if (sizes.size() < n || mrs.size() < n || offsets.size() < n)
      refuse(p_.name, &call, "expected " + std::to_string(n) + " sizes, m= and o= values");
    std::vector<PlacedBuffer> out(n);
    for (size_t i = 0; i < n; i++) {
      out[i].size = static_cast<size_t>(sizes[i]);
      out[i].tag = i < tags.size() ? static_cast<int>(tags[i]) : 0;
      out[i].mr = static_cast<uint64_t>(mrs[i]);
      if (out[i].size > 0) {
        auto reg = registered_.find(out[i].mr);
        if (reg == registered_.end())
          refuse(p_.name, &call,
                 "buffer " + std::to_string(i) + " names registration m=" +
                     std::to_string(out[i].mr) + ", which is not registered");
        if (offsets[i] < 0 || static_cast<size_t>(offsets[i]) + out[i].size > reg->second)
          refuse(p_.name, &call,
                 "buffer " + std::to_string(i) +
                     " does not lie in registration m=" + std::to_string(out[i].mr));
      }
      out[i].offset = static_cast<size_t>(offsets[i] < 0 ? 0 : offsets[i]);
    }
    return out;
  }

  void add(const RecordedCall& call) {
    const std::string& name = call.call;
    uint64_t c = static_cast<uint64_t>(call.number("c"));
    if (name == "listen") {
      if (c == 0) return;
      plan_.listens.push_back(
          ListenPlan{c, static_cast<int>(call.number("dev")), hexKey(call, "h"), call.line, false});
      if (plan_.listens.back().hash == 0) refuse(p_.name, &call, "the listen has no h= hash");
    } else if (name == "connect") {
      if (c == 0) return;  // not connected yet: the replay calls again by itself
      Step s = step(Op::Connect, call);
      s.dev = static_cast<int>(call.number("dev"));
      s.hash = hexKey(call, "h");
      if (s.hash == 0) refuse(p_.name, &call, "the connect has no h= hash");
      open(c, true, call).steps.push_back(s);
    } else if (name == "accept") {
      if (c == 0) return;
      Step s = step(Op::Accept, call);
      s.listen = static_cast<uint64_t>(call.number("l"));
      open(c, false, call).steps.push_back(s);
      acceptedBy_[s.listen] = c;
    } else if (name == "closeListen") {
      auto it = acceptedBy_.find(c);
      if (it == acceptedBy_.end()) return;  // never accepted on: closed at the end
      Step s = step(Op::CloseListen, call);
      s.listen = c;
      stream(it->second, call).steps.push_back(s);
      for (ListenPlan& l : plan_.listens)
        if (l.id == c) l.closedByStream = true;
    } else if (name == "regMr" || name == "regMrDmaBuf") {
      Step s = step(Op::RegMr, call);
      s.mr = static_cast<uint64_t>(call.number("m"));
      s.size = static_cast<size_t>(call.number("size"));
      if (s.mr == 0) return;
      registered_[s.mr] = s.size;
      stream(c, call).steps.push_back(s);
    } else if (name == "deregMr") {
      Step s = step(Op::DeregMr, call);
      s.mr = static_cast<uint64_t>(call.number("m"));
      if (s.mr != 0) stream(c, call).steps.push_back(s);
    } else if (name == "isend" || name == "irecv" || name == "iflush") {
      Step s = step(name == "isend" ? Op::Isend : name == "irecv" ? Op::Irecv : Op::Iflush, call);
      s.request = static_cast<uint64_t>(call.number("r"));
      if (s.request == 0 && s.op != Op::Iflush) return;  // NULL: the replay retries by itself
      Stream& on = stream(c, call);
      s.buffers = buffers(call, s.op == Op::Isend);
      streamOfRequest_[s.request] = c;
      on.steps.push_back(s);
    } else if (name == "test") {
      if (call.number("done") != 1) return;
      Step s = step(Op::Test, call);
      s.request = static_cast<uint64_t>(call.number("r"));
      s.reported = call.numbers("sizes");
      auto it = streamOfRequest_.find(s.request);
      if (it == streamOfRequest_.end())
        refuse(p_.name, &call, "request " + std::to_string(s.request) + " was never posted");
      stream(it->second, call).steps.push_back(s);
    } else if (name == "irecvConsumed") {
      Step s = step(Op::Consumed, call);
      s.n = static_cast<int>(call.number("n"));
      stream(c, call).steps.push_back(s);
    } else if (name == "closeSend" || name == "closeRecv") {
      stream(c, call).steps.push_back(
          step(name == "closeSend" ? Op::CloseSend : Op::CloseRecv, call));
    }
    // init, finalize and anything newer: nothing to replay (the rank has
    // its own context).
  }

  const RecordedProcess& p_;
  RankPlan plan_;
  std::map<uint64_t, size_t> streamOf_;           // comm -> stream
  std::map<uint64_t, uint64_t> acceptedBy_;       // listen -> the comm accepted on it
  std::map<uint64_t, uint64_t> streamOfRequest_;  // request -> comm
  std::map<uint64_t, size_t> registered_;         // registration -> size
};

// Pairs every connect with a listen and seeds every message.
void pairAndSeed(const std::vector<RecordedProcess>& processes, Plan* plan) {
  struct End {
    size_t rank;
    int line;
    bool connected = false;
  };
  std::map<uint64_t, End> listens;  // hash -> where
  std::map<std::pair<size_t, uint64_t>, uint64_t> hashOfListen;
  for (size_t r = 0; r < plan->ranks.size(); r++) {
    for (const ListenPlan& l : plan->ranks[r].listens) {
      auto [it, fresh] = listens.try_emplace(l.hash, End{r, l.line});
      if (!fresh)
        throw Refusal{"cannot replay: " + processes[r].name + ":" + std::to_string(l.line) +
                      ": its listen handle hash equals that of " + processes[it->second.rank].name +
                      ":" + std::to_string(it->second.line) + "; the two cannot be told apart"};
      hashOfListen[{r, l.id}] = l.hash;
    }
  }
  for (size_t r = 0; r < plan->ranks.size(); r++) {
    for (Stream& s : plan->ranks[r].streams) {
      Step& first = s.steps.front();
      uint64_t connection = 0;
      if (first.op == Op::Connect) {
        auto it = listens.find(first.hash);
        if (it == listens.end())
          refuseAt(processes[r].name, first.line, first.text,
                   "connects to a listen that no trace holds: every process of the job must be "
                   "in the directory");
        if (it->second.connected)
          refuseAt(processes[r].name, first.line, first.text,
                   "connects to a listen handle another connect used already");
        it->second.connected = true;
        connection = first.hash;
      } else {
        auto it = hashOfListen.find({r, first.listen});
        if (it == hashOfListen.end())
          refuseAt(processes[r].name, first.line, first.text,
                   "accepts on listen comm " + std::to_string(first.listen) +
                       ", which the trace never opened");
        connection = it->second;
      }
      std::map<int, uint64_t> ordinal;  // per tag
      for (Step& step : s.steps) {
        if (step.op != Op::Isend && step.op != Op::Irecv) continue;
        for (PlacedBuffer& b : step.buffers)
          b.seed = messageSeed(connection, b.tag, ordinal[b.tag]++);
      }
    }
  }
  for (const auto& [hash, end] : listens) {
    bool accepted = false;
    for (const Stream& s : plan->ranks[end.rank].streams)
      if (s.steps.front().op == Op::Accept &&
          hashOfListen[{end.rank, s.steps.front().listen}] == hash)
        accepted = true;
    if (accepted && !end.connected)
      throw Refusal{"cannot replay: " + processes[end.rank].name + ":" + std::to_string(end.line) +
                    ": a comm is accepted on this listen, but no trace connects to it: every "
                    "process of the job must be in the directory"};
  }
}

}  // namespace

uint64_t messageSeed(uint64_t connection, int tag, uint64_t ordinal) {
  uint64_t z = connection ^ (static_cast<uint64_t>(static_cast<uint32_t>(tag)) << 40) ^ ordinal;
  z = (z ^ (z >> 30)) * 0xBF58476DE1CE4E5Bull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool makePlan(const std::vector<RecordedProcess>& processes, Plan* out, std::string* error) {
  try {
    if (processes.empty()) throw Refusal{"cannot replay: no trace"};
    Plan plan;
    for (const RecordedProcess& p : processes) plan.ranks.push_back(RankBuilder(p).build());
    pairAndSeed(processes, &plan);
    *out = std::move(plan);
    return true;
  } catch (const Refusal& r) {
    *error = r.why;
    return false;
  }
}

}  // namespace conformance::replay
