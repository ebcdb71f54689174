# SPDX-License-Identifier: Apache-2.0
# cmake --install: headers, the host library, plugins and tools (installed by
# their own folders), a CMake package (find_package(ncclnet-sdk)) and two
# pkg-config files: ncclnet-plugin (for plugin authors) and ncclnet-sdk (for
# hosts that load plugins).
include(CMakePackageConfigHelpers)

set(NCCLNET_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ncclnet-sdk)

install(DIRECTORY sdk/include/ncclnet DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ncclnet_headers ncclnet_plugin ncclnet_host ncclnet_cuda ncclnet_unpack
        EXPORT ncclnet-sdk-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ncclnet-sdk-targets NAMESPACE ncclnet:: DESTINATION ${NCCLNET_CMAKE_DIR})

configure_package_config_file(cmake/ncclnet-sdkConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ncclnet-sdkConfig.cmake
  INSTALL_DESTINATION ${NCCLNET_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ncclnet-sdkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/ncclnet-sdkConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/ncclnet-sdkConfigVersion.cmake
  cmake/NcclnetPlugin.cmake
  cmake/ncclnet-plugin.map
  DESTINATION ${NCCLNET_CMAKE_DIR})

# Relocatable: the prefix is found relative to the .pc file, so an install
# with `cmake --install --prefix X` works wherever X is.
file(RELATIVE_PATH NCCLNET_PC_TO_PREFIX
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
foreach(pc ncclnet-plugin ncclnet-sdk)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
