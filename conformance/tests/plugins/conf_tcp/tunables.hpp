// SPDX-License-Identifier: Apache-2.0
// The values conf-tcp takes from its environment at init, so that one build
// can show where real NCCL starts to fail as a property or a call's duration
// moves past a rule's threshold (scripts/gpu/thresholds.sh). Unset, they are
// the defaults, which honour every rule.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

namespace conftcp {

struct Tunables {
  double latency = 0;        // CONF_TCP_LATENCY: µs; "nan" and "inf" parse too (rule 14)
  int maxComms = 65536;      // CONF_TCP_MAX_COMMS (rule 15)
  int64_t maxP2pBytes = -1;  // CONF_TCP_MAX_P2P_BYTES; -1: NCCL_MAX_NET_SIZE_BYTES (rule 18)
  int slowSetupMs = 0;       // CONF_TCP_SLOW_SETUP_MS: each listen/connect/accept (rules 21, 22)
  int slowCloseMs = 0;       // CONF_TCP_SLOW_CLOSE_MS: each deregMr/close* (rule 51)

  // Reads the variables above; a value that does not parse whole leaves
  // *bad naming it, and the plugin's init fails with that name.
  static Tunables fromEnvironment(std::string* bad) {
    Tunables t;
    readDouble("CONF_TCP_LATENCY", &t.latency, bad);
    readInt("CONF_TCP_MAX_COMMS", &t.maxComms, bad);
    readInt("CONF_TCP_MAX_P2P_BYTES", &t.maxP2pBytes, bad);
    readInt("CONF_TCP_SLOW_SETUP_MS", &t.slowSetupMs, bad);
    readInt("CONF_TCP_SLOW_CLOSE_MS", &t.slowCloseMs, bad);
    return t;
  }

  static void stall(int ms) {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

 private:
  static void readDouble(const char* name, double* out, std::string* bad) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return;
    char* end = nullptr;
    double value = std::strtod(text, &end);
    if (*end != '\0')
      *bad = name;
    else
      *out = value;
  }
  template <typename Int>
  static void readInt(const char* name, Int* out, std::string* bad) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return;
    char* end = nullptr;
    long long value = std::strtoll(text, &end, 10);
    if (*end != '\0')
      *bad = name;
    else
      *out = static_cast<Int>(value);
  }
};

}  // namespace conftcp
