#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclnet-info tests: run the real binary against the SDK's test plugins.

usage: check_info.py CASE NCCLNET_INFO PLUGIN_DIR

PLUGIN_DIR holds libnccl-net-sdk-testnet*.so and libnccl-net-fixture-*.so.
Each case asserts what would break if the tool resolved, reported or
explained anything differently from NCCL. Exit status 0 = pass.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOL = ""
PLUGINS = ""
CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


class Failure(Exception):
    pass


def lib(name):
    return os.path.join(PLUGINS, "libnccl-net-%s.so" % name)


def run(*args, env=None, libpath=False):
    """Runs the tool with a clean plugin environment plus `env`."""
    full = {k: v for k, v in os.environ.items()
            if k not in ("NCCL_NET_PLUGIN", "NCCL_NET", "LD_LIBRARY_PATH")
            and not k.startswith("NCCLNET_")}
    if libpath:
        full["LD_LIBRARY_PATH"] = PLUGINS
    full.update(env or {})
    proc = subprocess.run([TOOL, *args], env=full, capture_output=True, text=True, timeout=50)
    return proc.returncode, proc.stdout, proc.stderr


def run_json(*args, **kw):
    rc, out, err = run(*args, "--json", **kw)
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as e:
        raise Failure("--json output is not JSON (%s):\n%s\n%s" % (e, out, err))
    expect(doc["exitCode"] == rc, "exitCode field %s != exit status %s" % (doc["exitCode"], rc))
    return rc, doc


def expect(cond, what, output=None):
    if not cond:
        raise Failure(what + ("\n--- output ---\n" + output if output is not None else ""))


def expect_in(needle, haystack, what=""):
    expect(needle in haystack, "expected %r %s" % (needle, what), haystack)


# ---- version choice for a plugin exporting only v7 --------------------------

def only_v7(nccl, newest):
    rc, doc = run_json("--plugin", "fixture-only-v7", "--nccl", nccl, libpath=True)
    expect(rc == 0, "exit %d, want 0" % rc, json.dumps(doc, indent=1))
    expect(doc["request"]["window"] == {"oldest": 6, "newest": newest},
           "window %s, want v%d..v6" % (doc["request"]["window"], newest))
    expect(doc["request"]["nccl"] == nccl, "request.nccl %r" % doc["request"]["nccl"])
    attempts = doc["attempts"]
    expect([a["file"] for a in attempts] == ["fixture-only-v7", "libnccl-net-fixture-only-v7.so"],
           "dlopen order %s" % [a["file"] for a in attempts])
    expect(not attempts[0]["opened"] and attempts[0]["error"], "bare name should fail to open")
    chosen = attempts[1]
    found = [k for k, v in chosen["symbols"].items() if v]
    expect(found == ["ncclNetPlugin_v7"], "symbols found %s" % found)
    expect(chosen["selected"] and chosen["version"] == 7, "attempt %s" % chosen)
    expect(doc["plugin"]["version"] == 7, "plugin.version %s" % doc["plugin"]["version"])
    expect(doc["plugin"]["name"] == "fixture-v7", "plugin.name %s" % doc["plugin"]["name"])

    rc, out, _ = run("--plugin", "fixture-only-v7", "--nccl", nccl, libpath=True)
    expect_in("ncclNetPlugin_v%d..v6  (what NCCL %s accepts)" % (newest, doc["request"]["ncclRelease"]), out)
    expect(doc["request"]["ncclRelease"].startswith(nccl + "."), "ncclRelease %s" % doc["request"]["ncclRelease"])
    expect_in("v7: newest exported version in v%d..v6" % newest, out)
    expect_in("selected (ncclNetPlugin_v7)", out)


@case("only_v7_nccl_2.23")
def _():
    only_v7("2.23", 8)


@case("only_v7_nccl_2.28")
def _():
    only_v7("2.28", 11)


@case("only_v7_nccl_2.30")
def _():
    only_v7("2.30", 12)


@case("only_v7_text")
def _():
    rc, out, _ = run("--plugin", lib("fixture-only-v7"))
    expect(rc == 0, "exit %d" % rc, out)
    for section in ("Request\n", "Candidates", "Plugin\n", "Device 0  fixture-v7-dev0", "Warnings (0)"):
        expect_in(section, out, "(section)")
    # Fields v7 lacks are shown as NCCL's defaults, and marked so.
    expect_in("(not in v7: NCCL's default)", out)
    railLine = [l for l in out.splitlines() if l.strip().startswith("railId")]
    expect(railLine and "-1" in railLine[0] and "not in v7" in railLine[0], "railId line %s" % railLine, out)
    speedLine = [l for l in out.splitlines() if l.strip().startswith("speed")]
    expect(speedLine and "25000 Mb/s" in speedLine[0] and "not in" not in speedLine[0],
           "speed line %s" % speedLine, out)
    expect_in("not in this ABI (v9+)", out, "(makeVDevice absent from v7)")


