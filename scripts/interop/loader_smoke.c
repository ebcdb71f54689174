// SPDX-License-Identifier: Apache-2.0
// The loader path of aws-ofi-nccl's functional tests as our build patches
// them (patch_functional_tests.sh), on the CPU: the plugin file named by
// NCCLNET_INTEROP_PLUGIN (else libnccl-net.so), dlopen with RTLD_NOW |
// RTLD_LOCAL, the ncclNetPlugin_v11 table, then init, devices,
// getProperties of each device and finalize. Prints "devices N" and one
// line per device; exits 1 with the reason when a step fails.
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ncclnet/abi/net.h"

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                   const char* fmt, ...) {
  (void)flags;
  (void)file;
  (void)line;
  if (level > NCCL_LOG_WARN) return;
  va_list args;
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fputc('\n', stderr);
}

int main(void) {
  const char* name = getenv("NCCLNET_INTEROP_PLUGIN");
  if (name == NULL || name[0] == '\0') name = "libnccl-net.so";
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("dlopen(%s) failed: %s\n", name, dlerror());
    return 1;
  }
  ncclNet_v11_t* net = (ncclNet_v11_t*)dlsym(lib, "ncclNetPlugin_v11");
  if (net == NULL) {
    printf("%s exports no ncclNetPlugin_v11\n", name);
    return 1;
  }
  void* ctx = NULL;
  ncclNetCommConfig_v11_t config = {NCCL_NET_TRAFFIC_CLASS_UNDEF};
  int ndev = -1;
  if (net->init(&ctx, 1, &config, logger, NULL) != ncclSuccess) {
    printf("%s: init failed\n", net->name);
    return 1;
  }
  if (net->devices(&ndev) != ncclSuccess) {
    printf("%s: devices() failed\n", net->name);
    return 1;
  }
  printf("plugin %s devices %d\n", net->name, ndev);
  for (int d = 0; d < ndev; d++) {
    ncclNetProperties_v11_t props;
    if (net->getProperties(d, &props) != ncclSuccess) {
      printf("getProperties(%d) failed\n", d);
      return 1;
    }
    printf("device %d %s ptrSupport %d maxRecvs %d\n", d, props.name, props.ptrSupport,
           props.maxRecvs);
  }
  if (net->finalize(ctx) != ncclSuccess) {
    printf("%s: finalize failed\n", net->name);
    return 1;
  }
  return 0;
}
