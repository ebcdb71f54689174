# SPDX-License-Identifier: Apache-2.0
# Optional components. Each one found enables what needs it; a missing one
# disables only that, and the configure summary says so.

# CUDA toolkit: nvcc, the runtime and NCCL's headers (GPU tools and tests only;
# plugins never link the CUDA runtime).
find_package(CUDAToolkit QUIET)
find_program(NCCLNET_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
find_path(NCCLNET_NCCL_INCLUDE_DIR nccl.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include)
find_library(NCCLNET_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
set(NCCLNET_HAVE_CUDA ${CUDAToolkit_FOUND})

# CUDA kernels (the reference transport's CUDA device peer): need nvcc as a
# CMake language. -DNCCLNET_WITH_CUDA_KERNELS=OFF (or no toolkit) builds
# everything else. Architectures: native code for Hopper plus PTX that any
# newer GPU (and sm_75+) JIT-compiles; override with
# -DCMAKE_CUDA_ARCHITECTURES="80-real;90-real;90-virtual" etc.
option(NCCLNET_WITH_CUDA_KERNELS "Build the CUDA device peer when nvcc is found" ON)
set(NCCLNET_HAVE_CUDA_KERNELS FALSE)
if(NCCLNET_HAVE_CUDA AND NCCLNET_WITH_CUDA_KERNELS)
  include(CheckLanguage)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NCCLNET_NVCC)
    set(CMAKE_CUDA_COMPILER ${NCCLNET_NVCC})
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Werror;-Werror=all-warnings>")
    set(NCCLNET_HAVE_CUDA_KERNELS TRUE)
  endif()
endif()
if(NCCLNET_NCCL_INCLUDE_DIR)
  set(NCCLNET_HAVE_NCCL_HEADERS TRUE)
else()
  set(NCCLNET_HAVE_NCCL_HEADERS FALSE)
endif()

find_package(PkgConfig QUIET)
set(NCCLNET_HAVE_LIBFABRIC FALSE)
if(PkgConfig_FOUND)
  pkg_check_modules(LIBFABRIC QUIET IMPORTED_TARGET libfabric)
  if(LIBFABRIC_FOUND)
    set(NCCLNET_HAVE_LIBFABRIC TRUE)
  endif()
endif()

find_path(NCCLNET_IBVERBS_INCLUDE_DIR infiniband/verbs.h)
if(NCCLNET_IBVERBS_INCLUDE_DIR)
  set(NCCLNET_HAVE_IBVERBS TRUE)
else()
  set(NCCLNET_HAVE_IBVERBS FALSE)
endif()

find_package(yaml-cpp QUIET)
set(NCCLNET_HAVE_YAMLCPP ${yaml-cpp_FOUND})

# CLI11 (header-only) parses the command lines of the tools and the
# conformance suite, through tools/common/ncclnet_cli.hpp; plugins never
# link it.
find_package(CLI11 CONFIG QUIET)
set(NCCLNET_HAVE_CLI11 ${CLI11_FOUND})
if(NCCLNET_HAVE_CLI11)
  add_library(ncclnet_cli INTERFACE)
  target_include_directories(ncclnet_cli INTERFACE ${PROJECT_SOURCE_DIR}/tools/common)
  target_link_libraries(ncclnet_cli INTERFACE CLI11::CLI11)
endif()

find_package(GTest QUIET)
set(NCCLNET_HAVE_GTEST ${GTest_FOUND})

# The tools' and the suite's JSON reports are written and read through
# nlohmann-json (header-only); plugins never use it.
find_package(nlohmann_json 3 CONFIG QUIET)
set(NCCLNET_HAVE_NLOHMANN_JSON ${nlohmann_json_FOUND})
find_package(Threads REQUIRED)

function(_ncclnet_summary_line what found enables)
  if(found)
    message(STATUS "  ${what}: found")
  else()
    message(STATUS "  ${what}: NOT found -> ${enables} disabled")
  endif()
endfunction()

function(ncclnet_print_summary)
  message(STATUS "")
  message(STATUS "nccl-net-sdk ${PROJECT_VERSION} configuration")
  message(STATUS "  build type: ${CMAKE_BUILD_TYPE}")
  if(NCCLNET_SANITIZE_ADDRESS)
    message(STATUS "  sanitizers: address + undefined")
  elseif(NCCLNET_SANITIZE_THREAD)
    message(STATUS "  sanitizers: thread")
  else()
    message(STATUS "  sanitizers: none")
  endif()
  if(NCCLNET_BUILD_FUZZERS)
    message(STATUS "  fuzzers: built (target ncclnet_fuzzers, smoke tests: ctest -L fuzz)")
  endif()
  _ncclnet_summary_line("CUDA toolkit" "${NCCLNET_HAVE_CUDA}" "GPU tools and GPU tests")
  if(NCCLNET_HAVE_CUDA_KERNELS)
    message(STATUS "  CUDA kernels: nvcc for ${CMAKE_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "  CUDA kernels: NOT built -> the CUDA device peer and its tests disabled")
  endif()
  _ncclnet_summary_line("NCCL headers" "${NCCLNET_HAVE_NCCL_HEADERS}" "the nccl.h agreement test and the NCCL driver")
  _ncclnet_summary_line("libfabric" "${NCCLNET_HAVE_LIBFABRIC}" "sdk-ofi")
  _ncclnet_summary_line("libibverbs headers" "${NCCLNET_HAVE_IBVERBS}" "sdk-ib")
  _ncclnet_summary_line("yaml-cpp" "${NCCLNET_HAVE_YAMLCPP}" "ncclnet-conformance profiles")
  _ncclnet_summary_line("nlohmann-json" "${NCCLNET_HAVE_NLOHMANN_JSON}"
                        "ncclnet-info, ncclnet-bench, nccl-driver and ncclnet-conformance")
  _ncclnet_summary_line("CLI11" "${NCCLNET_HAVE_CLI11}"
    "the tools and ncclnet-conformance (apt-get install libcli11-dev)")
  _ncclnet_summary_line("GoogleTest" "${NCCLNET_HAVE_GTEST}" "the test suite")
  message(STATUS "")
endfunction()
