# SPDX-License-Identifier: Apache-2.0
# Run as a script (cmake -P) at every build: writes OUT, a header with the
# source tree's git commit, only when the commit changed, so that a tool's
# --version and a report's provenance name the code they came from without a
# rebuild of everything at each commit. A tree without git (a release tarball)
# says "unknown" unless the packager passes -DNCCLNET_GIT_COMMIT=... .
#   cmake -DSOURCE_DIR=... -DOUT=... [-DGIT_COMMIT=...] -P NcclnetBuildInfo.cmake
set(commit "${GIT_COMMIT}")
if(NOT commit)
  execute_process(COMMAND git -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    execute_process(COMMAND git -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  else()
    set(commit "unknown")
  endif()
endif()
set(text "/* Generated at build time by cmake/NcclnetBuildInfo.cmake. */\n#define NCCLNET_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