# ---- libraries NCCL cannot use ---------------------------------------------

@case("missing_library")
def _():
    rc, out, _ = run("--plugin", "nosuch-xyz")
    expect(rc == 1, "exit %d, want 1 (nothing loadable)" % rc, out)
    expect_in('dlopen("nosuch-xyz")', out)
    expect_in('dlopen("libnccl-net-nosuch-xyz.so")', out)
    expect(out.index('dlopen("nosuch-xyz")') < out.index('dlopen("libnccl-net-nosuch-xyz.so")'),
           "name as given must be tried first", out)
    expect(out.count("cannot open shared object file") >= 2, "both dlopen errors shown", out)
    expect_in("Nothing loadable.", out)
    flat = " ".join(out.split())
    expect_in('dlopen("nosuch-xyz") failed:', flat, "(explanation)")
    expect_in('dlopen("libnccl-net-nosuch-xyz.so") failed:', flat, "(explanation)")
    expect_in("LD_LIBRARY_PATH", flat, "(hint)")

    rc, doc = run_json("--plugin", "nosuch-xyz")
    expect(rc == 1 and doc["loaded"] is False and doc["plugin"] is None, "json: %s" % doc)
    expect(len(doc["attempts"]) == 2 and all(a["error"] for a in doc["attempts"]), "json attempts")
    expect("libnccl-net-nosuch-xyz.so" in doc["explanation"], "json explanation")


def rejected(fixture, *needles):
    rc, out, _ = run("--plugin", lib(fixture))
    expect(rc == 1, "exit %d, want 1" % rc, out)
    for n in needles:
        expect_in(n, out)
    expect_in("Nothing loadable.", out)
    return out


@case("no_symbol")
def _():
    out = rejected("fixture-no-symbol", "exports no ncclNetPlugin")
    expect_in("v12 -  v11 -  v10 -  v9 -  v8 -  v7 -  v6 -", out, "(no symbol found)")


@case("null_name")
def _():
    rejected("fixture-null-name", "ncclNetPlugin_v12 has a NULL name")


@case("unpack_v6")
def _():
    rejected("fixture-unpack-v6", "device 0 is UNPACK version 6", "NCCL accepts only version 7")


@case("zero_devices")
def _():
    rejected("fixture-zero-devices", "devices() reported 0 devices")


# ---- properties and warnings ------------------------------------------------

@case("bad_props")
def _():
    rc, doc = run_json("--plugin", lib("fixture-bad-props"))
    expect(rc == 0, "a plugin with bad properties still loads: exit %d" % rc)
    got = {(w["device"], w["field"]): w["message"] for w in doc["warnings"]}
    for dev in (0, 1):
        for field, words in (("speed", "not positive"), ("maxRecvs", "outside 1..8"),
                             ("maxP2pBytes", "outside (0, 1 TiB]"),
                             ("pciPath", "not an existing directory")):
            expect((dev, field) in got and words in got[(dev, field)],
                   "device %d: no %s warning with %r; got %s" % (dev, field, words, got))
        expect("regMrDmaBuf" in got.get((dev, "ptrSupport"), ""),
               "device %d: no DMABUF-without-regMrDmaBuf warning; got %s" % (dev, got))
    expect("also the name of device 0" in got.get((1, "name"), ""), "no duplicate-name warning: %s" % got)
    # Exactly 1 TiB is allowed: the limit is inclusive.
    expect(not any(f == "maxCollBytes" for _, f in got), "maxCollBytes = 1 TiB must not warn: %s" % got)
    expect(not any(f == "latency" for _, f in got), "latency 0 must not warn")

    rc, out, _ = run("--plugin", lib("fixture-bad-props"))
    expect_in("Warnings (%d)" % len(doc["warnings"]), out)
    flat = " ".join(out.split())  # the text report wraps long messages
    for message in got.values():
        expect_in(" ".join(message.split()), flat, "(text report shows every warning)")


