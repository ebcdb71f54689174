// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cerrno>
#include <cstdlib>
#include <iterator>

namespace nccldriver {

namespace {

std::optional<long> parseInt(const std::string& text, long lo, long hi) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<double> parseSeconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !(v > 0) || v > 86400) return std::nullopt;
  return v;
}

std::optional<EnvVar> parseEnv(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == 0 || eq == std::string::npos) return std::nullopt;
  return EnvVar{text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

std::optional<size_t> parseSize(const std::string& text) {
  if (text.empty() || !(text[0] >= '0' && text[0] <= '9')) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return std::nullopt;
  int shift = 0;
  if (*end == 'K' || *end == 'k')
    shift = 10, end++;
  else if (*end == 'M' || *end == 'm')
    shift = 20, end++;
  else if (*end == 'G' || *end == 'g')
    shift = 30, end++;
  if (*end != '\0' || v > (1ull << 40) >> shift) return std::nullopt;
  return size_t(v << shift);
}

std::string Subject::expectedNetwork(const std::string& fallback) const {
  for (const EnvVar& e : env)
    if (e.first == "NCCL_NET") return e.second;
  return fallback;
}

bool Subject::asksForCollNet(const std::string& fallback) const {
  std::string value = fallback;
  for (const EnvVar& e : env)
    if (e.first == "NCCL_COLLNET_ENABLE") value = e.second;
  return std::strtol(value.c_str(), nullptr, 0) != 0;
}

std::vector<size_t> Options::sizes() const {
  std::vector<size_t> out;
  for (size_t b = minBytes; b < maxBytes; b *= size_t(factor)) out.push_back(b);
  out.push_back(maxBytes);
  return out;
}

std::vector<Subject> Options::effectiveSubjects() const {
  std::vector<Subject> out = subjects;
  if (out.empty()) out.push_back(Subject{"job", {}});
  for (Subject& s : out) s.env.insert(s.env.begin(), commonEnv.begin(), commonEnv.end());
  return out;
}

namespace {

constexpr const char* kDescription =
    "Real NCCL jobs, one process per rank, every result checked. Each rank gets its\n"
    "own NCCL_HOSTID, so NCCL sees one host per rank and sends every byte through\n"
    "the network, even with every rank on one GPU.";

constexpr const char* kFooter =
    "exit status: 0 every job ok; 1 a job failed (wrong result, network not proven,\n"
    "             checker violation, NCCL error, hang); 2 bad usage or no GPU";

// The options that take one value: name, value name, help. --subject and
// --env are apart (their order matters), --worker and --worker-index are the
// launcher's own (not shown).
struct ValueOption {
  const char* name;
  const char* value;
  const char* help;
};

constexpr ValueOption kValueOptions[] = {
    {"--ranks", "N", "ranks (processes), default 2; rank r uses GPU r % count"},
    {"--ops", "LIST",
     "allreduce,allgather,reducescatter,broadcast,sendrecv,alltoall\n(default: these), or "
     "gin-alltoall (NCCL's device API,\nGPU-initiated puts through the plugin's GIN table)"},
    {"--min-bytes", "SIZE", "smallest point, default 8 (K, M, G suffixes)"},
    {"--max-bytes", "SIZE", "largest point, default 256M, at most 1G"},
    {"--factor", "F", "sizes grow by F, default 4; the largest is always run"},
    {"--iters", "N", "timed iterations per point, default 10"},
    {"--warmup", "N", "untimed iterations per point, default 2"},
    {"--expect-net", "NAME",
     "the network NCCL must use on every channel when a subject\n"
     "sets no NCCL_NET (default: the caller's NCCL_NET; without\n"
     "one, any network, but never P2P or SHM)"},
    {"--rounds", "N", "alternating rounds over the subjects, default 1"},
    {"--timeout", "SEC",
     "a job's limit, default 600; past it every rank is killed\n"
     "and the job is reported as a hang"},
    {"--json", "FILE", "every job, point, proof and summary as JSON"},
    {"--run-dir", "DIR",
     "logs and results (default: a new folder under /tmp);\n"
     "under mpirun, a folder every rank's host can reach"},
    {"--init-cycles", "N", "N times: init, a 1 MiB all-reduce, destroy; then the ops"},
    {"--kill-rank", "R",
     "rank R dies by SIGKILL --kill-after-ms into its traffic;\n"
     "the others must fail within --error-bound seconds"},
    {"--kill-after-ms", "T", "default 500"},
    {"--error-bound", "SEC", "default 60"},
    {"--abort-after-ms", "T", "every rank calls ncclCommAbort T ms into its traffic"},
    {"--tail-skew-ms", "T",
     "after the ops, an 8 KiB broadcast that every rank but the\n"
     "root starts T ms late, while the root destroys its\n"
     "communicator at once (NCCL has no barrier there)"},
    {"--worker", "R", ""},
    {"--worker-index", "I", ""},
};

// One value option's value into `o`; what is wrong with it, else "".
std::string applyValue(Options& o, const std::string& a, const std::string& v) {
  auto bad = [&](const char* what) { return a + " " + v + ": " + what; };
  if (a == "--ranks") {
    auto n = parseInt(v, 2, 64);
    if (!n) return bad("a rank count in 2..64");
    o.ranks = int(*n);
  } else if (a == "--ops") {
    o.ops.clear();
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      if (comma == std::string::npos) comma = v.size();
      std::string name = v.substr(start, comma - start);
      auto op = opByName(name);
      if (!op) return "--ops: unknown op '" + name + "'";
      o.ops.push_back(*op);
      start = comma + 1;
    }
  } else if (a == "--min-bytes" || a == "--max-bytes") {
    auto s = parseSize(v);
    if (!s || *s < 4 || *s > (size_t(1) << 30)) return bad("a size from 4 to 1G");
    (a == "--min-bytes" ? o.minBytes : o.maxBytes) = *s;
  } else if (a == "--factor") {
    auto n = parseInt(v, 2, 1024);
    if (!n) return bad("a factor in 2..1024");
    o.factor = int(*n);
  } else if (a == "--iters" || a == "--warmup") {
    auto n = parseInt(v, a == "--iters" ? 1 : 0, 100000);
    if (!n) return bad("a count");
    (a == "--iters" ? o.iters : o.warmup) = int(*n);
  } else if (a == "--expect-net") {
    o.expectNet = v;
  } else if (a == "--rounds") {
    auto n = parseInt(v, 1, 1000);
    if (!n) return bad("a count in 1..1000");
    o.rounds = int(*n);
  } else if (a == "--timeout" || a == "--error-bound") {
    auto s = parseSeconds(v);
    if (!s) return bad("seconds, more than 0");
    (a == "--timeout" ? o.timeoutSec : o.errorBoundSec) = *s;
  } else if (a == "--json") {
    o.jsonPath = v;
  } else if (a == "--run-dir") {
    o.runDir = v;
  } else if (a == "--init-cycles") {
    auto n = parseInt(v, 0, 10000);
    if (!n) return bad("a count");
    o.initCycles = int(*n);
  } else if (a == "--kill-rank") {
    auto n = parseInt(v, 0, 63);
    if (!n) return bad("a rank");
    o.killRank = int(*n);
  } else if (a == "--kill-after-ms" || a == "--abort-after-ms" || a == "--tail-skew-ms") {
    auto n = parseInt(v, 0, 3600000);
    if (!n) return bad("milliseconds");
    (a == "--kill-after-ms"    ? o.killAfterMs
     : a == "--abort-after-ms" ? o.abortAfterMs
                               : o.tailSkewMs) = int(*n);
  } else if (a == "--worker") {
    auto n = parseInt(v, 0, 63);
    if (!n) return bad("a rank");
    o.worker = int(*n);
  } else if (a == "--worker-index") {
    auto n = parseInt(v, 0, 1000000);
    if (!n) return bad("an index");
    o.workerIndex = int(*n);
  }
  return "";
}

}  // namespace

