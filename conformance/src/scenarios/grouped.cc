// SPDX-License-Identifier: Apache-2.0
// Grouped receives: tags route a send into a buffer of the oldest grouped
// receive, each buffer with its own size, identical tags, and mixed n.
#include <sched.h>

#include <algorithm>
#include <set>

#include "harness/wire.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

// A message of a grouped scenario: its tag, size and seed.
struct Message {
  int tag;
  size_t size;
  uint64_t seed;
};

// Posted grouped receive, owning its buffers.
struct Group {
  std::vector<Buffer> bufs;
  std::vector<void*> data, mrs;
  std::vector<size_t> caps;
  std::vector<int> tags;
  void* request = nullptr;
};

void postGroup(Ctx& c, void* comm, Group& g, const std::vector<int>& tags,
               const std::vector<size_t>& caps, const std::string& what) {
  g.tags = tags;
  g.caps = caps;
  for (size_t i = 0; i < tags.size(); i++) {
    g.bufs.emplace_back(caps[i]);
    g.bufs.back().clear(0);
  }
  for (size_t i = 0; i < tags.size(); i++) {
    g.data.push_back(g.bufs[i].data());
    g.mrs.push_back(c.reg(comm, g.bufs[i].data(), caps[i]));
  }
  g.request = c.irecv(comm, static_cast<int>(tags.size()), g.data.data(), g.caps.data(),
                      g.tags.data(), g.mrs.data(), what);
}

void sendAll(Ctx& c, void* comm, const std::vector<Message>& msgs) {
  std::vector<Buffer> bufs;
  std::vector<void*> mrs, reqs;
  for (const Message& m : msgs) {
    bufs.emplace_back(m.size);
    bufs.back().fill(m.seed);
    mrs.push_back(c.reg(comm, bufs.back().data(), m.size));
    reqs.push_back(c.isend(comm, bufs.back().data(), m.size, m.tag, mrs.back(),
                           format("%zu B, tag %d", m.size, m.tag)));
  }
  for (size_t i = 0; i < reqs.size(); i++) {
    int size = 0;
    CONF_OK(c.wait(reqs[i], &size, format("isend tag %d", msgs[i].tag)),
            Rule::CompletionReportsSizes, format("test(isend tag %d)", msgs[i].tag));
  }
  for (void* mh : mrs) c.dereg(comm, mh);
}

// The message buffer i of `g` holds, or -1.
int identify(Group& g, size_t i, int size, const std::vector<Message>& msgs) {
  for (size_t k = 0; k < msgs.size(); k++) {
    if (size == static_cast<int>(msgs[k].size) &&
        g.bufs[i].verify(msgs[k].seed, 0, msgs[k].size) == Buffer::kMismatch) {
      return static_cast<int>(k);
    }
  }
  return -1;
}

// The buffers of one grouped receive (the scenarios that call it require
// grouped receives: maxRecvs > 1).
int groupWidth(Ctx& c) {
  return std::min(c.maxRecvs(), 8);
}

void tagsRoute(Ctx& c) {
  int n = groupWidth(c);
  void* comm = c.link(0, 1, "connection");
  std::vector<Message> msgs;  // first group's messages in reverse tag order, then the second's
  for (int i = n - 1; i >= 0; i--)
    msgs.push_back({100 + i, 200 + 10 * static_cast<size_t>(i), 1100ull + i});
  for (int i = 0; i < n; i++)
    msgs.push_back({100 + i, 300 + 10 * static_cast<size_t>(i), 2100ull + i});
  if (c.rank() == 0) {
    c.barrier("both grouped receives posted");
    sendAll(c, comm, msgs);
    return;
  }
  std::vector<int> tags;
  for (int i = 0; i < n; i++) tags.push_back(100 + i);
  Group older, newer;
  postGroup(c, comm, older, tags, std::vector<size_t>(static_cast<size_t>(n), 4096), "older group");
  postGroup(c, comm, newer, tags, std::vector<size_t>(static_cast<size_t>(n), 4096), "newer group");
  c.barrier("both grouped receives posted");
  for (int round = 0; round < 2; round++) {
    Group& g = round == 0 ? older : newer;
    std::vector<int> sizes(64, -1);
    CONF_OK(
        c.wait(g.request, sizes.data(), round == 0 ? "older grouped irecv" : "newer grouped irecv"),
        Rule::CompletionReportsSizes, "test(grouped irecv)");
    for (int i = 0; i < n; i++) {
      int k = identify(g, static_cast<size_t>(i), sizes[static_cast<size_t>(i)], msgs);
      int want = round == 0 ? n - 1 - i : n + i;
      if (k == want) continue;
      if (k < 0) {
        fail(Rule::TagRouting,
             "buffer %d (tag %d) of the %s grouped receive holds %d B that match no message sent",
             i, 100 + i, round == 0 ? "older" : "newer", sizes[static_cast<size_t>(i)]);
      }
      fail(Rule::TagRouting,
           "buffer %d (tag %d) of the %s grouped receive holds the message sent with tag %d %s", i,
           100 + i, round == 0 ? "older" : "newer", msgs[static_cast<size_t>(k)].tag,
           (k < n) == (round == 0) ? "of the same group: tags were not used to route"
                                   : "of the other group");
    }
  }
}