@case("testnet_json")
def _():
    rc, doc = run_json("--plugin", lib("sdk-testnet"))
    expect(rc == 0, "exit %d" % rc)
    p = doc["plugin"]
    expect(p["name"] == "sdk-testnet" and p["version"] == 12, "plugin %s v%s" % (p["name"], p["version"]))
    expect(p["exportedVersions"] == [12, 11, 10, 9, 8, 7, 6], "exported %s" % p["exportedVersions"])
    expect(set(p["optional"].values()) == {"provided"}, "optional %s" % p["optional"])
    expect(p["deviceCount"] == 2 and len(p["devices"]) == 2, "device count %s" % p["deviceCount"])
    fields = {"index", "status", "name", "pciPath", "guid", "ptrSupport", "regIsGlobal", "forceFlush",
              "speed", "port", "latency", "maxComms", "maxRecvs", "netDeviceType", "netDeviceVersion",
              "vProps", "maxP2pBytes", "maxCollBytes", "maxMultiRequestSize", "railId", "planeId"}
    for i, d in enumerate(p["devices"]):
        missing = fields - set(d)
        expect(not missing, "device %d lacks %s" % (i, missing))
        expect(d["name"] == "testnet%d" % i and d["guid"] == 0x1000 + i, "device %d: %s" % (i, d))
        expect(d["vProps"] == {"ndevs": 1, "devs": [i]}, "device %d vProps %s" % (i, d["vProps"]))
        expect(d["railId"] == i and d["planeId"] == 0, "device %d rail/plane" % i)
        expect(d["latency"] == 1.5 and d["maxRecvs"] == 4 and d["speed"] == 100000, "device %d" % i)
        expect(d["maxP2pBytes"] == 1 << 40 and d["pciPath"] is None, "device %d sizes/pciPath" % i)
        expect(d["defaulted"] == [], "a v12 plugin reports every field itself")
    expect(doc["warnings"] == [], "testnet is clean; warnings %s" % doc["warnings"])


@case("testnet_min_json")
def _():
    rc, doc = run_json("--plugin", lib("sdk-testnet-min"))
    expect(rc == 0, "exit %d" % rc)
    expect(set(doc["plugin"]["optional"].values()) == {"null"},
           "minimal testnet provides no optional function: %s" % doc["plugin"]["optional"])


@case("testnet_abi8")
def _():
    rc, doc = run_json("--plugin", lib("sdk-testnet"), "--abi", "8")
    expect(rc == 0, "exit %d" % rc)
    expect(doc["request"]["pinnedVersion"] == 8, "pinnedVersion %s" % doc["request"]["pinnedVersion"])
    p = doc["plugin"]
    expect(p["version"] == 8, "chose v%s, want v8" % p["version"])
    expect(p["optional"]["makeVDevice"] == "absent" and p["optional"]["setNetAttr"] == "absent",
           "v8 has no makeVDevice/setNetAttr slot: %s" % p["optional"])
    d = p["devices"][1]
    expect(d["regIsGlobal"] == 1, "v8 carries regIsGlobal from the plugin")
    expect(d["railId"] == -1 and "railId" in d["defaulted"] and "regIsGlobal" not in d["defaulted"],
           "v8 lacks railId (NCCL default -1): %s" % d)
    skipped = {s["version"]: s["reason"] for s in doc["attempts"][0]["skipped"]}
    expect(sorted(skipped) == [6, 7, 9, 10, 11, 12], "skipped %s" % skipped)
    expect("above" in skipped[12] and "below" in skipped[7], "skip reasons %s" % skipped)


@case("testnet_nccl_2.28")
def _():
    rc, doc = run_json("--plugin", lib("sdk-testnet"), "--nccl", "2.28")
    expect(rc == 0 and doc["plugin"]["version"] == 11, "NCCL 2.28 takes v11, got %s" % doc["plugin"]["version"])
    skipped = {s["version"]: s["reason"] for s in doc["attempts"][0]["skipped"]}
    expect("above the accepted window v11..v6" in skipped.get(12, ""), "v12 skip reason %s" % skipped)
    expect("v11 was found first" in skipped.get(10, ""), "v10 skip reason %s" % skipped)


# ---- knobs -------------------------------------------------------------------

