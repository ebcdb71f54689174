#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# scripts/socket_trace.py on trace files with known stamps: a connection's
# stages, and the ring turnaround of a 2-rank all-reduce.
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]
US = 1000  # the files hold nanoseconds
MIB = 1 << 20


def write(directory, name, rows):
    with open(os.path.join(directory, name), "w") as f:
        f.write("# postedNs matchedNs lastByteNs reportedNs bytes\n")
        for row in rows:
            f.write(" ".join(str(int(x)) for x in row) + "\n")


def connection(posts):
    """Both ends of one connection for isends at `posts` (ns): clear-to-send
    waited 1 us, the header 7 us, sending 50 us, receiving 60 us, and the
    receiver's test() 3 us after the last byte."""
    send, recv = [], []
    for p in posts:
        matched = p + 1 * US
        send.append((p, matched, matched + 50 * US, matched + 55 * US, MIB))
        header = matched + 7 * US
        recv.append((p - 100 * US, header, header + 60 * US, header + 63 * US, MIB))
    return send, recv


# Both ranks run the same ring: each loop sends its own 2 slices 20 us apart,
# then each reduced slice 150 us after the peer's slice was received (a hop
# is 71 us, isend to the receiver's test()), and starts the next loop 80 us
# after the peer's last reduced slice was received.
loops, hop = 20, 71 * US
posts, start = [], 0
for L in range(loops):
    own = [start, start + 20 * US]
    reduced = [t + hop + 150 * US for t in own]
    posts += own + reduced
    start = reduced[1] + hop + 80 * US
a_send, b_recv = connection(posts)
b_send, a_recv = connection(posts)

with tempfile.TemporaryDirectory() as d:
    write(d, "sdk-socket-1-send-100-200.txt", a_send)
    write(d, "sdk-socket-2-recv-200-100.txt", b_recv)
    write(d, "sdk-socket-2-send-300-400.txt", b_send)
    write(d, "sdk-socket-1-recv-400-300.txt", a_recv)
    out = subprocess.run([sys.executable, script, d, "--ring2-allreduce"], check=True,
                         capture_output=True, text=True).stdout
    brief = subprocess.run([sys.executable, script, d, "--ring2-allreduce", "--brief"],
                           check=True, capture_output=True, text=True).stdout
print(out)
print(brief)


def medians(label):
    """The median column of every line that starts with `label`."""
    return [float(line.split()[-2]) for line in out.splitlines()
            if line.strip().startswith(label)]


failures = []
for label, want in (("header: sender matched -> receiver read it", 7.0),
                    ("send: matched -> last byte sent", 50.0),
                    ("recv: header -> last byte received", 60.0),
                    ("recv: last byte -> test()", 3.0),
                    ("hop: isend -> receiver's test()", 71.0),
                    ("send: waiting for clear-to-send", 1.0)):
    got = medians(label)
    if len(got) != 2 or any(abs(g - want) > 0.05 for g in got):
        failures.append("%s: want %.1f on both connections, got %s" % (label, want, got))
chain = "sdk-socket-2-recv-200-100.txt with sdk-socket-2-send-300-400.txt:"
if chain not in out:
    failures.append("rank B's chain (its receive comm with its send comm) not found")
else:
    after = out.split(chain, 1)[1]
    for label, want in (("slice received -> reduced slice's isend", 150.0),
                        ("loop's last receive -> next loop's isend", 80.0)):
        line = next((l for l in after.splitlines() if l.strip().startswith(label)), "")
        if not line or abs(float(line.split()[-2]) - want) > 0.05:
            failures.append("%s: want median %.1f, got '%s'" % (label, want, line.strip()))
for label, want in (("hop: isend -> receiver's test()", 71.0),
                    ("slice received -> reduced slice's isend", 150.0)):
    line = next((l for l in brief.splitlines() if l.strip().startswith(label)), "")
    if not line or abs(float(line.split()[-1]) - want) > 0.05:
        failures.append("--brief %s: want %.1f, got '%s'" % (label, want, line.strip()))
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
