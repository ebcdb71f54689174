#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Our two changes to aws-ofi-nccl's functional tests (tests/functional), made
# at build time on an extracted release tree; none of its source is kept here.
#  1. Both ranks may share one GPU: every cudaSetDevice(rank) becomes
#     cudaSetDevice(rank modulo the number of visible GPUs), so `mpirun -np 2`
#     runs on a 1-GPU machine.
#  2. The plugin under test is named by NCCLNET_INTEROP_PLUGIN (a path or a
#     file name for dlopen); unset, the tests load libnccl-net.so as before.
# Each edit must match exactly once per file, so that a new release whose
# tests moved makes this script fail instead of building unpatched tests.
#
#   scripts/interop/patch_functional_tests.sh AWS_OFI_NCCL_SOURCE_TREE
set -euo pipefail
src=${1:?usage: patch_functional_tests.sh AWS_OFI_NCCL_SOURCE_TREE}
dir=$src/tests/functional
marker="ncclnet interop patch"
if grep -q "$marker" "$dir/functional_test.h"; then
  echo "patch_functional_tests: $dir already patched"
  exit 0
fi

python3 - "$dir" "$marker" <<'PY'
import pathlib, re, sys
d, marker = pathlib.Path(sys.argv[1]), sys.argv[2]

def edit(name, old, new, count=None):
    p = d / name
    text = p.read_text()
    n = text.count(old)
    if n == 0 or (count is not None and n != count):
        sys.exit(f"patch_functional_tests: {name}: expected {count or 'some'} of {old!r}, found {n}")
    p.write_text(text.replace(old, new))

# The helpers live in the shared header, after its CUDA include.
edit("functional_test.h", "#include <cuda_runtime.h>\n", f"""#include <cuda_runtime.h>

/* {marker}: ranks share GPUs modulo the visible count; the plugin file is
 * taken from NCCLNET_INTEROP_PLUGIN when set. */
static inline cudaError_t interop_set_device(int dev)
{{
	int count = 0;
	if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0)
		dev %= count;
	return cudaSetDevice(dev);
}}
static inline const char *interop_plugin_name(void)
{{
	const char *name = getenv("NCCLNET_INTEROP_PLUGIN");
	return (name != NULL && name[0] != '\\0') ? name : "libnccl-net.so";
}}
""", count=1)

for p in sorted(d.glob("*.cpp")):
    text = p.read_text()
    new = re.sub(r"\bcudaSetDevice\(", "interop_set_device(", text)
    new = new.replace('dlopen("libnccl-net.so"', "dlopen(interop_plugin_name()")
    if new != text:
        p.write_text(new)
        print(f"patch_functional_tests: {p.name}")

text = (d / "functional_test.cpp").read_text()
if "dlopen(interop_plugin_name()" not in text:
    sys.exit("patch_functional_tests: functional_test.cpp: the plugin dlopen was not found")
PY
