#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A plugin that never notices a dead peer warns once per peer-death scenario
# in an --abi all run: the first ABI version runs it to its bound, the
# others are NotRun and name that first test (conformance/src/suite.cc).
#   peer_death_not_repeated.py NCCLNET_CONFORMANCE PLUGIN PROFILE JSON
import json
import subprocess
import sys

binary, plugin, profile, report = sys.argv[1:5]
scenario = "Faults.PeerDeathWhileIdle"
run = subprocess.run([binary, "--plugin", plugin, "--profile", profile, "--abi", "all",
                      "--no-progress", "--gtest_filter=*/" + scenario, "--json", report],
                     capture_output=True, text=True, timeout=240)
print(run.stdout[-3000:])
if run.returncode != 0:
    sys.exit("expected a passing run with a warning, got exit %d" % run.returncode)
results = [s for s in json.load(open(report))["scenarios"] if s["scenario"] == scenario]
verdicts = [s["verdict"] for s in results]
if len(results) < 2 or verdicts[0] != "warn" or any(v != "notrun" for v in verdicts[1:]):
    sys.exit("expected one warn, then notrun at every other version: %s" % verdicts)
first = "v%d/%s" % (results[0]["abi"], scenario)
for s in results[1:]:
    if not s["reason"].startswith("not repeated: " + first):
        sys.exit("v%d: the reason does not name %s: %s" % (s["abi"], first, s["reason"]))
    if s["seconds"] > 1:
        sys.exit("v%d: a scenario not repeated took %.1f s" % (s["abi"], s["seconds"]))
print("ok: %s warned at v%d, not repeated at %d other versions"
      % (scenario, results[0]["abi"], len(results) - 1))