@case("testnet_params")
def _():
    env = {"NCCLNET_TESTNET_DEVICES": "3"}
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--params", env=env)
    expect(rc == 0, "exit %d" % rc, out)
    rows = [l.split() for l in out.splitlines() if l.strip().startswith("NCCLNET_TESTNET_DEVICES")]
    expect(rows and rows[0][1:4] == ["3", "2", "env"], "params row %s (want value 3, default 2, env)" % rows, out)
    expect("Device 0" not in out, "--params lists knobs, not devices", out)

    rc, doc = run_json("--plugin", lib("sdk-testnet"), env=env)
    params = {p["name"]: p for p in doc["params"]}
    expect(params.get("NCCLNET_TESTNET_DEVICES", {}).get("value") == "3", "json params %s" % params)
    expect(params["NCCLNET_TESTNET_DEVICES"]["source"] == "env", "json source")
    expect(doc["plugin"]["deviceCount"] == 3, "the knob took effect")

    # A v8 SDK plugin is initialized once per process: its knobs reach only
    # the Loader's check, and must still be listed.
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--abi", "8", "--params")
    expect_in("NCCLNET_TESTNET_DEVICES", out, "(v8 --params)")


@case("fixture_params")
def _():
    rc, out, _ = run("--plugin", lib("fixture-only-v7"), "--params")
    expect(rc == 0, "exit %d" % rc, out)
    expect_in("none were reported", out)


@case("published_params")
def _():
    """sdk-socket publishes its knob table in its file: --params lists it
    although NCCL_NET passes the plugin over and init never runs."""
    socket = os.environ.get("NCCLNET_INFO_SOCKET_PLUGIN", "")
    expect(os.path.exists(socket), "NCCLNET_INFO_SOCKET_PLUGIN=%r names no file" % socket)
    env = {"NCCL_NET": "nosuchnet", "NCCL_SOCKET_FAMILY": "bogus", "NCCL_SOCKET_NTHREADS": "0x2"}
    rc, out, _ = run("--plugin", socket, "--params", env=env)
    expect(rc != 0, "exit %d, want a failure: no table is named nosuchnet" % rc, out)
    expect_in("Parameters published by " + socket, out)
    expect("no plugin was initialized" not in out, "the file's table needs no init", out)
    rows = {l.split()[0]: l.split() for l in out.splitlines() if l.strip().startswith("NCCL")}
    expect(rows.get("NCCL_SOCKET_FAMILY", [])[1:4] == ["bogus", "any", "refused"],
           "FAMILY row %s (want bogus, default any, refused)" % rows.get("NCCL_SOCKET_FAMILY"), out)
    expect(rows.get("NCCL_SOCKET_NTHREADS", [])[1:4] == ["2", "-2", "env"],
           "NTHREADS row %s (the SDK's parser reads 0x2 as 2)" % rows.get("NCCL_SOCKET_NTHREADS"), out)
    expect(len([r for r in rows if r.startswith("NCCL")]) >= 17, "every knob listed: %s" % sorted(rows), out)
    rc, doc = run_json("--plugin", socket, "--params", env=env)
    expect(doc["paramsFrom"] == "library", "paramsFrom %r" % doc["paramsFrom"])
    # A library without a published table still lists what its init announced.
    rc, doc = run_json("--plugin", lib("fixture-only-v7"), "--params")
    expect(doc["paramsFrom"] == "init", "fixture paramsFrom %r" % doc["paramsFrom"])


# ---- NCCL_NET and NCCL_NET_PLUGIN syntax --------------------------------------

@case("net_mismatch")
def _():
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--net", "nosuchnet")
    expect(rc == 1, "exit %d, want 1" % rc, out)
    expect_in("does not match NCCL_NET=nosuchnet", out)
    expect_in("Failed to initialize any NET plugin", out)
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--net", "Socket")
    expect(rc == 1 and "internal Socket transport" in " ".join(out.split()),
           "NCCL_NET=Socket names NCCL's own Socket transport", out)


@case("net_match")
def _():
    rc, doc = run_json("--plugin", lib("sdk-testnet"), "--net", "SDK-TestNet")
    expect(rc == 0 and doc["plugin"]["name"] == "sdk-testnet", "NCCL_NET matches ignoring case")
    expect(doc["request"]["net"] == "SDK-TestNet", "request.net %s" % doc["request"]["net"])


@case("plugin_list")
def _():
    value = ",".join(["nosuch", lib("fixture-no-symbol"), lib("sdk-testnet")])
    rc, doc = run_json("--plugin", value)
    expect(rc == 0, "exit %d" % rc)
    expect(len(doc["request"]["entries"]) == 3, "entries %s" % doc["request"]["entries"])
    files = [a["file"] for a in doc["attempts"]]
    expect(files == ["nosuch", "libnccl-net-nosuch.so", lib("fixture-no-symbol"), lib("sdk-testnet")],
           "attempt order %s" % files)
    expect([a["selected"] for a in doc["attempts"]] == [False, False, False, True], "selection")
    expect(doc["plugin"]["name"] == "sdk-testnet", "chosen %s" % doc["plugin"]["name"])


