# SPDX-License-Identifier: Apache-2.0
# Runs the GpuMemory area of ncclnet-conformance and checks its JSON report
# (cmake -P). Every scenario passes or, without a GPU, is NotRun with its
# reason. With NCCLNET_REQUIRE_GPU=1 in the environment (a GPU machine) a
# scenario left NotRun for want of a GPU or of the plugin's GPU support
# fails the test (a GPU that cannot export DMA-BUF handles, an optional
# member the plugin lacks, an ABI window stay NotRun), and the report must
# count CUDA registrations.
#   -DBIN=<ncclnet-conformance> -DPLUGIN=<path> -DJSON=<report> -DARGS="a;b"
file(REMOVE ${JSON})
execute_process(COMMAND ${BIN} --plugin ${PLUGIN} --json ${JSON} ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT EXISTS ${JSON})
  message(FATAL_ERROR "no JSON report (exit ${rc}): ${err}")
endif()
file(READ ${JSON} report)
string(JSON result GET "${report}" result)
if(NOT rc EQUAL 0 OR NOT result STREQUAL "pass")
  message(FATAL_ERROR "expected a passing run, got exit ${rc}, result ${result}: ${err}")
endif()
string(JSON count LENGTH "${report}" scenarios)
if(count EQUAL 0)
  message(FATAL_ERROR "the report lists no scenario")
endif()

set(require "$ENV{NCCLNET_REQUIRE_GPU}")
math(EXPR last "${count} - 1")
set(ran 0)
foreach(i RANGE ${last})
  string(JSON test GET "${report}" scenarios ${i} test)
  string(JSON verdict GET "${report}" scenarios ${i} verdict)
  string(JSON reason GET "${report}" scenarios ${i} reason)
  if(verdict STREQUAL "pass")
    math(EXPR ran "${ran} + 1")
    continue()
  endif()
  message("${test}: ${verdict}: ${reason}")
  # What a GPU host must not lack: the GPU itself, or the plugin's GPU
  # support. Optional members (irecvConsumed) and ABI windows stay NotRun.
  if(require STREQUAL "1" AND reason MATCHES "no GPU|does not advertise|regMrDmaBuf is NULL")
    message(FATAL_ERROR "NCCLNET_REQUIRE_GPU=1, but ${test} did not run: ${reason}")
  endif()
endforeach()

string(JSON cuda ERROR_VARIABLE none GET "${report}" summary counters cudaRegistrations)
string(JSON dmabuf ERROR_VARIABLE none GET "${report}" summary counters dmabufRegistrations)
if(NOT cuda)
  set(cuda 0)
endif()
if(NOT dmabuf)
  set(dmabuf 0)
endif()
message("${ran} of ${count} GpuMemory runs passed; registrations: CUDA ${cuda}, DMA-BUF ${dmabuf}")
if(require STREQUAL "1" AND NOT cuda GREATER 0)
  message(FATAL_ERROR "NCCLNET_REQUIRE_GPU=1, but the report counts no CUDA registration")
endif()
