// SPDX-License-Identifier: Apache-2.0
// Many connections between two ranks.
#include "scenario/multi.hpp"

#include <cstring>
#include <memory>

#include "harness/wire.hpp"

namespace conformance {

namespace {
size_t sizeOf(size_t i) {
  return 1000 + 8 * i;
}
uint64_t seedOf(size_t i) {
  return 0xC0DE0000ull + i;
}
}  // namespace

std::vector<void*> linkMany(Ctx& c, int src, int dst, int count, const std::string& label) {
  std::vector<Handle> handles(static_cast<size_t>(count));
  std::vector<void*> listens;
  std::string mine;
  if (c.rank() == dst) {
    for (Handle& h : handles) {
      listens.push_back(c.listen(0, &h));
      mine.append(h.bytes, sizeof(h.bytes));
    }
  }
  std::vector<std::string> all = c.allgather(label + ": handles", mine);
  std::vector<void*> comms(static_cast<size_t>(count), nullptr);
  if (c.rank() != src && c.rank() != dst) return comms;
  const std::string& published = all[static_cast<size_t>(dst)];
  if (c.rank() == src) {
    for (size_t i = 0; i < handles.size(); i++) {
      std::memcpy(handles[i].bytes, published.data() + i * sizeof(Handle), sizeof(Handle));
    }
  }
  double limit = nowSeconds() + c.waitLimit();
  int remaining = count;
  for (int round = 1; remaining > 0; round++) {
    for (int k = 0; k < count; k++) {
      size_t i = static_cast<size_t>(c.rank() == src ? k : count - 1 - k);
      if (comms[i] != nullptr) continue;
      ncclNetDeviceHandle_v12_t* devComm = nullptr;
      comms[i] = c.rank() == src ? c.connectOnce(0, &handles[i], &devComm, round)
                                 : c.acceptOnce(listens[i], &devComm, round);
      if (comms[i] != nullptr) {
        remaining--;
        if (c.rank() == dst) c.closeListen(listens[i]);
      }
    }
    CONF_EXPECT(nowSeconds() < limit, Rule::ConnectAcceptNeverBlock,
                "%d of %d interleaved %s still not done after %.1f s", remaining, count,
                c.rank() == src ? "connects" : "accepts", c.waitLimit());
  }
  return comms;
}

void checkEachConnection(Ctx& c, const std::vector<void*>& comms, int src, int dst, Rule rule) {
  size_t n = comms.size();
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<void*> mrs(n), requests(n);
  if (c.rank() == src) {
    for (size_t i = 0; i < n; i++) {
      buffers.push_back(std::make_unique<Buffer>(sizeOf(i)));
      buffers[i]->fill(seedOf(i));
      mrs[i] = c.reg(comms[i], buffers[i]->data(), sizeOf(i));
      requests[i] = c.isend(comms[i], buffers[i]->data(), sizeOf(i), 0, mrs[i],
                            format("connection %zu, %zu B", i, sizeOf(i)));
    }
    for (size_t i = 0; i < n; i++) {
      int size = 0;
      CONF_OK(c.wait(requests[i], &size, format("isend on connection %zu", i)),
              Rule::CompletionReportsSizes, format("test(isend on connection %zu)", i));
    }
  } else if (c.rank() == dst) {
    constexpr size_t kCapacity = 1 << 16;
    for (size_t i = 0; i < n; i++) {
      buffers.push_back(std::make_unique<Buffer>(kCapacity));
      mrs[i] = c.reg(comms[i], buffers[i]->data(), kCapacity);
      void* data = buffers[i]->data();
      size_t capacity = kCapacity;
      int tag = 0;
      requests[i] =
          c.irecv(comms[i], 1, &data, &capacity, &tag, &mrs[i], format("connection %zu", i));
    }
    for (size_t i = 0; i < n; i++) {
      int size = -1;
      CONF_OK(c.wait(requests[i], &size, format("irecv on connection %zu", i)),
              Rule::CompletionReportsSizes, format("test(irecv on connection %zu)", i));
      if (size == static_cast<int>(sizeOf(i)) &&
          buffers[i]->verify(seedOf(i), 0, sizeOf(i)) == Buffer::kMismatch) {
        continue;
      }
      for (size_t j = 0; j < n; j++) {
        if (size == static_cast<int>(sizeOf(j)) &&
            buffers[i]->verify(seedOf(j), 0, sizeOf(j)) == Buffer::kMismatch) {
          fail(
              rule,
              "connection %zu received the message sent on connection %zu: connections are crossed",
              i, j);
        }
      }
      fail(rule, "connection %zu received %d B that match no message sent (expected %zu B)", i,
           size, sizeOf(i));
    }
  }
  for (size_t i = 0; i < mrs.size(); i++) {
    if (mrs[i] != nullptr) c.dereg(comms[i], mrs[i]);
  }
}

}  // namespace conformance