@case("plugin_none")
def _():
    rc, out, _ = run("--plugin", "NONE")
    expect(rc == 1, "exit %d" % rc, out)
    expect_in("NCCL_NET_PLUGIN=NONE: no external plugin is loaded", out)
    expect("dlopen(" not in out.split("Nothing loadable")[0], "none must not dlopen anything", out)
    # Before 2.28.3 'none' was a name like any other, tried as a library.
    expect_in("NCCL 2.23.4  falls back to IB/Socket: no library found (dlopen NONE, libnccl-net-NONE.so)", out)


@case("environment")
def _():
    env = {"NCCL_NET_PLUGIN": lib("sdk-testnet"), "NCCL_NET": "sdk-testnet"}
    rc, doc = run_json(env=env)
    expect(rc == 0 and doc["request"]["pluginListSource"] == "environment", "env: %s" % doc["request"])
    expect(doc["request"]["net"] == "sdk-testnet", "NCCL_NET read from the environment")
    # --plugin overrides the environment.
    rc, doc = run_json("--plugin", lib("sdk-testnet-min"), env={"NCCL_NET_PLUGIN": "nosuch"})
    expect(rc == 0 and doc["plugin"]["name"] == "sdk-testnet-min", "--plugin must win over the environment")
    # Unset: the one file libnccl-net.so, with no second form.
    rc, doc = run_json()
    expect(doc["request"]["pluginListSource"] == "default", "source %s" % doc["request"]["pluginListSource"])
    expect([a["file"] for a in doc["attempts"]] == ["libnccl-net.so"], "default attempts %s" % doc["attempts"])


@case("usage_errors")
def _():
    for args, words in ((["--bogus"], "unknown argument '--bogus'"),
                        (["--nccl", "1.5"], "--nccl 1.5: not an NCCL release this tool knows"),
                        (["--nccl", "abc"], "--nccl abc: not an NCCL release"),
                        (["--nccl", "2.99"], "2.30.{3,4,7}"),
                        (["--nccl", "2.31"], "--nccl 2.31: not an NCCL release"),
                        (["--nccl", "2.27.4"], "--nccl 2.27.4: not an NCCL release"),
                        (["--nccl", "2.18"], "one of 2.19.{1,3,4}"),
                        (["--abi", "13"], "--abi expects"),
                        (["--abi", "9", "--nccl", "2.23"], "outside what NCCL 2.23 accepts"),
                        (["--plugin"], "--plugin needs a value")):
        rc, out, err = run(*args)
        expect(rc == 2, "%s: exit %d, want 2 (usage)" % (args, rc), out + err)
        expect_in(words, err, "(stderr for %s)" % args)
        expect(out == "", "%s: nothing on stdout" % args, out)
        # The tools' one error style: a single line that points at --help.
        expect(err.count("\n") == 1 and err.startswith("ncclnet-info: ")
               and err.endswith("; see ncclnet-info --help\n"), "%s: one error line" % args, err)
    rc, out, err = run("--help")
    expect(rc == 0 and out.startswith("usage: ncclnet-info") and err == "", "--help", out + err)
    expect_in("--nccl V", out, "(--help lists the options)")
    expect_in("exit status: 0 a plugin loaded", out, "(--help ends with the exit statuses)")


# ---- NCCL releases ----------------------------------------------------------

def verdict_lines(out):
    return [l.strip() for l in out.splitlines() if re.match(r"NCCL 2\.\d+\.\d+  ", l.strip())]


@case("version")
def _():
    rc, out, err = run("--version")
    expect(rc == 0, "exit %d" % rc, out + err)
    expect(re.fullmatch(r"ncclnet-info \d+\.\d+\.\d+ \(nccl-net-sdk, commit [0-9a-f]+(-dirty)?\)\n", out)
           is not None or re.fullmatch(r"ncclnet-info \d+\.\d+\.\d+ \(nccl-net-sdk, commit unknown\)\n", out)
           is not None, "--version line %r" % out)


