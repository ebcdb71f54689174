// SPDX-License-Identifier: Apache-2.0
// The in-process traffic shapes (shapes_test.cc) with every rank on CUDA
// device 0: CudaMemoryProvider memory and CudaDevicePeer kernels that
// produce the pattern and check every received byte on the GPU. testnet
// and loopnet copy with the CPU, so the buffers stay in pinned host memory.
#include "cuda_fixture.hpp"
#include "shapes.hpp"

namespace ncclnet::transport::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(CudaPeer, Shapes,
                         ::testing::Values(DevicePeerKind{"CudaKernels", OnGpu::ranks(),
                                                          [] {
                                                            std::string why = OnGpu::whyNoGpu();
                                                            return why.empty() ? why
                                                                               : "no GPU: " + why;
                                                          }}),
                         peerName);

}  // namespace
}  // namespace ncclnet::transport::testing
