// SPDX-License-Identifier: Apache-2.0
#include "elf_symbols.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ncclnet::sampler {

namespace {

std::string demangle(const char* name) {
  int status = 0;
  char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || plain == nullptr) return name;
  std::string out = plain;
  std::free(plain);
  return out;
}

// The file mapped read-only for the duration of the constructor.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const uint8_t*>(p);
        size_ = size_t(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool holds(uint64_t offset, uint64_t bytes) const {
    return offset <= size_ && bytes <= size_ - offset;
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

ElfSymbols::ElfSymbols(const std::string& path) {
  MappedFile file(path);
  if (file.data() == nullptr || !file.holds(0, sizeof(Elf64_Ehdr))) return;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return;
  fixedAddress_ = eh->e_type == ET_EXEC;
  if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
      !file.holds(eh->e_shoff, uint64_t(eh->e_shnum) * sizeof(Elf64_Shdr))) {
    return;
  }
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(file.data() + eh->e_shoff);
  // .symtab when the file kept it (every hidden function), else .dynsym.
  const Elf64_Shdr* table = nullptr;
  for (int want : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (unsigned i = 0; i < eh->e_shnum && table == nullptr; ++i) {
      if (sections[i].sh_type == uint32_t(want)) table = &sections[i];
    }
    if (table != nullptr) break;
  }
  if (table == nullptr || table->sh_link >= eh->e_shnum) return;
  const Elf64_Shdr& strings = sections[table->sh_link];
  if (!file.holds(table->sh_offset, table->sh_size) ||
      !file.holds(strings.sh_offset, strings.sh_size)) {
    return;
  }
  const auto* syms = reinterpret_cast<const Elf64_Sym*>(file.data() + table->sh_offset);
  const char* names = reinterpret_cast<const char*>(file.data() + strings.sh_offset);
  size_t count = table->sh_size / sizeof(Elf64_Sym);
  for (size_t i = 0; i < count; ++i) {
    const Elf64_Sym& s = syms[i];
    if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0 || s.st_name >= strings.sh_size) {
      continue;
    }
    symbols_.push_back({s.st_value, s.st_size, demangle(names + s.st_name)});
  }
  std::sort(symbols_.begin(), symbols_.end(),
            [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
}

std::string ElfSymbols::nameAt(uint64_t offset) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), offset,
                                [](uint64_t o, const Symbol& s) { return o < s.start; });
  if (after == symbols_.begin()) return "";
  const Symbol& s = *(after - 1);
  // A zero size (hand-written assembly) is taken as reaching the next one.
  if (s.size != 0 && offset >= s.start + s.size) return "";
  return s.name;
}

}  // namespace ncclnet::sampler
