# SPDX-License-Identifier: Apache-2.0
# The checker wraps PLUGIN while the reference transport drives each of
# NCCL's patterns between two processes (ncclnet-pattern-recorder): every
# run must end cleanly with no checker WARN line (NCCLNET_CHECK_ABORT=1
# would also abort on the first), and the traces it wrote must replay on
# the same plugin.
#   cmake -DRECORDER=<ncclnet-pattern-recorder> -DCHECKER=<libnccl-net-sdk-check.so>
#         -DPLUGIN=<plugin> -DBIN=<ncclnet-conformance> -DPROFILE=<plugin's profile>
#         -DWORK=<scratch dir> -P check_recorded_clean.cmake
foreach(pattern ring-simple ring-ll ring-ll128 p2p-shared)
  set(dir ${WORK}/${pattern})
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  set(ENV{NCCLNET_CHECK_PLUGIN} ${PLUGIN})
  set(ENV{NCCLNET_CHECK_TRACE} ${dir})
  set(ENV{NCCLNET_CHECK_ABORT} 1)
  # 5 s, as the checker's conformance runs (tools/ncclnet-check/tests): on a
  # loaded 2-core machine sdk-ofi's first listen (an rxm endpoint) was
  # descheduled past 1 s; the interposer tests cover the bound itself.
  set(ENV{NCCLNET_CHECK_BLOCK_US} 5000000)
  execute_process(COMMAND ${RECORDER} --plugin ${CHECKER} --pattern ${pattern} --channels 4
                          --rounds 3 --max-bytes 300000
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  unset(ENV{NCCLNET_CHECK_PLUGIN})
  unset(ENV{NCCLNET_CHECK_TRACE})
  unset(ENV{NCCLNET_CHECK_ABORT})
  unset(ENV{NCCLNET_CHECK_BLOCK_US})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${pattern}: the checked run failed (${rc}): ${out}${err}")
  endif()
  string(FIND "${err}" "NET/check" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${pattern}: the checker reported a violation:\n${err}")
  endif()
  # The suite's bounds scaled by 3, as for the checker's conformance runs:
  # this test runs a recording and a replay back to back on a busy machine.
  execute_process(COMMAND ${BIN} --plugin ${PLUGIN} --profile ${PROFILE} --time-scale 3
                          --replay ${dir} --no-progress
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${pattern}: its trace does not replay (${rc}):\n${out}${err}")
  endif()
  message("${pattern}: no violation, and its trace replays")
endforeach()
