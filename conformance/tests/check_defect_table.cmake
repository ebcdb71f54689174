# SPDX-License-Identifier: Apache-2.0
# conf-tcp refuses a defect it does not know: its init fails (ncclnet-info
# finds nothing loadable, exit 1) with one line that lists every defect it knows, and that list is
# the one the tests' expected verdicts name, no more and no less (cmake -P).
#   -DINFO=<ncclnet-info> -DPLUGIN=<conf-tcp> -DNAMES=<defect;...>
set(ENV{CONF_TCP_DEFECT} "ignores-tags,no-such-defect")
execute_process(COMMAND ${INFO} --plugin ${PLUGIN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "an unknown defect: expected init to fail (exit 1), got ${rc}:\n${out}${err}")
endif()
set(said "CONF_TCP_DEFECT names 'no-such-defect', which is no defect of conf-tcp; known:")
if(NOT "${out}${err}" MATCHES "${said}([^\n]*)\n")
  message(FATAL_ERROR "an unknown defect: no line saying '${said} ...':\n${out}${err}")
endif()
string(STRIP "${CMAKE_MATCH_1}" known)
string(REPLACE " " ";" known "${known}")
list(SORT known)
set(expected ${NAMES})
list(SORT expected)
if(NOT known STREQUAL expected)
  message(FATAL_ERROR "the plugin knows '${known}'\nthe tests expect verdicts of '${expected}'")
endif()
list(LENGTH known count)
message("conf-tcp knows the ${count} defects the tests name")