ncclnet::cli::Parsed parseOptions(const std::vector<std::string>& args, Options* out) {
  using ncclnet::cli::Parsed;
  Options o;
  auto app = ncclnet::cli::makeApp("nccl-driver", "nccl-driver [options]", kDescription, kFooter);
  std::string values[std::size(kValueOptions)];
  for (size_t k = 0; k < std::size(kValueOptions); k++) {
    const ValueOption& v = kValueOptions[k];
    app->add_option(v.name, values[k], v.help)->type_name(v.value)->group(*v.help ? "Options" : "");
  }
  std::vector<std::string> subjects, envs;
  ncclnet::cli::repeatable(app->add_option("--subject", subjects,
                                           "a subject: the --env options after it are its\n"
                                           "environment; several subjects run in alternating "
                                           "rounds"))
      ->type_name("NAME");
  ncclnet::cli::repeatable(app->add_option("--env", envs,
                                           "an environment variable of the last subject (of\n"
                                           "every subject when given before the first)"))
      ->type_name("VAR=VALUE");
  app->add_flag("--mps", o.mps, "start an MPS control daemon for the run, stop it at the end");
  app->add_flag("--same-host", o.sameHost,
                "leave NCCL_HOSTID alone (ranks on real separate hosts)");
  app->add_flag("--truncate-p2p", o.truncateP2p,
                "instead of the ops, a send/recv ring where each rank sends\n"
                "8 KiB and its peer receives 4 KiB: passes only if every\n"
                "rank gets NCCL's error (the plugin reports the truncation)");
  app->add_flag("--version", o.version, "print the version");
  app->add_flag("--probe", o.probe,
                "print the NCCL it runs (\"nccl 2.28.9\") and the GPUs the CUDA\n"
                "runtime sees (\"gpus 1\", or \"gpus 0\" and why)");
  Parsed parsed = ncclnet::cli::tryParse(*app, args);
  if (parsed.kind != Parsed::Kind::kRun) return parsed;
  auto fail = [](std::string why) { return Parsed{Parsed::Kind::kError, std::move(why)}; };
  for (size_t k = 0; k < std::size(kValueOptions); k++) {
    if (app->count(kValueOptions[k].name) == 0) continue;
    std::string why = applyValue(o, kValueOptions[k].name, values[k]);
    if (!why.empty()) return fail(why);
  }
  // An --env belongs to the --subject before it: walk them in the order given.
  size_t subject = 0, env = 0;
  for (const CLI::Option* opt : app->parse_order()) {
    if (opt->get_name() == "--subject") {
      const std::string& v = subjects[subject++];
      if (v.empty() || v.find_first_of(" /\t") != std::string::npos)
        return fail("--subject " + v + ": a name without spaces or slashes");
      o.subjects.push_back(Subject{v, {}});
    } else if (opt->get_name() == "--env") {
      const std::string& v = envs[env++];
      auto e = parseEnv(v);
      if (!e) return fail("--env " + v + ": VAR=VALUE");
      (o.subjects.empty() ? o.commonEnv : o.subjects.back().env).push_back(*e);
    }
  }
  if (o.minBytes > o.maxBytes) return fail("--min-bytes is larger than --max-bytes");
  if (o.killRank >= o.ranks) return fail("--kill-rank: no such rank");
  if (int(o.killRank >= 0) + int(o.abortAfterMs >= 0) + int(o.truncateP2p) > 1)
    return fail("--kill-rank, --abort-after-ms, --truncate-p2p: one fault at a time");
  if (o.tailSkewMs >= 0 && (o.faultPlanted() || o.truncateP2p))
    return fail("--tail-skew-ms: only after ops that end normally");
  if (o.ops.empty()) return fail("--ops: no op");
  *out = std::move(o);
  return parsed;
}

}  // namespace nccldriver