@case("verdicts")
def _():
    rc, out, _ = run("--plugin", lib("sdk-testnet"))
    expect(rc == 0, "exit %d" % rc, out)
    lines = verdict_lines(out)
    expect(len(lines) == 3, "three verdicts by default: %s" % lines, out)
    for line, release, version in zip(lines, ("2.23.", "2.28.", "2.30."), (8, 11, 12)):
        expect(line.startswith("NCCL " + release) and
               ("loads 'sdk-testnet' through ncclNetPlugin_v%d" % version) in line, "verdict %r" % line, out)
    # Only v12: the older releases fall back, and say why.
    rc, doc = run_json("--plugin", lib("fixture-bad-props"))
    v = {x["nccl"][:4]: x for x in doc["verdicts"]}
    expect(v["2.23"]["outcome"] == "internal" and "no version in the accepted window v8..v6" in v["2.23"]["reason"],
           "2.23 verdict %s" % v["2.23"])
    expect(v["2.28"]["outcome"] == "internal" and "v11..v6" in v["2.28"]["reason"], "2.28 verdict %s" % v["2.28"])
    expect(v["2.30"]["outcome"] == "loads" and v["2.30"]["version"] == 12, "2.30 verdict %s" % v["2.30"])
    # --nccl adds its release when it is not one of the three.
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--nccl", "2.26")
    lines = verdict_lines(out)
    expect(len(lines) == 4 and lines[3].startswith("NCCL 2.26.6  loads 'sdk-testnet' through ncclNetPlugin_v10"),
           "fourth verdict %s" % lines, out)
    # NCCL_NET: an internal transport by name, or nothing at all.
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--net", "Socket")
    expect_in("NCCL 2.30.7  uses its internal Socket", out)
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--net", "nosuchnet")
    expect_in("NCCL 2.28.9  fails (Failed to initialize any NET plugin)", out)


@case("nccl_single_name")
def _():
    value = "nosuch," + "sdk-testnet"
    rc, doc = run_json("--plugin", value, "--nccl", "2.23", libpath=True)
    expect(rc == 1, "NCCL 2.23 takes the whole value as one name: exit %d" % rc)
    files = [a["file"] for a in doc["attempts"]]
    expect(files == [value, "libnccl-net-%s.so" % value], "2.23 dlopen names %s" % files)
    expect(doc["request"]["pluginListRule"] == "one name, commas included", "rule %s" % doc["request"])
    expect(doc["request"]["ncclRelease"] == "2.23.4", "release %s" % doc["request"]["ncclRelease"])
    rc, doc = run_json("--plugin", value, "--nccl", "2.28", libpath=True)
    expect(rc == 0 and doc["plugin"]["name"] == "sdk-testnet", "NCCL 2.28 splits the list: exit %d" % rc)
    rc, out, _ = run("--plugin", value, libpath=True)
    lines = verdict_lines(out)
    expect("takes NCCL_NET_PLUGIN as one name, commas included" in lines[0], "2.23 verdict %s" % lines, out)
    expect("loads 'sdk-testnet'" in lines[1] and "loads 'sdk-testnet'" in lines[2], "2.28/2.30 %s" % lines, out)
    # 2.27 without a patch is its newest patch, 2.27.7.
    rc, doc = run_json("--plugin", value, "--nccl", "2.27", libpath=True)
    expect(doc["request"]["ncclRelease"] == "2.27.7" and rc == 0, "2.27: %s, exit %d" % (doc["request"], rc))


# ---- knobs, the plugin's warnings and result names when init fails ----------

@case("params_init_fails")
def _():
    env = {"NCCLNET_TESTNET_FAIL_INIT": "1"}
    rc, out, _ = run("--plugin", lib("sdk-testnet"), "--params", env=env)
    expect(rc == 1, "exit %d, want 1 (nothing loadable)" % rc, out)
    rows = {l.split()[0]: l.split() for l in out.splitlines() if l.strip().startswith("NCCLNET_TESTNET_")}
    expect(rows.get("NCCLNET_TESTNET_DEVICES", [])[1:4] == ["2", "2", "default"], "DEVICES row %s" % rows, out)
    expect(rows.get("NCCLNET_TESTNET_FAIL_INIT", [])[1:4] == ["1", "0", "env"], "FAIL_INIT row %s" % rows, out)
    expect_in("Plugin log warnings\n  WARN NET/sdk-testnet no device to drive", out)
    expect_in("init failed with ncclSystemError (2)", out)
    expect("error 2" not in out and "error 5" not in out, "results by name, not number", out)
    rc, doc = run_json("--plugin", lib("sdk-testnet"), env=env)
    expect({p["name"] for p in doc["params"]} == {"NCCLNET_TESTNET_DEVICES", "NCCLNET_TESTNET_FAIL_INIT"},
           "json params %s" % doc["params"])
    # Nothing initialized at all (no table in the window): say so.
    rc, out, _ = run("--plugin", lib("fixture-bad-props"), "--nccl", "2.23", "--params")
    expect_in("no plugin was initialized", out)


# ---- --list -----------------------------------------------------------------

