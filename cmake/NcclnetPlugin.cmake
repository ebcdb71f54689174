# SPDX-License-Identifier: Apache-2.0
# ncclnet_add_plugin(<target> NAME <suffix> SOURCES <files...>
#                    [NO_INSTALL] [COMPONENT <install component>])
#
# Builds libnccl-net-<suffix>.so from C++ sources that use
# NCCLNET_EXPORT_PLUGIN. Everything but the ncclNetPlugin_vN tables is
# hidden: visibility presets plus a linker version script, so not even a
# static library linked into the plugin leaks a symbol NCCL could bind to.
# Links against ncclnet::plugin (the SDK's plugin-side headers). Installed to
# the library folder, where NCCL_NET_PLUGIN=<suffix> finds it, unless
# NO_INSTALL is given (test plugins); COMPONENT names the install component
# (one package per plugin under CPack).
include(GNUInstallDirs)

set(NCCLNET_PLUGIN_VERSION_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/ncclnet-plugin.map)

function(ncclnet_add_plugin target)
  cmake_parse_arguments(ARG "NO_INSTALL" "NAME;COMPONENT" "SOURCES" ${ARGN})
  if(NOT ARG_NAME)
    message(FATAL_ERROR "ncclnet_add_plugin(${target}): NAME <suffix> is required")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME nccl-net-${ARG_NAME}
    PREFIX lib
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${NCCLNET_PLUGIN_VERSION_SCRIPT})
  if(TARGET ncclnet::plugin)
    target_link_libraries(${target} PRIVATE ncclnet::plugin)
  else()
    target_link_libraries(${target} PRIVATE ncclnet_plugin)
  endif()
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${NCCLNET_PLUGIN_VERSION_SCRIPT}"
    "LINKER:--exclude-libs,ALL")
  ncclnet_no_undefined(${target})
  if(NOT ARG_NO_INSTALL)
    if(ARG_COMPONENT)
      install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
              COMPONENT ${ARG_COMPONENT})
    else()
      install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    endif()
  endif()
endfunction()

# ncclnet_add_plugin_core(<target> SOURCES <files...> [LIBRARIES <libs...>]
#                         [INCLUDES <dirs...>])
#
# A plugin's pieces as a static library that the plugin (plugin.cc and the
# export) and its unit tests link alike: hidden like the plugin, so nothing
# leaks once it is linked in, with its folder (and INCLUDES) on the include
# path of whoever links it, and the SDK's plugin-side headers.
function(ncclnet_add_plugin_core target)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;INCLUDES" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} ${ARG_INCLUDES})
  if(TARGET ncclnet::plugin)
    target_link_libraries(${target} PUBLIC ncclnet::plugin ${ARG_LIBRARIES})
  else()
    target_link_libraries(${target} PUBLIC ncclnet_plugin ${ARG_LIBRARIES})
  endif()
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# Every symbol of a loadable library resolved at link time, so that a
# missing one fails the build rather than NCCL's dlopen. Not under clang's
# sanitizers: there the sanitizer runtime lives in the executable that
# loads the library (the fuzzers), not in the library.
function(ncclnet_no_undefined target)
  if(NOT (CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND
          (NCCLNET_SANITIZE_ADDRESS OR NCCLNET_SANITIZE_THREAD)))
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()
