#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Points a stage made by scripts/gpu/stage.sh at where it lies now. Its
# ctest files name the build tree, the source tree and cmake by their paths
# on the machine that built it; this rewrites them to the stage's own path,
# this source tree and this machine's cmake, and records the new paths, so
# that the stage can move again. Binaries need nothing: they find the
# build's libraries relative to themselves ($ORIGIN), and the tests their
# files where the build put them or at the same place relative to their
# executable.
#
#   scripts/gpu/relocate.sh [STAGE_DIR]       (default .gpu-stage)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(realpath "${1:-$root/.gpu-stage}")
pairs=()  # old, new, ...
move() {  # RECORD NEW_PATH
  local was
  was=$(cat "$stage/$1" 2>/dev/null || true)
  if [ -n "$was" ] && [ -n "$2" ] && [ "$was" != "$2" ]; then pairs+=("$was" "$2"); fi
}
move .built-at "$stage"
move .source-at "$root"
move .cmake-at "$(command -v cmake || true)"
[ ${#pairs[@]} -gt 0 ] || exit 0
patterns=()
for ((i = 0; i < ${#pairs[@]}; i += 2)); do patterns+=(-e "${pairs[i]}"); done
# One pass, longest path first: the build tree may lie inside the source
# tree, and a path once rewritten must not be rewritten again.
grep -rlIF "${patterns[@]}" "$stage" | while read -r file; do
  NCCLNET_PAIRS=$(printf '%s\n' "${pairs[@]}") perl -pi -e '
    BEGIN { %to = split /\n/, $ENV{NCCLNET_PAIRS};
            $from = join "|", map { quotemeta } sort { length $b <=> length $a } keys %to }
    s/($from)/$to{$1}/g' "$file"
done
echo "$stage" >"$stage/.built-at"
echo "$root" >"$stage/.source-at"
command -v cmake >"$stage/.cmake-at" || true
echo "relocate: $stage now names $root and $(cat "$stage/.cmake-at")"