void perBufferSizes(Ctx& c) {
  int n = std::min(c.maxRecvs(), 8);
  void* comm = c.link(0, 1, "connection");
  std::vector<Message> msgs;
  std::vector<size_t> caps;
  std::vector<int> tags;
  for (int i = 0; i < n; i++) {
    size_t cap = 1024 * static_cast<size_t>(i + 1);
    size_t size = i == 0 ? 0 : (i == n - 1 ? cap : cap / 2 + static_cast<size_t>(i));
    caps.push_back(cap);
    tags.push_back(300 + i);
    msgs.push_back({300 + i, size, 3000ull + i});
  }
  if (c.rank() == 0) {
    c.barrier("grouped receive posted");
    sendAll(c, comm, msgs);
    return;
  }
  Group g;
  postGroup(c, comm, g, tags, caps, format("%d buffers of different sizes", n));
  c.barrier("grouped receive posted");
  std::vector<int> sizes(64, -1);
  CONF_OK(c.wait(g.request, sizes.data(), "grouped irecv"), Rule::GroupedCompletion,
          "test(grouped irecv)");
  for (int i = 0; i < n; i++) {
    size_t want = msgs[static_cast<size_t>(i)].size;
    CONF_EXPECT(sizes[static_cast<size_t>(i)] == static_cast<int>(want), Rule::GroupedCompletion,
                "test() reported sizes[%d] = %d for buffer %d (capacity %zu), which received %zu B",
                i, sizes[static_cast<size_t>(i)], i, caps[static_cast<size_t>(i)], want);
    size_t bad = g.bufs[static_cast<size_t>(i)].verify(msgs[static_cast<size_t>(i)].seed, 0, want);
    CONF_EXPECT(bad == Buffer::kMismatch, Rule::GroupedCompletion, "byte %zu of buffer %d is wrong",
                bad, i);
  }
}

void sameTag(Ctx& c) {
  int n = groupWidth(c);
  void* comm = c.link(0, 1, "connection");
  std::vector<Message> msgs;
  for (int i = 0; i < n; i++) msgs.push_back({7, 500 + 3 * static_cast<size_t>(i), 7000ull + i});
  if (c.rank() == 0) {
    c.barrier("grouped receive posted");
    sendAll(c, comm, msgs);
    return;
  }
  Group g;
  postGroup(c, comm, g, std::vector<int>(static_cast<size_t>(n), 7),
            std::vector<size_t>(static_cast<size_t>(n), 4096), "one tag for every buffer");
  c.barrier("grouped receive posted");
  std::vector<int> sizes(64, -1);
  CONF_OK(c.wait(g.request, sizes.data(), "grouped irecv with one tag"),
          Rule::CompletionReportsSizes, "test(grouped irecv)");
  std::set<int> seen;
  for (int i = 0; i < n; i++) {
    int k = identify(g, static_cast<size_t>(i), sizes[static_cast<size_t>(i)], msgs);
    CONF_EXPECT(k >= 0 && seen.insert(k).second, Rule::TagRouting,
                "with one tag for all %d buffers, buffer %d holds %s", n, i,
                k < 0 ? "no message sent" : "a message another buffer holds too");
  }
}