@case("list")
def _():
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(lib("fixture-only-v7"), tmp)
        with open(os.path.join(tmp, "libnccl-net-broken.so"), "w") as f:
            f.write("not an ELF file\n")
        with open(os.path.join(tmp, "libnccl-net-ignored.so.1"), "w") as f:
            f.write("NCCL never dlopens this name\n")
        env = {"LD_LIBRARY_PATH": PLUGINS + ":" + tmp}
        rc, out, _ = run("--list", env=env)
        expect(rc == 0, "exit %d" % rc, out)
        expect_in("LD_LIBRARY_PATH: " + PLUGINS + "\n", out)
        expect_in("LD_LIBRARY_PATH: " + tmp + "\n", out)
        expect_in("ld.so.cache: /etc/ld.so.cache", out)
        expect_in("libnccl-net-sdk-testnet.so  (NCCL_NET_PLUGIN=sdk-testnet)", out)
        expect_in("v12..v6 'sdk-testnet'", out)
        expect_in("2.23.4 v8, 2.28.9 v11, 2.30.7 v12", out)
        expect("libnccl-net-ignored" not in out, "only names NCCL can produce are listed", out)

        rc, doc = run_json("--list", env=env)
        by_path = {p["path"]: p for p in doc["plugins"]}
        testnet = by_path[os.path.join(PLUGINS, "libnccl-net-sdk-testnet.so")]
        expect(testnet["loads"] and [t["version"] for t in testnet["tables"]] == [12, 11, 10, 9, 8, 7, 6],
               "testnet %s" % testnet)
        expect(testnet["origin"] == "LD_LIBRARY_PATH" and not testnet["shadowed"], "testnet origin %s" % testnet)
        nosym = by_path[os.path.join(PLUGINS, "libnccl-net-fixture-no-symbol.so")]
        expect(not nosym["loads"] and nosym["error"] is None and nosym["tables"] == [], "no-symbol %s" % nosym)
        v7 = by_path[os.path.join(PLUGINS, "libnccl-net-fixture-only-v7.so")]
        expect(v7["tables"] == [{"version": 7, "name": "fixture-v7"}], "v7 tables %s" % v7["tables"])
        expect(set(v7["releases"].values()) == {7}, "every release takes v7: %s" % v7["releases"])
        badprops = by_path[os.path.join(PLUGINS, "libnccl-net-fixture-bad-props.so")]
        expect(badprops["releases"]["2.23.4"] is None and badprops["releases"]["2.30.7"] == 12,
               "bad-props releases %s" % badprops["releases"])
        copy = by_path[os.path.join(tmp, "libnccl-net-fixture-only-v7.so")]
        expect(copy["shadowed"], "the second libnccl-net-fixture-only-v7.so is shadowed by the first")
        broken = by_path[os.path.join(tmp, "libnccl-net-broken.so")]
        expect(not broken["loads"] and broken["error"], "broken file %s" % broken)
        expect(doc["exitCode"] == 0, "exitCode %s" % doc["exitCode"])


# ---- GIN, RMA and CollNet tables of the same library ------------------------

