// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (host): reading the ncclnet_knobs section of a library file.
#include "ncclnet/host/published_knobs.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "ncclnet/published_knobs.hpp"

namespace ncclnet::host {
namespace {

// A section larger than this is not a knob table (a few KiB in practice).
constexpr uint64_t kMaxSectionBytes = 1 << 20;

class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool open() const { return fd_ >= 0; }
  // Exactly `size` bytes at `offset`, or false.
  bool read(uint64_t offset, void* to, size_t size) const {
    char* at = static_cast<char*>(to);
    while (size > 0) {
      ssize_t n = ::pread(fd_, at, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      at += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<size_t>(n);
    }
    return true;
  }

 private:
  int fd_;
};

// The section's bytes, "" when the file has none; false on a file that is
// not a readable 64-bit ELF of this machine's byte order.
bool readSection(const std::string& path, std::string* bytes, std::string* error) {
  File file(path);
  if (!file.open()) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  Elf64_Ehdr eh{};
  if (!file.read(0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    *error = path + ": not an ELF file";
    return false;
  }
  bool littleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != (littleEndian ? ELFDATA2LSB : ELFDATA2MSB)) {
    *error = path + ": not a 64-bit ELF file of this machine's byte order";
    return false;
  }
  if (eh.e_shoff == 0 || eh.e_shnum == 0) return true;  // no section headers: nothing published
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx == SHN_UNDEF ||
      eh.e_shstrndx >= eh.e_shnum) {
    *error = path + ": section headers this reader does not understand";
    return false;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!file.read(eh.e_shoff, sections.data(), sections.size() * sizeof(Elf64_Shdr))) {
    *error = path + ": truncated section headers";
    return false;
  }
  const Elf64_Shdr& names = sections[eh.e_shstrndx];
  if (names.sh_size > kMaxSectionBytes) {
    *error = path + ": section name table too large";
    return false;
  }
  std::string nameTable(names.sh_size, '\0');
  if (!file.read(names.sh_offset, nameTable.data(), nameTable.size())) {
    *error = path + ": truncated section name table";
    return false;
  }
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_name >= nameTable.size() || s.sh_type == SHT_NOBITS) continue;
    if (std::strcmp(nameTable.c_str() + s.sh_name, published_knobs::kSectionName) != 0) continue;
    if (s.sh_size > kMaxSectionBytes) {
      *error = path + ": section ncclnet_knobs is " + std::to_string(s.sh_size) +
               " bytes, more than a knob table";
      return false;
    }
    bytes->assign(s.sh_size, '\0');
    if (!file.read(s.sh_offset, bytes->data(), bytes->size())) {
      *error = path + ": truncated section ncclnet_knobs";
      return false;
    }
    return true;
  }
  return true;
}

bool parseNumber(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool parseType(const std::string& word, KnobType* out) {
  static const std::pair<const char*, KnobType> kTypes[] = {{"flag", KnobType::Flag},
                                                            {"int", KnobType::Int},
                                                            {"size", KnobType::Size},
                                                            {"string", KnobType::String},
                                                            {"enum", KnobType::Enum}};
  for (const auto& [name, type] : kTypes) {
    if (word == name) {
      *out = type;
      return true;
    }
  }
  return false;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t at; (at = text.find(separator, from)) != std::string::npos; from = at + 1)
    parts.push_back(text.substr(from, at - from));
  parts.push_back(text.substr(from));
  return parts;
}

bool parseChoices(const std::string& field, PublishedKnob* knob) {
  if (field.empty()) return true;
  for (const std::string& choice : split(field, ',')) {
    size_t eq = choice.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 || !parseNumber(choice.substr(eq + 1), &value))
      return false;
    knob->choices.emplace_back(choice.substr(0, eq), value);
  }
  return true;
}

