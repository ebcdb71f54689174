// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the library search path, scanned for net plugins.
#include "plugin_search.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>

namespace ncclnet::info {

namespace {

constexpr const char* kCachePath = "/etc/ld.so.cache";
constexpr char kCacheMagic[] = "glibc-ld.so.cache1.1";
constexpr size_t kCacheHeaderSize =
    48;  // magic+version 20, nlibs, len_strings, flags, pad, ext, unused
constexpr size_t kCacheEntrySize = 24;  // flags, key, value, osversion, hwcap

struct Place {
  std::string origin;
  std::string dir;  // "" for the cache
};

std::vector<std::string> splitPath(const char* value) {
  std::vector<std::string> dirs;
  if (value == nullptr) return dirs;
  std::stringstream stream(value);
  std::string dir;
  while (std::getline(stream, dir, ':')) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (!dir.empty()) dirs.push_back(dir);
  }
  return dirs;
}

// The linker's built-in directories, as glibc lists them for this process:
// its search list less the LD_LIBRARY_PATH entries. glibc leaves the
// entries' origin flags at 0, and ncclnet-info is linked without an RPATH or
// RUNPATH, so what remains are the defaults.
std::vector<std::string> defaultDirs() {
  std::vector<std::string> fromEnv = splitPath(std::getenv("LD_LIBRARY_PATH"));
  std::vector<std::string> dirs;
  void* self = dlopen(nullptr, RTLD_NOW);
  if (self == nullptr) return dirs;
  Dl_serinfo size;
  if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0) {
    std::unique_ptr<char[]> buffer(new char[size.dls_size]);
    auto* info = reinterpret_cast<Dl_serinfo*>(buffer.get());
    *info = size;
    if (dlinfo(self, RTLD_DI_SERINFOSIZE, info) == 0 && dlinfo(self, RTLD_DI_SERINFO, info) == 0) {
      for (unsigned i = 0; i < info->dls_cnt; i++) {
        std::string dir = info->dls_serpath[i].dls_name;
        while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
        if (std::find(fromEnv.begin(), fromEnv.end(), dir) == fromEnv.end()) dirs.push_back(dir);
      }
    }
  }
  dlclose(self);
  return dirs;
}

std::vector<Place> places() {
  std::vector<Place> all;
  for (const std::string& dir : splitPath(std::getenv("LD_LIBRARY_PATH")))
    all.push_back({"LD_LIBRARY_PATH", dir});
  all.push_back({"ld.so.cache", ""});
  for (const std::string& dir : defaultDirs()) all.push_back({"default directory", dir});
  return all;
}

std::vector<std::string> pluginsInDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = readdir(d)) {
    if (isPluginFileName(e->d_name)) names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// The cache maps names to paths; only glibc's current format (the only one
// ldconfig writes since glibc 2.32) is read.
std::vector<std::pair<std::string, std::string>> pluginsInCache() {
  std::vector<std::pair<std::string, std::string>> found;
  std::ifstream file(kCachePath, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (data.size() < kCacheHeaderSize || data.compare(0, std::strlen(kCacheMagic), kCacheMagic) != 0)
    return found;
  uint32_t count = 0;
  std::memcpy(&count, data.data() + 20, sizeof(count));
  auto text = [&](uint32_t offset) -> std::string {
    if (offset >= data.size()) return "";
    return std::string(data.c_str() + offset, strnlen(data.c_str() + offset, data.size() - offset));
  };
  for (uint32_t i = 0; i < count; i++) {
    size_t at = kCacheHeaderSize + size_t{i} * kCacheEntrySize;
    if (at + kCacheEntrySize > data.size()) break;
    uint32_t key = 0, value = 0;
    std::memcpy(&key, data.data() + at + 4, sizeof(key));
    std::memcpy(&value, data.data() + at + 8, sizeof(value));
    std::string name = text(key);
    if (isPluginFileName(name)) found.emplace_back(name, text(value));
  }
  return found;
}

}  // namespace

bool isPluginFileName(const std::string& name) {
  if (name == "libnccl-net.so") return true;
  const std::string prefix = "libnccl-net-", suffix = ".so";
  return name.size() > prefix.size() + suffix.size() &&
         name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> searchPlaces() {
  std::vector<std::string> lines;
  for (const Place& p : places())
    lines.push_back(p.origin + ": " + (p.dir.empty() ? std::string(kCachePath) : p.dir));
  return lines;
}

std::vector<FoundFile> findPluginFiles() {
  std::vector<FoundFile> files;
  std::set<std::string> seenNames;
  auto add = [&](const std::string& path, const std::string& name, const std::string& origin) {
    bool shadowed = !seenNames.insert(name).second;
    files.push_back(FoundFile{path, name, origin, shadowed});
  };
  for (const Place& p : places()) {
    if (p.dir.empty()) {
      for (const auto& [name, path] : pluginsInCache()) add(path, name, p.origin);
      continue;
    }
    for (const std::string& name : pluginsInDir(p.dir)) add(p.dir + "/" + name, name, p.origin);
  }
  return files;
}

}  // namespace ncclnet::info
