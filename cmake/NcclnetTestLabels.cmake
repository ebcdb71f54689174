# SPDX-License-Identifier: Apache-2.0
# Labels choose the tests a job runs (ctest -L LABEL), so that no script
# keeps a list of tests or a pattern over their names:
#   gpu   the unit tests that need a GPU and skip without one
#         (scripts/gpu/run_all.sh, PARTS=tests, with NCCLNET_REQUIRE_GPU=1)
#   asan  the unit tests run under ASan + UBSan (scripts/sanitize.sh)
#   tsan  the tests that run threads against each other (the plugins' helper
#         threads and progress, softverbs' device threads), under TSan
#         (scripts/sanitize.sh)
#   fuzz  every fuzzer's smoke run (scripts/fuzz.sh, NcclnetFuzz.cmake)
#   long  catalogue runs that repeat, through the ABI versions NCCL no
#         longer picks, what a faster test runs through the current ones
#         (conformance_by_abi); CI's main job skips them, .ci/long runs them
# A job that builds only what it runs builds ncclnet_<label>_tests, which
# depends on every executable whose tests carry the label.

# ncclnet_gtest_labels(TARGET [LABELS label...] [GPU regex] [ALSO test...])
# Labels every test gtest_discover_tests(TARGET) found with LABELS, and those
# whose name matches GPU with gpu as well; ALSO names tests added with
# add_test that run TARGET too, which get LABELS where they exist. Call it after
# gtest_discover_tests(TARGET) and those add_test calls, and give
# gtest_discover_tests no LABELS: the discovered names are only known to
# ctest, so the labels are set when ctest reads the tests, after discovery's
# own file.
function(ncclnet_gtest_labels target)
  cmake_parse_arguments(arg "" "GPU" "LABELS;ALSO" ${ARGN})
  set(file ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  set(gpu "")
  if(arg_GPU)
    set(gpu "  if(test MATCHES [==[${arg_GPU}]==])\n    list(APPEND labels gpu)\n  endif()\n")
  endif()
  file(WRITE ${file}
    "# Written by ncclnet_gtest_labels (cmake/NcclnetTestLabels.cmake).\n"
    "foreach(test IN LISTS ${target}_TESTS)\n"
    "  set(labels ${arg_LABELS})\n"
    "${gpu}"
    "  if(labels)\n"
    "    set_tests_properties(\"\${test}\" PROPERTIES LABELS \"\${labels}\")\n"
    "  endif()\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${file})
  foreach(test ${arg_ALSO})
    if(TEST ${test} AND arg_LABELS)
      set_property(TEST ${test} APPEND PROPERTY LABELS ${arg_LABELS})
    endif()
  endforeach()
  foreach(label ${arg_LABELS})
    ncclnet_label_builds(${label} ${target})
  endforeach()
endfunction()

# ncclnet_label_builds(LABEL TARGET...): ncclnet_<LABEL>_tests builds them.
function(ncclnet_label_builds label)
  if(NOT TARGET ncclnet_${label}_tests)
    add_custom_target(ncclnet_${label}_tests)
  endif()
  add_dependencies(ncclnet_${label}_tests ${ARGN})
endfunction()
