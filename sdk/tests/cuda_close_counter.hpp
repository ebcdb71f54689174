// SPDX-License-Identifier: Apache-2.0
// Counts the process's dlcloses of libcuda.so.1, for the tests that check
// that a library's CUDA driver object goes when NCCL (or a plugin) unloads
// the library (ncclnet/cuda_driver_slot.hpp): the driver object's one
// release action is its dlclose of libcuda. Include in exactly one .cc of a
// test executable built with ENABLE_EXPORTS: this header defines dlclose,
// so every library's call reaches it, and it forwards to the C library's.
// Run on the CPU stand-in for the driver (sdk/tests/fake_cuda).
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <string>

#include "ncclnet/cuda_driver.hpp"

namespace cuda_close_counter {

inline std::atomic<void*> gLibrary{nullptr};  // libcuda's handle, once watched
inline std::atomic<int> gCloses{0};

inline int realDlclose(void* handle) {
  static const auto real = reinterpret_cast<int (*)(void*)>(dlsym(RTLD_NEXT, "dlclose"));
  return real(handle);
}

// Loads libcuda for good (the driver's RTLD_NODELETE) and counts its
// dlcloses from zero; false and *why when the stand-in is not the driver found.
inline bool watch(std::string* why) {
  {
    ncclnet::cuda::Driver probe("libcuda.so.1");
    if (!probe.available()) {
      *why = "the CUDA stand-in is " + probe.whyNot();
      return false;
    }
  }
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);  // the same for every dlopen
  realDlclose(handle);
  gLibrary = handle;
  gCloses = 0;
  return true;
}

inline int closes() {
  return gCloses.load();
}

}  // namespace cuda_close_counter

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  if (handle == cuda_close_counter::gLibrary.load()) cuda_close_counter::gCloses++;
  return cuda_close_counter::realDlclose(handle);
}
