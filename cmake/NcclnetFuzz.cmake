# SPDX-License-Identifier: Apache-2.0
# libFuzzer targets (NCCLNET_BUILD_FUZZERS=ON, clang only; docs/fuzzing.md).
#
#   ncclnet_add_fuzzer(<name> SOURCES <files> [LIBRARIES <targets>] CORPUS <dir>
#                      [NEEDS_PRIVATE_NETWORK])
#
# builds <name> and registers its smoke test, <name>_smoke (label "fuzz"):
# every seed in CORPUS, then NCCLNET_FUZZ_SECONDS of new inputs. What the run
# finds is kept in the build tree, never in the seed corpus.
set(NCCLNET_FUZZ_SECONDS 5 CACHE STRING "How long each fuzzer's smoke test runs (seconds)")
add_custom_target(ncclnet_fuzzers)

function(ncclnet_add_fuzzer name)
  cmake_parse_arguments(F "NEEDS_PRIVATE_NETWORK" "CORPUS" "SOURCES;LIBRARIES" ${ARGN})
  add_executable(${name} ${F_SOURCES})
  target_link_libraries(${name} PRIVATE ${F_LIBRARIES})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  add_dependencies(ncclnet_fuzzers ${name})
  set(found ${CMAKE_CURRENT_BINARY_DIR}/${name}-corpus)
  file(MAKE_DIRECTORY ${found})
  # -timeout: one input that runs this long is a hang, reported like a crash.
  # A failing input is saved as <build dir>/<name>-crash-<sha1> (or -leak-,
  # -timeout-): add it to CORPUS once fixed, as a regression input.
  add_test(NAME ${name}_smoke
           COMMAND ${name} -max_total_time=${NCCLNET_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
                   -print_final_stats=1 -artifact_prefix=${CMAKE_BINARY_DIR}/${name}-
                   ${found} ${F_CORPUS})
  math(EXPR limit "${NCCLNET_FUZZ_SECONDS} + 300")
  set_tests_properties(${name}_smoke PROPERTIES LABELS fuzz TIMEOUT ${limit})
  # A fuzzer whose inputs choose addresses enters a network namespace of its
  # own first (sdk/testing: private_network.hpp) and exits 77 where it may not.
  if(F_NEEDS_PRIVATE_NETWORK)
    set_tests_properties(${name}_smoke PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()
