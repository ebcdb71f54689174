// SPDX-License-Identifier: Apache-2.0
// Fuzzes the harness's control channel as a receiver meets it: the input is
// what arrives on a socket. Channel::readAvailable and Channel::next cut it
// into frames; each body is then decoded the way the coordinator decodes that
// type (Reader, and crash::describe for Crash reports from dying ranks).
// The per-type handlers themselves need a live run and are not reached.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "harness/crash_report.hpp"
#include "harness/wire.hpp"

using namespace conformance;

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "harness wire: %s\n", what);
  std::abort();
}

// A string field never claims more than the body holds.
void field(Reader& reader, const std::string& body) {
  std::string s = reader.str();
  require(s.size() <= body.size(), "a string field longer than its body");
}

void decode(const Frame& frame) {
  Reader reader(frame.body);
  switch (frame.type) {
    case Msg::Hello: reader.u64(), reader.u32(); break;
    case Msg::AgentHello: reader.u32(); break;
    case Msg::Gather:
      reader.u32(), reader.u32();
      field(reader, frame.body), field(reader, frame.body);
      break;
    case Msg::Gathered: {
      uint32_t n = reader.u32();
      for (uint32_t i = 0; i < n && reader.ok(); i++) field(reader, frame.body);
      break;
    }
    case Msg::GatherFailed: field(reader, frame.body); break;
    case Msg::Verdict:
      reader.u32(), reader.u32(), reader.u32();
      field(reader, frame.body);
      reader.u64();
      break;
    case Msg::Counters: {
      uint32_t n = reader.u32();
      for (uint32_t i = 0; i < n && reader.ok(); i++) field(reader, frame.body), reader.u64();
      break;
    }
    case Msg::Start:
      reader.u64();
      field(reader, frame.body);
      reader.u32(), reader.u32(), reader.u32();
      field(reader, frame.body);
      break;
    case Msg::Stop: reader.u64(); break;
    case Msg::Exited: reader.u64(), reader.u32(), reader.u32(); break;
    case Msg::Crash:
      crash::describe(frame.body);
      crash::inShouldStep(frame.body);
      break;
    default: break;
  }
  // Once short, a Reader stays short.
  if (!reader.ok()) {
    reader.u64();
    require(!reader.ok(), "a failed Reader recovered");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A socket pair holds far more than libFuzzer's default input size, so
  // the write below completes at once.
  if (size > 64 * 1024) return 0;
  int fds[2];
  require(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0, "socketpair failed");
  require(::write(fds[0], data, size) == static_cast<ssize_t>(size), "short write");
  ::close(fds[0]);
  Channel channel(fds[1]);
  // Like the coordinator's poll loop: read what is there, take whole frames.
  channel.readAvailable();
  Frame frame;
  size_t framed = 0;
  while (channel.next(&frame)) {
    framed += 8 + frame.body.size();
    require(framed <= size, "frames hold more bytes than arrived");
    decode(frame);
  }
  // And the blocking read the workers use, on the same bytes.
  int again[2];
  require(::socketpair(AF_UNIX, SOCK_STREAM, 0, again) == 0, "socketpair failed");
  require(::write(again[0], data, size) == static_cast<ssize_t>(size), "short write");
  ::close(again[0]);
  Channel blocking(again[1]);
  while (blocking.receive(&frame)) decode(frame);
  std::string host;
  int port = 0;
  splitAddress(std::string(reinterpret_cast<const char*>(data), size), &host, &port);
  return 0;
}
