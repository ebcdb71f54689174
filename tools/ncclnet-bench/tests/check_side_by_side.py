#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs ncclnet-bench side by side (the arguments after the binary are its
own) with --json, then checks the shape of what it printed and wrote: one
column per subject and one ratio per other subject in the table, every run
in the JSON, summaries and ratios that follow from the runs. No figure is
compared with a speed: benchmarks are not timed tests."""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def quartiles(values):
    # The bench's definition: linear interpolation between sorted samples.
    s = sorted(values)

    def q(p):
        pos = p * (len(s) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    return q(0.25), q(0.5), q(0.75)


def close(a, b):
    # The JSON carries 9 significant digits.
    return abs(a - b) <= 1e-7 * max(1.0, abs(a), abs(b))


def check_summary(where, runs, summary):
    q1, median, q3 = quartiles(runs)
    if not (close(summary["median"], median) and close(summary["q1"], q1)
            and close(summary["q3"], q3)):
        fail(f"{where}: summary {summary} does not follow from the runs {runs}")
    if not (close(summary["min"], min(runs)) and close(summary["max"], max(runs))):
        fail(f"{where}: min/max {summary} do not follow from the runs {runs}")
    if not close(median, statistics.median(runs)):
        fail(f"{where}: median {median} is not the runs' median")


def check_points(report, section, unit_key, runs, labels):
    for point in report[section]:
        where = f"{section} {point['size']} B"
        got = [s["label"] for s in point["subjects"]]
        if got != labels:
            fail(f"{where}: subjects {got}, expected {labels}")
        by_label = {}
        for s in point["subjects"]:
            values = s[unit_key + "_runs"]
            if len(values) != runs or any(v <= 0 for v in values):
                fail(f"{where}: {s['label']} has runs {values}, expected {runs} positive values")
            check_summary(f"{where} {s['label']}", values, s[unit_key])
            by_label[s["label"]] = values
        ratios = point["ratios"]
        if [(r["of"], r["to"]) for r in ratios] != [(labels[0], l) for l in labels[1:]]:
            fail(f"{where}: ratios {[(r['of'], r['to']) for r in ratios]}")
        for r in ratios:
            expected = [a / b for a, b in zip(by_label[r["of"]], by_label[r["to"]])]
            if len(r["runs"]) != runs or not all(close(x, y) for x, y in zip(r["runs"], expected)):
                fail(f"{where}: ratio runs {r['runs']} are not run-by-run quotients {expected}")
            check_summary(f"{where} ratio to {r['to']}", r["runs"], r["summary"])


def main():
    if len(sys.argv) < 3:
        fail("usage: check_side_by_side.py NCCLNET_BENCH ARGS...")
    bench, args = sys.argv[1], sys.argv[2:]
    runs = int(args[args.index("--runs") + 1])
    comms = int(args[args.index("--comms") + 1])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        proc = subprocess.run([bench, *args, "--json", path], capture_output=True, text=True,
                              timeout=170)
        print(proc.stdout)
        print(proc.stderr, file=sys.stderr)
        if proc.returncode != 0:
            fail(f"ncclnet-bench exited with {proc.returncode}")
        with open(path) as f:
            report = json.load(f)

    subjects = report["subjects"]
    labels = [s["label"] for s in subjects]
    plugins = args.count("--plugin") + args.count("--against")
    baselines = args[args.index("--baseline") + 1].split(",") if "--baseline" in args else ["tcp"]
    if len(subjects) != plugins + len(baselines):
        fail(f"{len(subjects)} subjects {labels}, expected {plugins} plugins and {baselines}")
    if len(set(labels)) != len(labels):
        fail(f"subject labels are not distinct: {labels}")
    settings = report["settings"]
    if settings["runs"] != runs or settings["comms"] != comms:
        fail(f"settings {settings} do not echo --runs {runs} --comms {comms}")
    if report["machine"]["cpus"] < 1 or not report["machine"]["load_average_before"]:
        fail(f"machine {report['machine']} lacks CPUs or load average")
    if not report["bandwidth"] or len(report["latency"]) != 3:
        fail("expected bandwidth points and 3 latency sizes")
    check_points(report, "bandwidth", "gbps", runs, labels)
    check_points(report, "latency", "us", runs, labels)

    # The table: a header naming every subject and every ratio, one row per
    # size, each ratio cell equal to the JSON's median.
    lines = proc.stdout.splitlines()
    header = next((l for l in lines if l.startswith("size ")), None)
    if header is None:
        fail("no bandwidth table header")
    for label in labels:
        if f"{label} GB/s" not in header:
            fail(f"the table header lacks '{label} GB/s': {header}")
    for label in labels[1:]:
        if f"{labels[0]} / {label}" not in header:
            fail(f"the table header lacks the ratio to {label}: {header}")
    start = lines.index(header)
    rows = lines[start + 1:start + 1 + len(report["bandwidth"])]
    for row, point in zip(rows, report["bandwidth"]):
        cells = [c for c in row.split("   ") if c.strip()]
        if len(cells) != 1 + len(labels) + len(labels) - 1:
            fail(f"row '{row}' has {len(cells)} cells")
        for cell, ratio in zip(cells[1 + len(labels):], point["ratios"]):
            printed = float(cell.split()[0])
            median = ratio["summary"]["median"]
            if abs(printed - median) > 0.006 * max(1.0, median):
                fail(f"row '{row}': ratio {printed} is not the JSON's {ratio['summary']['median']}")
    print(f"OK: {len(labels)} subjects, {len(report['bandwidth'])} sizes, {runs} runs, "
          f"{comms} comms")


if __name__ == "__main__":
    main()
