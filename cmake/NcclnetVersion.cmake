# SPDX-License-Identifier: Apache-2.0
# Reads the SDK version from sdk/include/ncclnet/version.h (its one home)
# into NCCLNET_SDK_VERSION, before project() so project(VERSION) can use it.
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../sdk/include/ncclnet/version.h _ncclnet_version_line
     REGEX "^#define NCCLNET_SDK_VERSION_STRING \"[0-9]+\\.[0-9]+\\.[0-9]+\"")
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" NCCLNET_SDK_VERSION "${_ncclnet_version_line}")
if(NOT NCCLNET_SDK_VERSION)
  message(FATAL_ERROR "sdk/include/ncclnet/version.h: no NCCLNET_SDK_VERSION_STRING \"X.Y.Z\" line")
endif()
