#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The command-line style every tool shares (ncclnet_cli.hpp), checked on the
# real binary: --help prints the usage on stdout and exits 0; an unknown
# option exits 2 with nothing on stdout and one line on stderr,
#   NAME: unknown argument '--no-such-option'; see NAME --help
# usage: check_cli.sh BINARY NAME
set -u
binary=$1 name=$2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAILED: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }

timeout 30 "$binary" --help >"$out" 2>"$err"
rc=$?
[ $rc -eq 0 ] || fail "--help: exit $rc, expected 0"
head -n1 "$out" | grep -q "^usage: $name" || fail "--help: the first line is not 'usage: $name ...'"
grep -q -- "--help" "$out" || fail "--help: the options are not listed"
[ -s "$err" ] && fail "--help: something on stderr"

timeout 30 "$binary" --no-such-option >"$out" 2>"$err"
rc=$?
[ $rc -eq 2 ] || fail "unknown option: exit $rc, expected 2"
[ -s "$out" ] && fail "unknown option: something on stdout"
want="$name: unknown argument '--no-such-option'; see $name --help"
[ "$(cat "$err")" = "$want" ] || fail "unknown option: stderr is not the one line '$want'"
echo "ok"
