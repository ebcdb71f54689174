# SPDX-License-Identifier: Apache-2.0
# Debian packages from the install components (cmake/NcclnetInstall.cmake):
#   cpack -G DEB            (in the build tree)
# gives, for version X and architecture A:
#   ncclnet-sdk_X_A.deb          ncclnet-conformance, ncclnet-info, ncclnet-bench,
#                                profiles, docs, man pages
#   ncclnet-sdk-dev_X_A.deb      headers, libraries, CMake package, pkg-config,
#                                ncclnet-new-plugin, the example project
#   ncclnet-sdk-socket_X_A.deb   libnccl-net-sdk-socket.so
#   ncclnet-sdk-ofi_X_A.deb      libnccl-net-sdk-ofi.so (needs libfabric1)
#   ncclnet-sdk-ib_X_A.deb       libnccl-net-sdk-ib.so, and softverbs for
#                                checking it without an RDMA device
#   ncclnet-sdk-check_X_A.deb    libnccl-net-sdk-check.so, the contract
#                                checker that wraps any plugin in a job
# Binaries are stripped; run-time dependencies come from dpkg-shlibdeps.
# Installed under /usr, so the plugins sit on the loader's default path,
# where NCCL_NET_PLUGIN=sdk-socket finds them.
set(CPACK_PACKAGE_NAME ncclnet-sdk)
set(CPACK_PACKAGE_VENDOR "nccl-net-sdk")
set(CPACK_PACKAGE_CONTACT "nccl-net-sdk maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "SDK and conformance suite for NCCL network plugins")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev socket check)
if(TARGET sdk_ofi_plugin)
  list(APPEND CPACK_COMPONENTS_ALL ofi)
endif()
if(TARGET sdk_ib_plugin)
  list(APPEND CPACK_COMPONENTS_ALL ib)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ncclnet-sdk)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION net)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "ncclnet-sdk-socket (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "SDK and conformance suite for NCCL network plugins: tools
 ncclnet-conformance certifies any NCCL net plugin (libnccl-net-*.so) against the
 contract NCCL relies on; ncclnet-info shows what NCCL would load and why;
 ncclnet-bench measures a plugin against raw TCP or libfabric.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME ncclnet-sdk-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "ncclnet-sdk (= ${PROJECT_VERSION}), cmake (>= 3.20) | pkg-config")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "g++ (>= 4:12)")
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "SDK for NCCL network plugins: headers and libraries
 C ABI headers identical to NCCL's net plugin ABI v6..v12, a C++ layer that exports
 every version from one class, a host-side loader, a CMake package, pkg-config
 files, ncclnet-new-plugin and an example project.")

set(CPACK_DEBIAN_SOCKET_PACKAGE_NAME ncclnet-sdk-socket)
set(CPACK_DEBIAN_SOCKET_PACKAGE_SECTION net)
set(CPACK_DEBIAN_SOCKET_DESCRIPTION
    "NCCL net plugin sdk-socket (TCP)
 libnccl-net-sdk-socket.so: NCCL_NET_PLUGIN=sdk-socket.")

set(CPACK_DEBIAN_OFI_PACKAGE_NAME ncclnet-sdk-ofi)
set(CPACK_DEBIAN_OFI_PACKAGE_SECTION net)
set(CPACK_DEBIAN_OFI_DESCRIPTION
    "NCCL net plugin sdk-ofi (libfabric)
 libnccl-net-sdk-ofi.so: NCCL_NET_PLUGIN=sdk-ofi.")

set(CPACK_DEBIAN_IB_PACKAGE_NAME ncclnet-sdk-ib)
set(CPACK_DEBIAN_IB_PACKAGE_SECTION net)
# libibverbs is opened at run time (dlopen), so shlibdeps cannot see it.
set(CPACK_DEBIAN_IB_PACKAGE_RECOMMENDS "libibverbs1")
set(CPACK_DEBIAN_IB_DESCRIPTION
    "NCCL net plugin sdk-ib (InfiniBand/RoCE verbs)
 libnccl-net-sdk-ib.so: NCCL_NET_PLUGIN=sdk-ib. Also softverbs, a software
 verbs device for checking the plugin without an RDMA device.")

set(CPACK_DEBIAN_CHECK_PACKAGE_NAME ncclnet-sdk-check)
set(CPACK_DEBIAN_CHECK_PACKAGE_SECTION net)
set(CPACK_DEBIAN_CHECK_DESCRIPTION
    "NCCL net plugin contract checker
 libnccl-net-sdk-check.so: NCCL_NET_PLUGIN=sdk-check with
 NCCLNET_CHECK_PLUGIN=<plugin> checks every call NCCL makes to that plugin
 against the net plugin contract while a real job runs.")

include(CPack)
