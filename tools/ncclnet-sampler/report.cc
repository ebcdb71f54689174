// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "elf_symbols.hpp"

namespace ncclnet::sampler {

namespace {

std::string baseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "function (library)" for a code address of this process.
class Symbolizer {
 public:
  const std::string& name(void* pc) {
    auto it = cache_.find(pc);
    if (it != cache_.end()) return it->second;
    return cache_.emplace(pc, resolve(pc)).first->second;
  }

 private:
  std::string resolve(void* pc) {
    Dl_info info{};
    if (dladdr(pc, &info) == 0 || info.dli_fname == nullptr) return "?";
    std::string path = info.dli_fname;
    if (path.empty()) path = "/proc/self/exe";
    // The vDSO has no file to read symbols from.
    if (path.find('/') == std::string::npos) return "[" + path + "]";
    auto& table = files_[path];
    if (!table) table = std::make_unique<ElfSymbols>(path);
    uint64_t addr = reinterpret_cast<uint64_t>(pc);
    uint64_t offset =
        table->isExecutable() ? addr : addr - reinterpret_cast<uint64_t>(info.dli_fbase);
    std::string fn = table->nameAt(offset);
    if (fn.empty() && info.dli_sname != nullptr) fn = info.dli_sname;
    if (fn.empty()) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(offset));
      fn = hex;
    }
    return fn + " (" + baseName(path) + ")";
  }
  std::unordered_map<void*, std::string> cache_;
  std::map<std::string, std::unique_ptr<ElfSymbols>> files_;
};

struct ThreadProfile {
  int tid = 0;
  std::string name;
  double cpu = 0;  // seconds
  std::map<std::string, double> self, total;
};

void printTop(const char* what, const std::map<std::string, double>& counts, double cpu, int top,
              std::FILE* out) {
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [fn, n] : counts) rows.emplace_back(n, fn);
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (int(rows.size()) > top) rows.resize(size_t(top));
  for (const auto& [n, fn] : rows) {
    std::fprintf(out, "    %-5s %5.1f%%  %s\n", what, 100.0 * n / cpu, fn.c_str());
  }
}

}  // namespace

void writeReport(const SampleStore& store, double wallSeconds, int top, std::FILE* out) {
  Symbolizer symbols;
  std::map<int, ThreadProfile> threads;
  size_t n = store.recorded();
  for (size_t i = 0; i < n; ++i) {
    const Sample& s = store.samples[i];
    if (s.depth <= 0) continue;
    ThreadProfile& t = threads[s.tid];
    t.tid = s.tid;
    double cpu = double(s.cpuNs) * 1e-9;
    t.cpu += cpu;
    // Frames past the innermost are return addresses: one byte back is
    // still inside the calling function.
    t.self[symbols.name(s.pc[0])] += cpu;
    std::set<std::string> seen;
    for (int f = 0; f < s.depth; ++f) {
      void* pc = f == 0 ? s.pc[f] : static_cast<char*>(s.pc[f]) - 1;
      const std::string& fn = symbols.name(pc);
      if (seen.insert(fn).second) t.total[fn] += cpu;
    }
  }
  for (const ThreadName& tn : store.threads) {
    int tid = tn.tid.load(std::memory_order_acquire);
    if (tid != 0 && threads.count(tid)) threads[tid].name = tn.name;
  }
  std::vector<ThreadProfile*> order;
  for (auto& [tid, t] : threads) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const ThreadProfile* a, const ThreadProfile* b) { return a->cpu > b->cpu; });
  std::fprintf(out, "# ncclnet-sampler: %zu samples (%zu dropped), %.1f s wall\n", n,
               store.dropped.load(), wallSeconds);
  for (const ThreadProfile* t : order) {
    double cpu = t->cpu;
    std::fprintf(out, "thread %d \"%s\": %.2f s CPU, %.0f%% of the wall time\n", t->tid,
                 t->name.c_str(), cpu, wallSeconds > 0 ? 100.0 * cpu / wallSeconds : 0.0);
    printTop("self", t->self, cpu, top, out);
    printTop("total", t->total, cpu, top, out);
  }
}

}  // namespace ncclnet::sampler
