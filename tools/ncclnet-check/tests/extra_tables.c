/* SPDX-License-Identifier: Apache-2.0
 * Tables besides the net tables, for the forwarding test: an RMA v13, a GIN
 * v11 and a CollNet v8 table whose members are never called, only compared
 * by address. Every other GIN, RMA and CollNet version NCCL looks up is
 * absent. An RMA v16 table, newer than the SDK knows, is there for
 * ncclnet-info to list as such: nothing reads it. */
#include "ncclnet/abi/collnet.h"
#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"

__attribute__((visibility("default"))) ncclRma_v13_t ncclRmaPlugin_v13 = {.name = "tables-rma"};
__attribute__((visibility("default"))) ncclGin_v11_t ncclGinPlugin_v11 = {.name = "tables-gin"};
__attribute__((visibility("default")))
ncclCollNet_v8_t ncclCollNetPlugin_v8 = {.name = "tables-collnet"};

/* Only the leading name: every table starts with it. */
struct unknownTable {
  const char* name;
};
__attribute__((visibility("default"))) struct unknownTable ncclRmaPlugin_v16 = {
    .name = "tables-rma-v16"};
