/* SPDX-License-Identifier: Apache-2.0 */
/* The SDK's release version: the one place it is written. CMake reads it for
 * project(VERSION), the CMake package and the pkg-config files, so a plugin
 * built against these headers and the tools that certify it agree on what
 * "0.2.0" means. C and C++.
 *
 *   #if NCCLNET_SDK_VERSION >= NCCLNET_SDK_VERSION_OF(0, 2, 0)
 */
#ifndef NCCLNET_VERSION_H_
#define NCCLNET_VERSION_H_

#define NCCLNET_SDK_VERSION_MAJOR 0
#define NCCLNET_SDK_VERSION_MINOR 2
#define NCCLNET_SDK_VERSION_PATCH 0
#define NCCLNET_SDK_VERSION_STRING "0.2.0"

#define NCCLNET_SDK_VERSION_OF(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define NCCLNET_SDK_VERSION                                                                   \
  NCCLNET_SDK_VERSION_OF(NCCLNET_SDK_VERSION_MAJOR, NCCLNET_SDK_VERSION_MINOR,                \
                         NCCLNET_SDK_VERSION_PATCH)

#endif /* NCCLNET_VERSION_H_ */
