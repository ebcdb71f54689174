// SPDX-License-Identifier: Apache-2.0
// File: ncclnet/cuda_driver_slot.hpp — the CUDA driver object a shared
// library owns, released when the library unloads.
//
// Driver::get() is process-wide and never destroyed, on purpose: an
// executable's exit handlers may call the driver late. A library that is
// dlopen'd and dlclose'd (NCCL unloads net plugins; sdk-ib unloads its verbs
// library) would leave that object, and its reference on libcuda, behind at
// every unload. So every such library keeps one DriverSlot at namespace
// scope instead: the driver is opened on first need and released when the
// library unloads. Users hold the shared_ptr for as long as they copy
// through the driver, so an object that outlives the slot (a registration
// still open at unload) keeps the driver it uses.
//
//   ncclnet::cuda::DriverSlot gDriver;  // in one .cc of the library
//   std::shared_ptr<const ncclnet::cuda::Driver> cu = gDriver.get();
//   if (cu != nullptr && cu->available()) ...
#pragma once

#include <memory>
#include <mutex>

#include "ncclnet/cuda_driver.hpp"

namespace ncclnet {
namespace cuda {

class DriverSlot {
 public:
  // constexpr: a slot at namespace scope is ready before any constructor of
  // its library runs, whatever the order of initialization.
  constexpr DriverSlot() = default;
  ~DriverSlot() {
    std::lock_guard<std::mutex> lock(mutex_);
    driver_.reset();
    closed_ = true;
  }
  DriverSlot(const DriverSlot&) = delete;
  DriverSlot& operator=(const DriverSlot&) = delete;

  // The driver (loaded, or with the reason it is not); nullptr once the
  // library is unloading.
  std::shared_ptr<const Driver> get() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (driver_ == nullptr && !closed_) {
      driver_ = std::make_shared<const Driver>("libcuda.so.1");
    }
    return driver_;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<const Driver> driver_;
  bool closed_ = false;
};

}  // namespace cuda
}  // namespace ncclnet
