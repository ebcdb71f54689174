// SPDX-License-Identifier: Apache-2.0
// ncclnet-sampler: function names for addresses, read from a library's own
// symbol table. dladdr sees only exported symbols, and a plugin or NCCL
// hides almost all of its functions; `strip --strip-debug` (what
// scripts/gpu/stage.sh does) keeps .symtab, so the names are still there
// on a machine with no addr2line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ncclnet::sampler {

class ElfSymbols {
 public:
  // Reads the FUNC symbols of `path` (.symtab, else .dynsym); an unreadable
  // file gives an empty table, and names fall back to offsets.
  explicit ElfSymbols(const std::string& path);
  // The function holding `offset` (an address relative to the load base of
  // a shared object, or absolute for a non-PIE executable), demangled, or
  // "" when none does.
  std::string nameAt(uint64_t offset) const;
  bool isExecutable() const { return fixedAddress_; }

 private:
  struct Symbol {
    uint64_t start;
    uint64_t size;
    std::string name;
  };
  std::vector<Symbol> symbols_;  // sorted by start
  bool fixedAddress_ = false;    // ET_EXEC: symbols hold absolute addresses
};

}  // namespace ncclnet::sampler
