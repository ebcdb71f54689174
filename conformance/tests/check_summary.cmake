# SPDX-License-Identifier: Apache-2.0
# `ncclnet-conformance --summary` over the reports of three runs (a pass, a
# pass with a warning, a failure) prints for each the result line that run
# printed, word for word, and exits 1 because one failed; --verbose adds
# what did not pass; a file that is no report, or has a member of the
# wrong type, exits 2 (cmake -P).
#   -DBIN=<ncclnet-conformance> -DOUT=<dir> -DPROFILE=<broken.yaml>
#   -DPLUGIN=<conf-tcp> -DWARN=<defect> -DFAIL=<defect> (CONF_TCP_DEFECT values;
#   the pass run plants none)
set(PASS_ARGS --abi all --gtest_filter=Properties.SpeedPositive)
set(WARN_ARGS --gtest_filter=v12/Properties.NamesUnique)
set(FAIL_ARGS --gtest_filter=v12/Data.RecvLargerThanSend)
set(reports "")
set(lines "")
foreach(kind PASS WARN FAIL)
  set(json ${OUT}/summary-${kind}.json)
  file(REMOVE ${json})
  set(ENV{CONF_TCP_DEFECT} "${${kind}}")
  execute_process(COMMAND ${BIN} --plugin ${PLUGIN} --profile ${PROFILE} --no-progress
                          --json ${json} ${${kind}_ARGS}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT out MATCHES "\n((PASS|FAIL): [^\n]*)\n")
    message(FATAL_ERROR "the ${kind} run printed no result line: ${out}${err}")
  endif()
  message("${kind} run: ${CMAKE_MATCH_1}")
  list(APPEND reports ${json})
  string(APPEND lines "${json}: ${CMAKE_MATCH_1}\n")
endforeach()

execute_process(COMMAND ${BIN} --summary ${reports} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("--summary (exit ${rc}):\n${out}${err}")
if(NOT out STREQUAL lines)
  message(FATAL_ERROR "expected the runs' own result lines:\n${lines}")
endif()
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit 1 (a report failed), got ${rc}")
endif()

execute_process(COMMAND ${BIN} --summary --verbose ${reports} OUTPUT_VARIABLE out)
foreach(text "  warn     v12/Properties.NamesUnique: rule 8 "
             "  fail     v12/Data.RecvLargerThanSend: rule 35 ")
  string(FIND "${out}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "--summary --verbose does not list '${text}':\n${out}")
  endif()
endforeach()

execute_process(COMMAND ${BIN} --summary ${OUT}/summary-PASS.json ${PROFILE} RESULT_VARIABLE rc
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "not an ncclnet-conformance JSON report")
  message(FATAL_ERROR "a profile read as a report: expected exit 2 saying so, got ${rc}: ${err}")
endif()

# JSON that is not a report, or a report with a member of the wrong type:
# refused with one line and exit 2, never an escaped exception.
file(WRITE ${OUT}/summary-not-a-report.json "{\"tool\": 1, \"scenarios\": []}")
file(WRITE ${OUT}/summary-bad-member.json
     "{\"tool\": \"ncclnet-conformance\", \"scenarios\": [{\"test\": \"t\", \"abi\": \"x\"}]}")
foreach(bad not-a-report bad-member)
  execute_process(COMMAND ${BIN} --summary ${OUT}/summary-${bad}.json RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "summary-${bad}.json: not an ncclnet-conformance JSON report")
    message(FATAL_ERROR "summary-${bad}.json: expected exit 2 saying it is no report, got ${rc}: ${err}")
  endif()
endforeach()
