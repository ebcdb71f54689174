# SPDX-License-Identifier: Apache-2.0
# cmake --install, in components that CPack turns into one package each
# (cmake/NcclnetPackaging.cmake):
#   runtime  the tools, their profiles, docs and man pages (the default
#            component: every install() without one lands here)
#   dev      headers, the host and helper libraries, the CMake package, two
#            pkg-config files (ncclnet-plugin for plugin authors, ncclnet-sdk
#            for hosts), the out-of-tree example and ncclnet-new-plugin
#   socket, ofi, ib   one per bundled plugin (plugins/*/CMakeLists.txt)
# Test plugins are never installed (ncclnet_add_plugin(... NO_INSTALL)).
include(CMakePackageConfigHelpers)

set(NCCLNET_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ncclnet-sdk)
set(NCCLNET_DATA_DIR ${CMAKE_INSTALL_DATADIR}/ncclnet-sdk)

install(DIRECTORY sdk/include/ncclnet DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(TARGETS ncclnet_headers ncclnet_params ncclnet_blocks ncclnet_plugin ncclnet_host ncclnet_cuda ncclnet_unpack
        EXPORT ncclnet-sdk-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ncclnet-sdk-targets NAMESPACE ncclnet:: DESTINATION ${NCCLNET_CMAKE_DIR}
        COMPONENT dev)

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
  DESTINATION ${NCCLNET_CMAKE_DIR} COMPONENT dev)

# Relocatable: the prefix is found relative to the .pc file, so an install
# with `cmake --install --prefix X` works wherever X is.
file(RELATIVE_PATH NCCLNET_PC_TO_PREFIX
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
foreach(pc ncclnet-plugin ncclnet-sdk)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
          COMPONENT dev)
endforeach()

# The vendor kit: the project generator, its template, and the smallest
# complete out-of-tree project.
install(PROGRAMS tools/ncclnet-new-plugin/ncclnet-new-plugin DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT dev)
install(DIRECTORY tools/ncclnet-new-plugin/template/ DESTINATION ${NCCLNET_DATA_DIR}/template
        COMPONENT dev)
install(FILES sdk/tests/out_of_tree/CMakeLists.txt sdk/tests/out_of_tree/hello_net.cc
              sdk/tests/out_of_tree/hello_host.cc
        DESTINATION ${NCCLNET_DATA_DIR}/examples/hello-net COMPONENT dev)
