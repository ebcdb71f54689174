# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the scripts that certify every bundled plugin: the plugins of
# conformance/profiles/bundled.txt with their paths resolved.
#
#   bundled_plugins BUILD_DIR
# prints one line a plugin, built or not:
#   NAME PLUGIN_FILE PROFILE_FILE [VARIABLE=FILE ...]
bundled_plugins() {
  local build=$1 profiles name library profile files var line
  profiles=$(cd "$(dirname "${BASH_SOURCE[0]}")/../conformance/profiles" && pwd)
  while read -r name library profile files; do
    case $name in '' | '#'*) continue ;; esac
    line="$name $build/$library $profiles/$profile"
    for var in $files; do line+=" ${var%%=*}=$build/${var#*=}"; done
    echo "$line"
  done <"$profiles/bundled.txt"
}
