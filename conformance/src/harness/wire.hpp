// SPDX-License-Identifier: Apache-2.0
// The control channel: length-framed messages over TCP between the
// coordinator, the per-node agents and the rank workers. Handles, barriers
// and verdicts travel here, never through the plugin under test.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace conformance {

enum class Msg : uint32_t {
  // worker -> coordinator
  Hello = 1,   // run id, rank
  Gather,      // sequence, timeout ms, label, payload
  Activity,    // what the rank is doing now
  Verdict,     // how the rank ended (RankEnd), rule, alwaysFails, text, failedAtMs
  Note,        // a remark that goes into the report
  ExpectExit,  // this rank is about to die on purpose
  // coordinator -> worker
  Gathered,      // every rank's payload, in rank order
  GatherFailed,  // why the gather cannot complete
  // agent <-> coordinator
  AgentHello,  // world rank
  Start,       // run id, scenario, ABI version, rank, ranks, control address
  Stop,        // run id: kill what is left of it
  Exited,      // run id, rank, wait status
  Quit,
  // worker -> coordinator, before its verdict
  Counters,  // n, then n × (name, value): what the rank counted (registrations by kind)
  // worker (or probe) -> its watcher, from a signal handler or exit()
  Crash,  // event, activity and frames, one a line (harness/crash_report.hpp)
};

// Encodes the fields of a message body.
class Writer {
 public:
  Writer& u32(uint32_t v);
  Writer& u64(uint64_t v);
  Writer& str(const std::string& s);
  const std::string& data() const { return data_; }

 private:
  std::string data_;
};

// Decodes them; a short or malformed body leaves ok() false.
class Reader {
 public:
  explicit Reader(const std::string& data) : data_(data) {}
  uint32_t u32();
  uint64_t u64();
  std::string str();
  bool ok() const { return ok_; }

 private:
  bool take(void* out, size_t n);
  const std::string& data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

struct Frame {
  Msg type = Msg::Quit;
  std::string body;
};

// One end of a control connection; owns the socket.
class Channel {
 public:
  explicit Channel(int fd = -1) : fd_(fd) {}
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  int fd() const { return fd_; }
  void close();
  // Whole frames only; safe from several threads.
  bool send(Msg type, const std::string& body = "");
  // Blocks for one frame; false on EOF or error.
  bool receive(Frame* out);
  // For poll loops: reads what is there without blocking. Returns false on
  // EOF or error; complete frames can then be taken with next().
  bool readAvailable();
  bool next(Frame* out);

 private:
  int fd_;
  std::mutex sendMutex_;
  std::string inbox_;
};

// A listening TCP socket on host:port (port 0: any). Returns the fd or -1.
int listenTcp(const std::string& host, int port, int* boundPort, std::string* error);
// Connects, retrying until `timeoutSec` passes (the listener may not be up
// yet on another node). Returns the fd or -1.
int connectTcp(const std::string& host, int port, double timeoutSec, std::string* error);
// "host:port" -> parts; false when malformed.
bool splitAddress(const std::string& address, std::string* host, int* port);

double nowSeconds();

}  // namespace conformance