@case("other_tables")
def _():
    # sdk-testnet-tables exports RMA v13, GIN v11, CollNet v8 and an RMA v15
    # newer than the SDK knows. Read through ncclnet-check, which passes on
    # the tables NCCL looks up (v15 is not one of them).
    checker, tables = os.environ["NCCLNET_INFO_CHECK_PLUGIN"], os.environ["NCCLNET_INFO_TABLES_PLUGIN"]
    env = {"NCCLNET_CHECK_PLUGIN": tables}
    rc, out, _ = run("--plugin", checker, "--nccl", "2.30.7", env=env)
    expect(rc == 0, "exit %d" % rc, out)
    expect_in("Other tables in this library (%s)" % checker, out)
    expect(re.search(r"exported +ncclCollNetPlugin_v8, ncclGinPlugin_v11, ncclRmaPlugin_v13\n", out)
           is not None, "exported through the checker", out)
    expect(re.search(r"NCCL 2\.30\.7 RMA +ncclRmaPlugin_v13\n", out) is not None, "RMA v13 taken", out)
    expect(re.search(r"NCCL 2\.30\.7 GIN +none\n", out) is not None, "2.30.7 looks for GIN v14/v13 only", out)
    expect(re.search(r"NCCL 2\.30\.7 CollNet +ncclCollNetPlugin_v8\n", out) is not None, "CollNet v8", out)
    expect(re.search(r"NCCL 2\.28\.9 (CollNet|GIN|RMA) ", out) is None, "--nccl: only that release", out)
    # Without --nccl: every release line with GIN or RMA tables.
    rc, out, _ = run("--plugin", checker, env=env)
    expect(re.search(r"NCCL 2\.28\.9 GIN +ncclGinPlugin_v11\n", out) is not None, "2.28.9 takes GIN v11", out)
    expect(re.search(r"NCCL 2\.28\.9 RMA +none\n +no RMA plugin table before NCCL 2\.30\.3", out)
           is not None, "2.28.9 has no RMA", out)
    expect(re.search(r"NCCL 2\.29\.7 GIN +ncclGinPlugin_v11\n", out) is not None, "2.29.7 GIN v11", out)
    expect(re.search(r"NCCL 2\.30\.7 RMA +ncclRmaPlugin_v13\n", out) is not None, "2.30.7 RMA v13", out)
    rc, doc = run_json("--plugin", checker, env=env)
    t = {r["nccl"]: {x["family"]: x["symbol"] for x in r["tables"]} for r in doc["otherTables"]["releases"]}
    expect(list(t) == ["2.28.9", "2.29.7", "2.30.7"], "releases %s" % list(t))
    expect(t["2.28.9"] == {"CollNet": "ncclCollNetPlugin_v8", "GIN": "ncclGinPlugin_v11", "RMA": None}
           and t["2.30.7"] == {"CollNet": "ncclCollNetPlugin_v8", "GIN": None, "RMA": "ncclRmaPlugin_v13"},
           "otherTables %s" % t)
    expect(doc["otherTables"]["library"] == checker and "otherTables" not in doc["plugin"],
           "otherTables %s" % doc["otherTables"])

    # The library itself, its init failing: NCCL selects none of its net
    # tables. 2.28 takes GIN and every release CollNet only with the net
    # table; 2.29.7+ still look for GIN and RMA in the net library it keeps.
    env = {"NCCLNET_TESTNET_FAIL_INIT": "1"}
    rc, out, _ = run("--plugin", tables, env=env)
    expect(rc == 1, "exit %d, want 1 (nothing loadable)" % rc, out)
    expect_in("Other tables in this library (%s)" % tables, out)
    expect(re.search(r"ncclRmaPlugin_v16 \(newer than this\s+tool knows\), ncclRmaPlugin_v13\n", out)
           is not None, "v15 listed as unknown", out)
    expect(re.search(r"NCCL 2\.28\.9 GIN +none\n +not taken, because NCCL would not select this "
                     r"library's net table \(init failed", out) is not None, "2.28.9 takes no GIN", out)
    expect(re.search(r"NCCL 2\.28\.9 CollNet +none\n", out) is not None, "no CollNet", out)
    expect(re.search(r"NCCL 2\.29\.7 GIN +ncclGinPlugin_v11\n", out) is not None, "2.29.7 GIN v11", out)
    expect(re.search(r"NCCL 2\.30\.7 RMA +ncclRmaPlugin_v13\n +NCCL would not select", out) is not None,
           "2.30.7 RMA v13 from the kept library", out)
    rc, doc = run_json("--plugin", tables, env=env)
    o = doc["otherTables"]
    expect(doc["plugin"] is None and o["library"] == tables, "otherTables %s" % o)
    expect({"family": "RMA", "version": 16, "symbol": "ncclRmaPlugin_v16", "layout": "newer"} in o["exported"],
           "exported %s" % o["exported"])
    t = {r["nccl"]: {x["family"]: x["symbol"] for x in r["tables"]} for r in o["releases"]}
    expect(t["2.28.9"] == {"CollNet": None, "GIN": None, "RMA": None}
           and t["2.30.7"] == {"CollNet": None, "GIN": None, "RMA": "ncclRmaPlugin_v13"}, "releases %s" % t)
    # A plugin without such tables: none of the three, for each release.
    rc, out, _ = run("--plugin", lib("sdk-testnet"))
    expect(len(re.findall(r"(CollNet|GIN|RMA) +none\n", out)) == 9, "nine nones", out)
    expect_in("exported              none", out)


def main():
    global TOOL, PLUGINS
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        sys.stderr.write("usage: check_info.py CASE NCCLNET_INFO PLUGIN_DIR\ncases: %s\n"
                         % " ".join(sorted(CASES)))
        return 2
    TOOL, PLUGINS = sys.argv[2], os.path.abspath(sys.argv[3])
    try:
        CASES[sys.argv[1]]()
    except Failure as e:
        print("FAIL %s: %s" % (sys.argv[1], e))
        return 1
    print("PASS %s" % sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
