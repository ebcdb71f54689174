// SPDX-License-Identifier: Apache-2.0
// sdk-ib and softverbs: the CUDA driver object a shared library owns.
//
// ncclnet::cuda::Driver::get() is process-wide and never destroyed, on
// purpose: an executable's exit handlers may call the driver late. A
// library that is dlopen'd and dlclose'd (NCCL unloads net plugins; sdk-ib
// unloads its verbs library) would leave that object behind at every
// unload. So each library keeps one DriverSlot at namespace scope: the
// driver is opened on first need and released when the library unloads.
// Users hold the shared_ptr for as long as they copy through the driver.
//
//   DriverSlot gDriver;  // in one .cc of the library
//   std::shared_ptr<const ncclnet::cuda::Driver> cu = gDriver.get();
//   if (cu != nullptr && cu->available()) ...
#pragma once

#include <memory>
#include <mutex>

#include "ncclnet/cuda_driver.hpp"

namespace ncclnet::ib {

class DriverSlot {
 public:
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
  std::shared_ptr<const ncclnet::cuda::Driver> get() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (driver_ == nullptr && !closed_) {
      driver_ = std::make_shared<const ncclnet::cuda::Driver>("libcuda.so.1");
    }
    return driver_;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<const ncclnet::cuda::Driver> driver_;
  bool closed_ = false;
};

}  // namespace ncclnet::ib