void mixed(Ctx& c) {
  int n = groupWidth(c);
  void* comm = c.link(0, 1, "connection");
  // Receives: n=1, n, n=1, n. Sends in posting order, grouped ones reversed.
  std::vector<Message> msgs;
  std::vector<std::vector<int>> groupTags;
  uint64_t seed = 9000;
  for (int round = 0; round < 2; round++) {
    msgs.push_back({9, 64, seed++});
    groupTags.push_back({9});
    std::vector<int> tags;
    for (int i = 0; i < n; i++) tags.push_back(400 + i);
    for (int i = n - 1; i >= 0; i--)
      msgs.push_back({400 + i, 128 + static_cast<size_t>(i), seed++});
    groupTags.push_back(tags);
  }
  if (c.rank() == 0) {
    c.barrier("receives posted");
    sendAll(c, comm, msgs);
    return;
  }
  std::vector<Group> groups(groupTags.size());
  for (size_t g = 0; g < groups.size(); g++) {
    postGroup(c, comm, groups[g], groupTags[g], std::vector<size_t>(groupTags[g].size(), 1024),
              format("receive #%zu (n=%zu)", g, groupTags[g].size()));
  }
  c.barrier("receives posted");
  for (size_t g = 0; g < groups.size(); g++) {
    std::vector<int> sizes(64, -1);
    CONF_OK(c.wait(groups[g].request, sizes.data(), format("receive #%zu", g)),
            Rule::CompletionReportsSizes, "test(grouped irecv)");
    for (size_t i = 0; i < groupTags[g].size(); i++) {
      int k = identify(groups[g], i, sizes[i], msgs);
      bool right = k >= 0 && msgs[static_cast<size_t>(k)].tag == groupTags[g][i];
      // Which receive a message belongs to follows from posting order.
      size_t first = 0;
      for (size_t h = 0; h < g; h++) first += groupTags[h].size();
      right = right && static_cast<size_t>(k) >= first &&
              static_cast<size_t>(k) < first + groupTags[g].size();
      CONF_EXPECT(
          right, Rule::TagRouting, "receive #%zu (n=%zu), buffer %zu (tag %d) holds %s", g,
          groupTags[g].size(), i, groupTags[g][i],
          k < 0 ? "no message sent"
                : format("message #%d (tag %d)", k, msgs[static_cast<size_t>(k)].tag).c_str());
    }
  }
}

// NCCL's shared comms: the ranks behind one connection are its tags and
// each runs its own steps, so one tag may send its second step before the
// other tag's first. Two grouped receives, each with a buffer for tag 0 and
// one for tag 1; the sender sends tag 0 step 1, tag 0 step 2, tag 1 step 1,
// tag 1 step 2. Each send lands in the oldest receive with a free buffer for
// its tag (receive 1 gets step 1 of both tags), or the plugin returns NULL
// for the send that runs ahead and accepts it later; the sender then goes
// on with the other tag, as the other rank would. Both are correct.
void tagRunsAhead(Ctx& c) {
  groupWidth(c);
  void* comm = c.link(0, 1, "connection");
  constexpr int kTags = 2, kSteps = 2;
  auto index = [](int tag, int step) { return static_cast<size_t>(tag * kSteps + step); };
  std::vector<Message> msgs;  // tag 0 step 1, tag 0 step 2, tag 1 step 1, tag 1 step 2
  for (int tag = 0; tag < kTags; tag++) {
    for (int step = 0; step < kSteps; step++) {
      msgs.push_back({tag, 700 + 100 * static_cast<size_t>(tag) + 10 * static_cast<size_t>(step),
                      6000ull + 10 * tag + step});
    }
  }
  for (int round = 0; round < 2; round++) {
    bool sendsFirst = round == 1;
    std::string label = sendsFirst ? "sends posted first" : "receives posted first";
    std::string barrierLabel = format("round %d: %s", round, label.c_str());
    if (c.rank() == 0) {
      std::vector<Buffer> bufs;
      std::vector<void*> mrs, reqs(msgs.size(), nullptr);
      std::vector<bool> done(msgs.size(), false);
      bufs.reserve(msgs.size());
      for (const Message& m : msgs) {
        bufs.emplace_back(m.size);
        bufs.back().fill(m.seed + 100 * round);
        mrs.push_back(c.reg(comm, bufs.back().data(), m.size));
      }
      int next[kTags] = {0, 0};
      bool deferred = false;
      // One pass in the sender's order; a tag whose send gets NULL waits
      // for the next pass while the other tag goes on.
      auto pass = [&] {
        bool all = true;
        for (int tag = 0; tag < kTags; tag++) {
          while (next[tag] < kSteps) {
            size_t k = index(tag, next[tag]);
            void* r = c.isendOnce(comm, bufs[k].data(), msgs[k].size, tag, mrs[k],
                                  format("tag %d step %d", tag, next[tag] + 1));
            if (r == nullptr) break;
            reqs[k] = r;
            next[tag]++;
          }
          if (next[tag] < kSteps) {
            all = false;
            deferred = true;
          }
        }
        return all;
      };
      if (sendsFirst) pass();
      c.barrier(barrierLabel);
      double end = nowSeconds() + c.waitLimit();
      while (!pass()) {
        // Keep the posted sends progressing, as NCCL's proxy does.
        for (size_t k = 0; k < reqs.size(); k++) {
          if (reqs[k] == nullptr || done[k]) continue;
          int d = 0, size = 0;
          CONF_OK(
              c.net().test(reqs[k], &d, &size), Rule::CompletionReportsSizes,
              format("test(isend tag %d step %d)", msgs[k].tag, static_cast<int>(k) % kSteps + 1));
          done[k] = d != 0;
        }
        for (int tag = 0; tag < kTags; tag++) {
          CONF_EXPECT(next[tag] == kSteps || nowSeconds() < end, Rule::TagRouting,
                      "%s: isend(tag %d step %d) still returns NULL %.1f s after both grouped "
                      "receives were posted, each with a free buffer for tag %d",
                      label.c_str(), tag, next[tag] + 1, c.waitLimit(), tag);
        }
        sched_yield();
      }
      if (deferred) c.note(label + ": a send that ran ahead got NULL and was accepted later");
      for (size_t k = 0; k < reqs.size(); k++) {
        if (done[k]) continue;
        int size = 0;
        std::string what =
            format("isend tag %d step %d", msgs[k].tag, static_cast<int>(k) % kSteps + 1);
        CONF_OK(c.wait(reqs[k], &size, what), Rule::CompletionReportsSizes, "test(" + what + ")");
      }
      for (void* mh : mrs) c.dereg(comm, mh);
      continue;
    }
    std::vector<Message> sent = msgs;
    for (Message& m : sent) m.seed += 100 * round;
    Group first, second;
    auto postBoth = [&] {
      postGroup(c, comm, first, {0, 1}, {4096, 4096}, "receive 1, tags {0, 1}");
      postGroup(c, comm, second, {0, 1}, {4096, 4096}, "receive 2, tags {0, 1}");
    };
    if (!sendsFirst) postBoth();
    c.barrier(barrierLabel);
    if (sendsFirst) postBoth();
    for (int g = 0; g < 2; g++) {
      Group& group = g == 0 ? first : second;
      std::vector<int> sizes(64, -1);
      CONF_OK(c.wait(group.request, sizes.data(), format("grouped receive %d", g + 1)),
              Rule::CompletionReportsSizes, format("test(grouped receive %d)", g + 1));
      for (int tag = 0; tag < kTags; tag++) {
        int k = identify(group, static_cast<size_t>(tag), sizes[static_cast<size_t>(tag)], sent);
        if (k == static_cast<int>(index(tag, g))) continue;
        if (k < 0) {
          fail(Rule::TagRouting,
               "%s: receive %d, buffer for tag %d holds %d B that match no message sent",
               label.c_str(), g + 1, tag, sizes[static_cast<size_t>(tag)]);
        }
        fail(Rule::TagRouting,
             "%s: receive %d, buffer for tag %d holds tag %d step %d; a send lands in the oldest "
             "receive with a free buffer for its tag, so receive %d gets step %d of each tag",
             label.c_str(), g + 1, tag, sent[static_cast<size_t>(k)].tag, k % kSteps + 1, g + 1,
             g + 1);
      }
    }
    for (Group* group : {&first, &second}) {
      for (void* mh : group->mrs) c.dereg(comm, mh);
    }
  }
}

}  // namespace