// One record line; false with the reason in `why`.
bool parseRecord(const std::string& line, PublishedKnob* knob, std::string* why) {
  std::vector<std::string> fields = split(line, '\t');
  if (fields.size() != 7) {
    *why = "expected 7 tab-separated fields, found " + std::to_string(fields.size());
    return false;
  }
  knob->name = fields[0];
  knob->help = fields[6];
  if (knob->name.empty()) {
    *why = "empty name";
    return false;
  }
  if (!parseType(fields[1], &knob->type)) {
    *why = "unknown type '" + fields[1] + "'";
    return false;
  }
  if (!parseNumber(fields[3], &knob->min) || !parseNumber(fields[4], &knob->max)) {
    *why = "range '" + fields[3] + "', '" + fields[4] + "' is not two integers";
    return false;
  }
  if (knob->type == KnobType::String || knob->type == KnobType::Enum) {
    knob->defaultText = fields[2];
  } else if (!parseNumber(fields[2], &knob->defaultNumber)) {
    *why = "default '" + fields[2] + "' is not an integer";
    return false;
  }
  if (!parseChoices(fields[5], knob) || (knob->type == KnobType::Enum) == knob->choices.empty()) {
    *why = "choices '" + fields[5] + "' do not fit type " + fields[1];
    return false;
  }
  return true;
}

// The knob as the SDK's parser wants it; `words` keeps the choices alive.
KnobSpec specOf(const PublishedKnob& knob, std::vector<KnobChoice>* words) {
  words->clear();
  for (const auto& [word, value] : knob.choices) words->push_back(KnobChoice{word.c_str(), value});
  KnobSpec s;
  s.name = knob.name.c_str();
  s.type = knob.type;
  s.help = knob.help.c_str();
  s.defaultNumber = knob.defaultNumber;
  s.defaultText = knob.defaultText.c_str();
  s.min = knob.min;
  s.max = knob.max;
  s.choices = words->data();
  s.choiceCount = words->size();
  return s;
}

}  // namespace

bool parsePublishedKnobs(const std::string& text, std::vector<PublishedKnob>* out,
                         std::string* error) {
  const std::string header(published_knobs::kHeaderLine, sizeof published_knobs::kHeaderLine - 2);
  std::vector<PublishedKnob> knobs;
  bool inTable = false;
  int lineNumber = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    ++lineNumber;
    // Tables of several objects may be padded apart with NULs.
    line.erase(0, std::min(line.size(), line.find_first_not_of('\0')));
    if (line.rfind("ncclnet-knobs ", 0) == 0) {
      if (line != header) {
        *error = "knob table line " + std::to_string(lineNumber) + ": '" + line +
                 "' is a format this SDK does not read (it reads '" + header + "')";
        return false;
      }
      inTable = true;
      continue;
    }
    if (line.empty()) continue;
    PublishedKnob knob;
    std::string why;
    if (!inTable) {
      why = "a record before the table's header line";
    } else if (parseRecord(line, &knob, &why)) {
      knobs.push_back(std::move(knob));
      continue;
    }
    *error = "knob table line " + std::to_string(lineNumber) + ": " + why;
    return false;
  }
  *out = std::move(knobs);
  return true;
}

bool readPublishedKnobs(const std::string& path, std::vector<PublishedKnob>* out,
                        std::string* error) {
  std::string bytes;
  if (!readSection(path, &bytes, error)) return false;
  if (!parsePublishedKnobs(bytes, out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

KnobReading readFromEnvironment(const PublishedKnob& knob) {
  std::vector<KnobChoice> words;
  KnobSpec spec = specOf(knob, &words);
  KnobReading r;
  r.allowed = knobAllowed(spec);
  r.help = knobListedHelp(spec);
  KnobValue def;
  r.defaultValue = knobDefault(spec, &def) ? def.text : knob.defaultText;
  const char* raw = std::getenv(spec.name);
  r.fromEnv = raw != nullptr && raw[0] != '\0';
  if (!r.fromEnv) {
    r.value = r.defaultValue;
    return r;
  }
  KnobValue value;
  r.refused = !parseKnob(spec, raw, &value);
  r.value = r.refused ? raw : value.text;
  return r;
}

}  // namespace ncclnet::host
