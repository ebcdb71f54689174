#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads the files sdk-socket writes with NCCLNET_SOCKET_TRACE_DIR=DIR and
prints where each connection's messages spent their time.

    NCCLNET_SOCKET_TRACE_DIR=/tmp/trace ... (run NCCL or ncclnet-bench)
    scripts/socket_trace.py /tmp/trace [--ring2-allreduce] [--brief]

Each comm writes sdk-socket-<pid>-<send|recv>-<local port>-<peer port>.txt
with one line per message: postedNs matchedNs lastByteNs reportedNs bytes
(steady clock, comparable between the processes of one host). A send file
and the receive file with its ports swapped are the two ends of one
connection; their k-th lines are the same message.

--ring2-allreduce also splits a ring loop of a 2-rank all-reduce (4 messages
per channel and direction: 2 slices of the rank's own chunk, then 2 it
reduced from the peer's) into network hops and the GPU's turnaround, for
each receive comm and the send comm of the same rank and channel.

--brief prints one line per measure: the median over connections (or
chains) of their medians.
"""
import glob
import os
import re
import sys

NAME = re.compile(r"sdk-socket-(\d+)-(send|recv)-(\d+)-(\d+)\.txt$")


def load(directory):
    comms = []
    for path in sorted(glob.glob(os.path.join(directory, "sdk-socket-*.txt"))):
        m = NAME.search(path)
        if not m:
            continue
        rows = []
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if line.startswith("#") or not line.strip():
                    continue
                fields = line.split()
                try:
                    if len(fields) != 5:
                        raise ValueError
                    rows.append([int(x) for x in fields])
                except ValueError:
                    print("note: %s line %d is not 5 integers; skipped" % (path, number))
        comms.append(dict(pid=int(m.group(1)), kind=m.group(2), local=int(m.group(3)),
                          peer=int(m.group(4)), rows=rows, name=os.path.basename(path)))
    return comms


def quantiles(values):
    """(p10, median, p90) in microseconds, or None."""
    if not values:
        return None
    v = sorted(values)
    n = len(v)
    return tuple(v[min(n - 1, int(q * n))] / 1e3 for q in (0.1, 0.5, 0.9))


def fmt(q):
    return "%8.1f %8.1f %8.1f" % q if q else "%8s %8s %8s" % ("-", "-", "-")


def pairs(comms):
    """Send and receive files of one connection. Their k-th lines are the
    same message while every receive had one buffer (NCCL's collectives);
    grouped receives (n > 1) write one line for n sends, so the pairing
    only holds up to the first of them."""
    recvs = {(c["local"], c["peer"]): c for c in comms if c["kind"] == "recv"}
    paired = set()
    for s in comms:
        if s["kind"] != "send":
            continue
        r = recvs.get((s["peer"], s["local"]))
        if r is None:
            print("note: %s has no receive file with its ports swapped; left out" % s["name"])
            continue
        paired.add(r["name"])
        if len(s["rows"]) != len(r["rows"]):
            print("note: %s has %d messages, %s %d; the first %d are compared" %
                  (s["name"], len(s["rows"]), r["name"], len(r["rows"]),
                   min(len(s["rows"]), len(r["rows"]))))
        yield s, r
    for r in recvs.values():
        if r["name"] not in paired:
            print("note: %s has no send file with its ports swapped; left out" % r["name"])


def connection_stages(send, recv, min_bytes):
    """Stage name -> list of ns over the messages of at least min_bytes."""
    S, R = send["rows"], recv["rows"]
    n = min(len(S), len(R))
    big = [k for k in range(n) if S[k][4] >= min_bytes]
    # A message with no striped bytes has lastByteNs 0: its bytes moved with the match.
    last = lambda row: max(row[2], row[1])
    return {
        "send: waiting for clear-to-send": [S[k][1] - S[k][0] for k in big],
        "header: sender matched -> receiver read it": [R[k][1] - S[k][1] for k in big],
        "send: matched -> last byte sent": [last(S[k]) - S[k][1] for k in big],
        "recv: header -> last byte received": [last(R[k]) - R[k][1] for k in big],
        "recv: last byte -> test()": [R[k][3] - last(R[k]) for k in big],
        "hop: isend -> receiver's test()": [R[k][3] - S[k][0] for k in big],
        "period: isend -> next isend": [S[k + 1][0] - S[k][0] for k in big if k + 1 < n],
    }


def ring2_chain(comms, hop_of):
    """For each receive comm and send comm of one process: the GPU turnaround
    of a 2-rank ring all-reduce, if that pairing fits the pattern."""
    found = []
    for r in comms:
        if r["kind"] != "recv":
            continue
        for s in comms:
            if s["kind"] != "send" or s["pid"] != r["pid"] or hop_of.get(s["name"]) is r:
                continue
            R, S = r["rows"], s["rows"]
            loops = min(len(R), len(S)) // 4 - 1
            if loops < 4:
                continue
            reduced = [S[4 * L + 2 + j][0] - R[4 * L + j][3] for L in range(loops) for j in (0, 1)]
            nextloop = [S[4 * L + 4][0] - R[4 * L + 3][3] for L in range(loops)]
            loop = [S[4 * L + 4][0] - S[4 * L][0] for L in range(loops)]
            q = quantiles(reduced)
            found.append((q[0], r, s, q, quantiles(nextloop), quantiles(loop)))
    # The true pairing is the one whose fastest turnarounds are still positive
    # and largest: a wrong pairing mixes unrelated events, often negative.
    found.sort(key=lambda f: -f[0])
    used, chains = set(), []
    for f in found:
        if f[0] <= 0 or f[1]["name"] in used or f[2]["name"] in used:
            continue
        used.update((f[1]["name"], f[2]["name"]))
        chains.append(f)
    return chains


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if v else float("nan")


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__)
        return 2
    brief = "--brief" in argv
    comms = load(args[0])
    if not comms:
        print("no sdk-socket trace files in %s" % args[0])
        return 1
    min_bytes = 65536
    hop_of, summary = {}, {}
    if not brief:
        print("per connection, messages of at least %d bytes: p10 / median / p90 in us" % min_bytes)
    for send, recv in pairs(comms):
        hop_of[send["name"]] = recv
        stages = connection_stages(send, recv, min_bytes)
        if not brief:
            count = len(stages["hop: isend -> receiver's test()"])
            print("%s -> %s: %d messages" % (send["name"], recv["name"], count))
        for name, values in stages.items():
            q = quantiles(values)
            if q:
                summary.setdefault(name, []).append(q[1])
            if not brief:
                print("  %-45s %s" % (name, fmt(q)))
    if brief and summary:
        print("medians over %d connections, us:" % len(hop_of))
        for name, values in summary.items():
            print("  %-45s %8.1f" % (name, median(values)))
    if "--ring2-allreduce" in argv:
        chains = ring2_chain(comms, hop_of)
        if not chains:
            print("no receive comm and send comm of one process follow a 2-rank ring "
                  "all-reduce's pattern")
            return 0
        if brief:
            print("2-rank ring all-reduce, medians over %d chains, us:" % len(chains))
            for i, label in ((3, "slice received -> reduced slice's isend"),
                             (4, "loop's last receive -> next loop's isend"),
                             (5, "loop (4 messages)")):
                print("  %-45s %8.1f" % (label, median([c[i][1] for c in chains])))
            return 0
        print("\n2-rank ring all-reduce, per receive comm and the send comm of its rank and "
              "channel: p10 / median / p90 in us")
        for _, r, s, reduced, nextloop, loop in chains:
            print("%s with %s:" % (r["name"], s["name"]))
            print("  %-45s %s" % ("slice received -> reduced slice's isend", fmt(reduced)))
            print("  %-45s %s" % ("loop's last receive -> next loop's isend", fmt(nextloop)))
            print("  %-45s %s" % ("loop (4 messages)", fmt(loop)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
