// SPDX-License-Identifier: Apache-2.0
// The driver types and values ncclnet/cuda_driver.hpp declares agree with
// the CUDA toolkit's cuda.h (built only where the toolkit is installed).
#include <cuda.h>

#include <type_traits>

#include "ncclnet/cuda_driver.hpp"

namespace cu = ncclnet::cuda;

static_assert(std::is_same<cu::Context, CUcontext>::value, "CUcontext");
static_assert(std::is_same<cu::Stream, CUstream>::value, "CUstream");
static_assert(std::is_same<cu::Module, CUmodule>::value, "CUmodule");
static_assert(std::is_same<cu::Function, CUfunction>::value, "CUfunction");
static_assert(std::is_same<cu::DevicePtr, CUdeviceptr>::value, "CUdeviceptr");
static_assert(std::is_same<cu::Device, CUdevice>::value, "CUdevice");
static_assert(sizeof(cu::Result) == sizeof(CUresult), "CUresult");
static_assert(cu::kSuccess == CUDA_SUCCESS, "CUDA_SUCCESS");
static_assert(cu::kErrorInvalidValue == CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE");
static_assert(cu::kErrorNotInitialized == CUDA_ERROR_NOT_INITIALIZED, "NOT_INITIALIZED");
static_assert(cu::kErrorNoDevice == CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE");
static_assert(cu::kErrorNotSupported == CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED");
static_assert(cu::kErrorNotReady == CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY");
static_assert(cu::kPointerAttributeContext == CU_POINTER_ATTRIBUTE_CONTEXT, "CONTEXT");
static_assert(cu::kPointerAttributeMemoryType == CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "MEMORY_TYPE");
static_assert(cu::kPointerAttributeDevicePointer == CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
              "DEVICE_POINTER");
static_assert(cu::kPointerAttributeDeviceOrdinal == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
              "DEVICE_ORDINAL");
static_assert(cu::kMemoryTypeHost == CU_MEMORYTYPE_HOST, "CU_MEMORYTYPE_HOST");
static_assert(cu::kMemoryTypeDevice == CU_MEMORYTYPE_DEVICE, "CU_MEMORYTYPE_DEVICE");
static_assert(cu::kDeviceAttributeDmaBufSupported == CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
              "DMA_BUF_SUPPORTED");
static_assert(cu::kMemRangeHandleTypeDmaBufFd == CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, "DMA_BUF_FD");
static_assert(cu::kStreamNonBlocking == CU_STREAM_NON_BLOCKING, "CU_STREAM_NON_BLOCKING");
