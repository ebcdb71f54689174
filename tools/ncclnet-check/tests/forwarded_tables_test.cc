// SPDX-License-Identifier: Apache-2.0
// The checker answers a lookup of a GIN, RMA or CollNet table exactly as
// the wrapped plugin's library would (forwarded_tables.cc): found, at the
// wrapped plugin's own table, where that library has it, and not found
// where it has none, so that NCCL picks the same version with and without
// the checker (src/plugin/rma.cc ncclRmaPluginLoad takes the first version
// found).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace {

// Every table name NCCL 2.28 ... 2.30.7 looks up besides ncclNetPlugin_vN.
const char* const kTables[] = {
    "ncclGinPlugin_v11",     "ncclGinPlugin_v12",     "ncclGinPlugin_v13",
    "ncclGinPlugin_v14",     "ncclRmaPlugin_v13",     "ncclRmaPlugin_v14",
    "ncclCollNetPlugin_v6",  "ncclCollNetPlugin_v7",  "ncclCollNetPlugin_v8",
    "ncclCollNetPlugin_v9",  "ncclCollNetPlugin_v10", "ncclCollNetPlugin_v11",
    "ncclCollNetPlugin_v12",
};

struct Library {
  explicit Library(const char* path) : handle(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle != nullptr) dlclose(handle);
  }
  void* handle;
};

TEST(ForwardedTables, SameTablesAsTheWrappedPlugin) {
  setenv("NCCLNET_CHECK_PLUGIN", NCCLNET_TABLES_PLUGIN, 1);
  Library inner(NCCLNET_TABLES_PLUGIN);
  ASSERT_NE(inner.handle, nullptr) << dlerror();
  Library checker(NCCLNET_CHECK_LIBRARY);
  ASSERT_NE(checker.handle, nullptr) << dlerror();
  int found = 0;
  for (const char* table : kTables) {
    void* own = dlsym(inner.handle, table);
    EXPECT_EQ(dlsym(checker.handle, table), own) << table;
    found += own != nullptr;
  }
  EXPECT_EQ(found, 3);  // extra_tables.c: RMA v13, GIN v11, CollNet v8
}

TEST(ForwardedTables, NoneWithoutAWrappedPlugin) {
  unsetenv("NCCLNET_CHECK_PLUGIN");
  Library checker(NCCLNET_CHECK_LIBRARY);
  ASSERT_NE(checker.handle, nullptr) << dlerror();
  for (const char* table : kTables) EXPECT_EQ(dlsym(checker.handle, table), nullptr) << table;
}

}  // namespace