void addGroupedScenarios(std::vector<Scenario>& out) {
  out.push_back(
      {.area = "Grouped",
       .name = "TagsRouteIntoOldestReceive",
       .rule = Rule::TagRouting,
       .ranks = 2,
       .needs = {.groupedReceives = true},
       .run = tagsRoute,
       .summary =
           "two grouped receives; sends in reverse tag order land by tag in the older one first"});
  out.push_back(
      {.area = "Grouped",
       .name = "OneTagRunsAhead",
       .rule = Rule::TagRouting,
       .ranks = 2,
       .needs = {.groupedReceives = true},
       .run = tagRunsAhead,
       .summary =
           "two receives of tags {0, 1}; tag 0 sends both steps first: step 1 of each tag lands in "
           "receive 1 (or the early send gets NULL until then)"});
  out.push_back(
      {.area = "Grouped",
       .name = "PerBufferSizes",
       .rule = Rule::GroupedCompletion,
       .ranks = 2,
       .run = perBufferSizes,
       .summary = "maxRecvs buffers of different capacities: one request, sizes[i] per buffer"});
  out.push_back({.area = "Grouped",
                 .name = "SameTagInEveryBuffer",
                 .rule = Rule::TagRouting,
                 .ranks = 2,
                 .needs = {.groupedReceives = true},
                 .run = sameTag,
                 .summary = "one tag for all buffers: each buffer gets exactly one message"});
  out.push_back(
      {.area = "Grouped",
       .name = "MixedGroupSizes",
       .rule = Rule::TagRouting,
       .ranks = 2,
       .needs = {.groupedReceives = true},
       .run = mixed,
       .summary = "receives of n=1 and n=maxRecvs alternate; messages follow posting order"});
}

}  // namespace conformance
