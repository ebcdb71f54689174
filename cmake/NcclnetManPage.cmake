# SPDX-License-Identifier: Apache-2.0
# Run as a script (cmake -P): writes a man page for a tool from its --help,
# so the page says exactly what the installed binary accepts.
#   cmake -DTOOL=<exe> -DNAME=<name> -DSUMMARY=<one line> -DVERSION=<x.y.z>
#         -DOUT=<file.1> -P NcclnetManPage.cmake
execute_process(COMMAND ${TOOL} --help OUTPUT_VARIABLE help ERROR_VARIABLE help_err
                RESULT_VARIABLE rc)
if(help STREQUAL "")
  set(help "${help_err}")
endif()
if(help STREQUAL "")
  message(FATAL_ERROR "${NAME} --help printed nothing (exit ${rc})")
endif()
# roff: a backslash starts an escape and a leading '.' or '\'' a request.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(TOUPPER "${NAME}" upper)
file(WRITE ${OUT}.tmp
".TH ${upper} 1 \"\" \"nccl-net-sdk ${VERSION}\" \"nccl-net-sdk\"
.SH NAME
${NAME} \\- ${SUMMARY}
.SH SYNOPSIS AND OPTIONS
.nf
${help}
.fi
.SH SEE ALSO
The documentation installed with nccl-net-sdk (share/doc/ncclnet-sdk): conformance.md,
contract.md, tools.md, abi.md.
")
file(RENAME ${OUT}.tmp ${OUT})
