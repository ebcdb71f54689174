// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): NCCLNET_HD marks the small helpers
// that both the proxy (host code) and the CUDA device peer (kernels) call,
// so step arithmetic, line words and the byte pattern have one definition.
// Plain C++ compilers see nothing.
#pragma once

#if defined(__CUDACC__)
#define NCCLNET_HD __host__ __device__
#else
#define NCCLNET_HD
#endif
