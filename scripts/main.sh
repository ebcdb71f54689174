#!/usr/bin/env bash
# The main job: install what is missing, build, then certify every bundled
# plugin (conformance/profiles/bundled.txt) with ncclnet-conformance on this
# machine (loopback; sdk-ib through the software verbs device), all exported
# ABI versions. Reports (JSON and JUnit) land in $BUILD_DIR/reports, one
# pair per profile; the summary at the end is the suite's own line for each.
# Exit status: 0 only if every plugin passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# shellcheck source=scripts/bundled.sh
. "$root/scripts/bundled.sh"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$@"

conformance=$build/conformance/ncclnet-conformance
reports=$build/reports
mkdir -p "$reports"
written=()
unbuilt=()
status=0

certify() {  # NAME PLUGIN_FILE PROFILE_FILE [VARIABLE=FILE ...]
  local plugin=$2 profile=$3 name
  name=$(basename "$profile" .yaml)
  shift 3
  if [ ! -e "$plugin" ]; then
    unbuilt+=("$name: not built (see the configure summary)")
    return
  fi
  echo
  echo "=== $name"
  env "$@" "$conformance" --plugin "$plugin" --profile "$profile" \
    --json "$reports/$name.json" --junit "$reports/$name.xml" || status=1
  written+=("$reports/$name.json")
}

if [ ! -x "$conformance" ]; then
  echo "ncclnet-conformance was not built (it needs yaml-cpp and GoogleTest)" >&2
  exit 1
fi
mapfile -t plugins < <(bundled_plugins "$build")
for line in "${plugins[@]}"; do
  read -ra entry <<<"$line"
  certify "${entry[@]}"
done

echo
echo "=== summary"
if [ ${#written[@]} -gt 0 ]; then "$conformance" --summary "${written[@]}" || status=1; fi
if [ ${#unbuilt[@]} -gt 0 ]; then printf '%s\n' "${unbuilt[@]}"; fi
exit $status
