/* SPDX-License-Identifier: Apache-2.0
 * The layout checks, compiled as C11. Failing here fails the build. The
 * function reports the sizes the C compiler saw, so the C++ test can check
 * that both languages agree. */
#include "abi_layout_checks.h"
#include "abi_layout_checks_tables.h"

size_t ncclnetCLayoutSize(int version) {
  switch (version) {
    case 6: return sizeof(ncclNetProperties_v6_t);
    case 7: return sizeof(ncclNetProperties_v7_t);
    case 8: return sizeof(ncclNetProperties_v8_t);
    case 9: return sizeof(ncclNetProperties_v9_t);
    case 10: return sizeof(ncclNetProperties_v10_t);
    case 11: return sizeof(ncclNetProperties_v11_t);
    case 12: return sizeof(ncclNetProperties_v12_t);
    default: return 0;
  }
}

size_t ncclnetCRailIdOffset(void) { return offsetof(ncclNetProperties_v12_t, railId); }
