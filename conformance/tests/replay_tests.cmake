# SPDX-License-Identifier: Apache-2.0
# Replay: the shipped traces pass on every bundled plugin through every ABI
# version; a plugin that reports a wrong size or corrupts a byte fails with
# the first divergence named by trace line; --replay refuses what it cannot
# pair; and the checker, wrapped around each bundled plugin while the
# reference transport drives NCCL's patterns, reports nothing, and what it
# records replays. Included from CMakeLists.txt (CHECK, OUT, PROFILES set).

set(TRACES ${CMAKE_CURRENT_SOURCE_DIR}/../traces)

# The plan alone: pairing, seeds and refusals.
add_executable(conformance_replay_plan_test replay_plan_test.cc ../src/replay/plan.cc
               ../src/replay/trace_text.cc)
target_include_directories(conformance_replay_plan_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../src)
target_link_libraries(conformance_replay_plan_test PRIVATE GTest::gtest_main)
include(GoogleTest)
gtest_discover_tests(conformance_replay_plan_test DISCOVERY_TIMEOUT 60)
set(REPLAY_ENV_sdk_socket "NCCL_SOCKET_IFNAME=lo")
set(REPLAY_ENV_sdk_ofi "FI_PROVIDER=tcp\\;ofi_rxm;FI_TCP_IFACE=lo;NCCLNET_OFI_DOMAINS=lo")
if(TARGET softverbs)
  set(REPLAY_ENV_sdk_ib "NCCL_IBVERBS_LIB=$<TARGET_FILE:softverbs>")
endif()
set(REPLAY_PROFILE_sdk_socket sdk-socket)
set(REPLAY_PROFILE_sdk_ofi sdk-ofi)
set(REPLAY_PROFILE_sdk_ib sdk-ib-softverbs)
# sdk-ofi's first listen opens an rxm endpoint: 1.4-1.9 s on a 2-core machine
# at load 12-15, over the suite's 1 s "never blocks" bound (the checker's
# conformance runs scale it by 3 for the same reason).
set(REPLAY_ARGS_sdk_ofi ";--time-scale;3")

foreach(plugin sdk_socket sdk_ofi sdk_ib)
  if(NOT TARGET ${plugin}_plugin OR (plugin STREQUAL "sdk_ib" AND NOT TARGET softverbs))
    continue()
  endif()
  set(name conformance_replay_${plugin})
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:ncclnet-conformance> -DPLUGIN=$<TARGET_FILE:${plugin}_plugin>
            -DJSON=${OUT}/${name}.json
            "-DARGS=--profile;${PROFILES}/${REPLAY_PROFILE_${plugin}}.yaml;--abi;all;--gtest_filter=*/Replay.*;--junit;${OUT}/${name}.xml${REPLAY_ARGS_${plugin}}"
            -DJUNIT=${OUT}/${name}.xml -DEXPECT=pass -P ${CHECK})
  # Alone, like the plugins' catalogue runs: their "never blocks" bounds are wall-clock.
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE
                       ENVIRONMENT "${REPLAY_ENV_${plugin}}")

  # The checker around the plugin while the reference transport drives each
  # pattern: no violation (NCCLNET_CHECK_ABORT=1 and no checker line), and
  # the traces it wrote replay on the same plugin.
  set(name ncclnet_check_wraps_${plugin}_under_the_reference_transport)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DRECORDER=$<TARGET_FILE:ncclnet-pattern-recorder>
            -DCHECKER=$<TARGET_FILE:sdk_check_plugin> -DPLUGIN=$<TARGET_FILE:${plugin}_plugin>
            -DBIN=$<TARGET_FILE:ncclnet-conformance> -DWORK=${OUT}/${name}
            -DPROFILE=${PROFILES}/${REPLAY_PROFILE_${plugin}}.yaml
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_recorded_clean.cmake)
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE
                       ENVIRONMENT "${REPLAY_ENV_${plugin}}")
endforeach()

# --replay DIR of a shipped trace: one test per ABI version, all passing.
if(TARGET sdk_socket_plugin)
  add_test(NAME conformance_replay_directory_sdk_socket
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:ncclnet-conformance> -DPLUGIN=$<TARGET_FILE:sdk_socket_plugin>
            -DJSON=${OUT}/replay-directory.json
            "-DARGS=--replay;${TRACES}/ring-ll;--abi;all;--junit;${OUT}/replay-directory.xml"
            -DJUNIT=${OUT}/replay-directory.xml -DEXPECT=pass -DCOUNT=7 -P ${CHECK})
  set_tests_properties(conformance_replay_directory_sdk_socket PROPERTIES TIMEOUT 120
                       ENVIRONMENT "NCCL_SOCKET_IFNAME=lo")
