#!/usr/bin/env bash
# The sanitizer job (docs/fuzzing.md, "Sanitizers"): ASan + UBSan over the
# unit tests and one ncclnet-conformance run per bundled plugin, then TSan
# over the plugins' threaded tests. Each sanitizer builds only what it runs,
# in its own build dir (ASAN_BUILD_DIR, TSAN_BUILD_DIR), without CUDA
# kernels. Every sanitizer report is written to a file under
# <build dir>/sanitizer-reports, so that one in a forked rank or a child a
# test expected to die is seen too. Exit status: 0 only when every test
# passed and no sanitizer reported anything.
#
# Usage: scripts/sanitize.sh [asan] [tsan]   (both when none is named)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(asan tsan)
status=0

# The tests each sanitizer runs carry its label, asan or tsan (ctest -L),
# and the target ncclnet_<label>_tests builds them
# (cmake/NcclnetTestLabels.cmake). The bundled plugins, built for their
# threaded tests and run once each under ASan, are bundled.txt's.
# shellcheck source=scripts/bundled.sh
. "$root/scripts/bundled.sh"

step() { printf '\n=== sanitize: %s (%s)\n' "$1" "$(date +%T)"; }

build() {  # BUILD_DIR CMAKE_OPTION LABEL
  local dir=$1 option=$2 label=$3 line entry file files=() bundled=()
  cmake -S "$root" -B "$dir" -G Ninja -DNCCLNET_WITH_CUDA_KERNELS=OFF "$option" >/dev/null
  # The bundled plugins and the files their runs name (softverbs), by path:
  # Ninja builds a file of the build tree by its name.
  mapfile -t bundled < <(bundled_plugins "$dir")
  for line in "${bundled[@]}"; do
    read -ra entry <<<"$line"
    for file in "${entry[1]}" "${entry[@]:3}"; do files+=("${file#*=}"); done
  done
  cmake --build "$dir" -j "$(nproc)" --target "ncclnet_${label}_tests" "${files[@]#"$dir"/}" "${@:4}"
}

run_tests() {  # BUILD_DIR LABEL
  ctest --test-dir "$1" -L "$2" --no-tests=error --output-on-failure -j "$(nproc)" --timeout 900
}

# Reports go to files; a test that passes with a report still fails the job.
collect() {  # REPORT_DIR NAME
  local reports
  reports=$(find "$1" -type f 2>/dev/null | sort)
  if [ -n "$reports" ]; then
    echo "sanitize: $2 reported (files under $1):" >&2
    for f in $reports; do
      echo "--- $f" >&2
      head -60 "$f" >&2
    done
    status=1
  else
    echo "sanitize: $2: no reports"
  fi
}

asan() {
  local dir=${ASAN_BUILD_DIR:-$root/build-asan}
  local reports=$dir/sanitizer-reports
  step "ASan + UBSan build"
  build "$dir" -DNCCLNET_SANITIZE_ADDRESS=ON asan ncclnet-conformance
  rm -rf "$reports" && mkdir -p "$reports"
  export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:detect_stack_use_after_return=1"
  export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0"
  step "ASan + UBSan unit tests"
  run_tests "$dir" asan || status=1
  step "ASan + UBSan conformance, one run per plugin (the ABI version NCCL picks)"
  local conformance=$dir/conformance/ncclnet-conformance line entry vars bundled=()
  local one=(--abi v12 --no-progress)
  mapfile -t bundled < <(bundled_plugins "$dir")
  for line in "${bundled[@]}"; do
    read -ra entry <<<"$line"
    vars=("${entry[@]:3}")
    # libfabric 1.17 keeps about 62 bytes in 3 allocations in globals it never
    # frees; once the plugin, and with it libfabric, is unloaded, LeakSanitizer
    # counts them as leaks without frames (docs/fuzzing.md, "Sanitizers").
    # Loaded from the start, libfabric stays, and so do they; the plugin is
    # still unloaded and reloaded, so a leak of ours would be reported.
    if [ "${entry[0]}" = sdk-ofi ]; then
      vars+=("LD_PRELOAD=$(c++ -print-file-name=libasan.so):$(ldconfig -p |
        awk '/libfabric\.so\.1 /{print $NF; exit}')")
    fi
    env "${vars[@]}" "$conformance" --profile "${entry[2]}" "${one[@]}" --plugin "${entry[1]}" ||
      status=1
  done
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
  collect "$reports" "ASan + UBSan"
}

tsan() {
  local dir=${TSAN_BUILD_DIR:-$root/build-tsan}
  local reports=$dir/sanitizer-reports
  step "TSan build"
  build "$dir" -DNCCLNET_SANITIZE_THREAD=ON tsan
  rm -rf "$reports" && mkdir -p "$reports"
  export TSAN_OPTIONS="log_path=$reports/tsan:second_deadlock_stack=1:suppressions=$root/scripts/sanitizers/tsan.supp"
  step "TSan threaded tests"
  run_tests "$dir" tsan || status=1
  unset TSAN_OPTIONS
  collect "$reports" "TSan"
}

start=$SECONDS
for part in "${parts[@]}"; do
  case $part in
    asan) asan ;;
    tsan) tsan ;;
    *) echo "usage: $0 [asan] [tsan]" >&2; exit 2 ;;
  esac
done
step "done in $((SECONDS - start)) s, status $status"
exit $status
