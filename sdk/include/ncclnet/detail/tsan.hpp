// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: scopes in which ThreadSanitizer does not check this thread's
// reads (or writes) for races, for the few accesses that race by design, so
// that a ThreadSanitizer run reports only what is a bug. Without
// ThreadSanitizer they compile to nothing.
//
// LL and LL128 are the design in question: a plugin lands a step in the
// buffer with whatever stores it has (recv(), memcpy, a NIC's DMA) while
// the consumer polls the flags that share the words with the data. The
// contract never asks a plugin for atomic stores, so the consumer's reads
// race with them; a matching flag is what proves the data beside it landed.
//
//   {
//     ncclnet::detail::TsanIgnoreReads racyByDesign;
//     ready = flagsMatch(lines);
//   }
#pragma once

#if defined(__SANITIZE_THREAD__)
#define NCCLNET_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NCCLNET_TSAN 1
#endif
#endif

#ifdef NCCLNET_TSAN
// ThreadSanitizer's dynamic annotations (its runtime defines them). Ignored
// accesses are neither recorded nor checked; an ignored acquire load still
// synchronizes.
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
#endif

namespace ncclnet::detail {

// [[maybe_unused]]: without ThreadSanitizer a scope does nothing, and its
// variable would be reported as unused.
class [[maybe_unused]] TsanIgnoreReads {
 public:
#ifdef NCCLNET_TSAN
  TsanIgnoreReads() {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  }
  ~TsanIgnoreReads() {
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
#else
  TsanIgnoreReads() = default;
#endif
  TsanIgnoreReads(const TsanIgnoreReads&) = delete;
  TsanIgnoreReads& operator=(const TsanIgnoreReads&) = delete;
};

class [[maybe_unused]] TsanIgnoreWrites {
 public:
#ifdef NCCLNET_TSAN
  TsanIgnoreWrites() {
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  }
  ~TsanIgnoreWrites() {
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
  }
#else
  TsanIgnoreWrites() = default;
#endif
  TsanIgnoreWrites(const TsanIgnoreWrites&) = delete;
  TsanIgnoreWrites& operator=(const TsanIgnoreWrites&) = delete;
};

}  // namespace ncclnet::detail