endif()

# Broken plugins: the first divergence, by trace line and what differed.
add_test(NAME conformance_replay_catches_a_wrong_size
  COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:ncclnet-conformance>
          -DPLUGIN=$<TARGET_FILE:conf_tcp_plugin> -DJSON=${OUT}/replay-wrong-sizes.json
          "-DARGS=--gtest_filter=v12/Replay.RingSimple;--junit;${OUT}/replay-wrong-sizes.xml"
          -DJUNIT=${OUT}/replay-wrong-sizes.xml -DEXPECT=fail -DSCENARIO=Replay.RingSimple
          "-DRULE=rule 35 CompletionReportsSizes"
          "-DALSO=: diverged from ring-simple/rank;(test r=;): irecv of line ;, buffer 0: test reported 65536 bytes, the recording "
          -P ${CHECK})
add_test(NAME conformance_replay_catches_a_corrupt_byte
  COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:ncclnet-conformance>
          -DPLUGIN=$<TARGET_FILE:conf_tcp_plugin> -DJSON=${OUT}/replay-corrupts-a-byte.json
          "-DARGS=--gtest_filter=v12/Replay.P2pSharedBuffers;--junit;${OUT}/replay-corrupts-a-byte.xml"
          -DJUNIT=${OUT}/replay-corrupts-a-byte.xml -DEXPECT=fail -DSCENARIO=Replay.P2pSharedBuffers
          "-DRULE=rule 35 CompletionReportsSizes"
          "-DALSO=: diverged from p2p-shared/rank;(test r=;): irecv of line ;byte 1000 differs from what the sender sent"
          -P ${CHECK})
# A real NCCL job's calls catch what only pipelining shows: a send that a
# later one overtakes (every run; early completion, timing-bound, in most).
add_test(NAME conformance_replay_nccl_catches_reordered_sends
  COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:ncclnet-conformance>
          -DPLUGIN=$<TARGET_FILE:conf_tcp_plugin> -DJSON=${OUT}/replay-nccl-reorders.json
          "-DARGS=--gtest_filter=v12/Replay.NcclP2p;--junit;${OUT}/replay-nccl-reorders.xml"
          -DJUNIT=${OUT}/replay-nccl-reorders.xml -DEXPECT=fail -DSCENARIO=Replay.NcclP2p
          "-DRULE=rule 35 CompletionReportsSizes"
          "-DALSO=: diverged from nccl-p2p/rank"
          -P ${CHECK})
set_tests_properties(conformance_replay_catches_a_wrong_size conformance_replay_catches_a_corrupt_byte
                     conformance_replay_nccl_catches_reordered_sends PROPERTIES TIMEOUT 120)
set_tests_properties(conformance_replay_catches_a_wrong_size PROPERTIES
                     ENVIRONMENT CONF_TCP_DEFECT=wrong-sizes)
set_tests_properties(conformance_replay_catches_a_corrupt_byte PROPERTIES
                     ENVIRONMENT CONF_TCP_DEFECT=corrupts-a-byte)
set_tests_properties(conformance_replay_nccl_catches_reordered_sends PROPERTIES
                     ENVIRONMENT CONF_TCP_DEFECT=reorders-sends)

# Traces that cannot be replayed are refused with one line that says why.
add_test(NAME conformance_replay_refuses_an_unpaired_connect
  COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:ncclnet-conformance> -DPLUGIN=$<TARGET_FILE:conf_tcp_plugin>
          -DJSON=${OUT}/replay-unpaired.json
          "-DARGS=--replay;${CMAKE_CURRENT_SOURCE_DIR}/traces/unpaired" -DEXPECT=reject
          "-DRULE=ncclnet-conformance: cannot replay: rank0.trace:4 (connect c=2 dev=0 h=00000000000000aa rc=0): connects to a listen that no trace holds"
          -P ${CHECK})
add_test(NAME conformance_replay_refuses_trace_version_1
  COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:ncclnet-conformance> -DPLUGIN=$<TARGET_FILE:conf_tcp_plugin>
          -DJSON=${OUT}/replay-version1.json
          "-DARGS=--replay;${CMAKE_CURRENT_SOURCE_DIR}/traces/version1" -DEXPECT=reject
          "-DRULE=ncclnet-conformance: cannot replay: rank0.trace: trace version 1 does not say which connect meets which listen"
          -P ${CHECK})
