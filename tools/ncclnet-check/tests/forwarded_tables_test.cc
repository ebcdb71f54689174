// SPDX-License-Identifier: Apache-2.0
// The checker answers a lookup of a GIN, RMA or CollNet table exactly as
// the wrapped plugin's library would (forwarded_tables.cc): found where that
// library has it, and not found where it has none, so that NCCL picks the
// same version with and without the checker (src/plugin/rma.cc
// ncclRmaPluginLoad takes the first version found). Found means the wrapped
// plugin's own table, or for the versions the checker judges
// (one_sided.hpp: ncclRmaPlugin_v14 and _v13, ncclGinPlugin_v13 and _v11)
// the checker's own table of the same name.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
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

bool judged(const char* table) {
  for (const char* name :
       {"ncclRmaPlugin_v14", "ncclRmaPlugin_v13", "ncclGinPlugin_v13", "ncclGinPlugin_v11"}) {
    if (std::strcmp(table, name) == 0) return true;
  }
  return false;
}

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
    void* seen = dlsym(checker.handle, table);
    if (judged(table) && own != nullptr) {
      ASSERT_NE(seen, nullptr) << table;
      EXPECT_NE(seen, own) << table;
      EXPECT_STREQ(*static_cast<const char* const*>(seen), *static_cast<const char* const*>(own))
          << table;
    } else {
      EXPECT_EQ(seen, own) << table;
    }
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
