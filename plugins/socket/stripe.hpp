// SPDX-License-Identifier: Apache-2.0
// sdk-socket: how a large message is cut across the data sockets. Sender
// and receiver run the same arithmetic on the same inputs (size, socket
// count, the rotating first socket), so no per-stripe announcement is sent.
#pragma once

#include <algorithm>
#include <cstddef>

namespace ncclnet::socket {

struct Stripe {
  int stream = 0;
  size_t offset = 0;
  size_t length = 0;
};

// At most `streams` stripes, none shorter than `minTask` (except when the
// whole message is), of equal length but the last. Stripe i goes to socket
// (first + i) % streams, so consecutive messages start on different sockets
// and medium messages spread out. Returns the stripe count; `out` must hold
// `streams` entries.
inline int planStripes(size_t size, int streams, size_t minTask, int first, Stripe* out) {
  if (size == 0 || streams < 1) return 0;
  if (minTask == 0) minTask = 1;
  size_t wanted = std::max<size_t>(size / minTask, 1);  // rounded down: no stripe below minTask
  size_t count = std::min(wanted, static_cast<size_t>(streams));
  size_t chunk = (size + count - 1) / count;
  int n = 0;
  for (size_t offset = 0; offset < size; offset += chunk, n++) {
    out[n].stream = static_cast<int>((static_cast<size_t>(first) + n) % streams);
    out[n].offset = offset;
    out[n].length = std::min(chunk, size - offset);
  }
  return n;
}

}  // namespace ncclnet::socket
