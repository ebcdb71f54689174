#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks an ncclnet-conformance JUnit report the way a CI system reads it.

  check_junit.py REPORT.xml REPORT.json

The XML must parse; its counts must add up (testsuites and each testsuite:
tests, failures, skipped against the testcases they hold); and it must say
what the JSON certificate of the same run says: one testcase per scenario
result, failed exactly where the JSON has a failure (or, under --strict, a
warning or notrun), skipped where it has notrun or excluded. Exit 0 when
all holds, 1 with one line per problem otherwise.
"""
import json
import sys
import xml.etree.ElementTree as ET


def main(xml_path, json_path):
    problems = []
    try:
        root = ET.parse(xml_path).getroot()
    except (ET.ParseError, OSError) as e:
        print(f"{xml_path}: not well-formed XML: {e}")
        return 1
    with open(json_path, encoding="utf-8") as f:
        report = json.load(f)

    if root.tag != "testsuites":
        problems.append(f"root element is <{root.tag}>, expected <testsuites>")
    cases = {}
    for suite in root.findall("testsuite"):
        mine = suite.findall("testcase")
        for attr, count in (("tests", len(mine)),
                            ("failures", sum(c.find("failure") is not None for c in mine)),
                            ("skipped", sum(c.find("skipped") is not None for c in mine))):
            if int(suite.get(attr, "-1")) != count:
                problems.append(f"testsuite {suite.get('name')}: {attr}={suite.get(attr)}, "
                                f"but it holds {count}")
        for case in mine:
            name = f"{case.get('classname')}.{case.get('name')}"
            if not case.get("name") or not case.get("classname"):
                problems.append(f"a testcase without name or classname in {suite.get('name')}")
            cases[name] = case
    all_cases = list(cases.values())
    for attr, count in (("tests", len(all_cases)),
                        ("failures", sum(c.find("failure") is not None for c in all_cases)),
                        ("skipped", sum(c.find("skipped") is not None for c in all_cases))):
        if int(root.get(attr, "-1")) != count:
            problems.append(f"testsuites: {attr}={root.get(attr)}, but the report holds {count}")

    strict = report.get("strict", False)
    results = report.get("scenarios", [])
    if len(results) != len(cases):
        problems.append(f"{len(cases)} testcases, but the JSON has {len(results)} results")
    for r in results:
        case = cases.get(r["test"])
        if case is None:
            problems.append(f"{r['test']}: in the JSON, not in the XML")
            continue
        verdict = r["verdict"]
        fails = verdict == "fail" or (strict and verdict in ("warn", "notrun"))
        skips = not fails and verdict in ("notrun", "excluded")
        if (case.find("failure") is not None) != fails:
            problems.append(f"{r['test']}: JSON verdict {verdict}, XML "
                            f"{'has' if case.find('failure') is not None else 'lacks'} a failure")
        if (case.find("skipped") is not None) != skips:
            problems.append(f"{r['test']}: JSON verdict {verdict}, XML "
                            f"{'has' if case.find('skipped') is not None else 'lacks'} a skip")
    for p in problems:
        print(f"{xml_path}: {p}")
    if not problems:
        print(f"{xml_path}: well-formed, {len(cases)} testcases agree with {json_path}")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
