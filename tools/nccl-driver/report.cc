// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <cstdio>
#include <map>

#include "json_text.hpp"
#include "stats.hpp"

namespace nccldriver {

namespace {

double busbwOf(const PointResult& p, int nranks) {
  if (p.us <= 0) return 0;
  double algbw = double(p.bytes) / p.us / 1e3;  // GB/s
  return algbw * busFactor(p.op, nranks);
}

std::string format(const char* f, double a, double b = 0, double c = 0) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

std::vector<PointSummary> summarize(const Options& o, const std::vector<Subject>& subjects,
                                    const std::vector<JobOutcome>& jobs) {
  std::vector<PointSummary> rows;
  // bandwidth[subject][round] for each point
  for (Op op : o.ops)
    for (size_t bytes : o.sizes()) {
      std::map<std::string, std::vector<double>> byRound;
      for (const Subject& s : subjects) byRound[s.name].assign(size_t(o.rounds), 0.0);
      bool any = false;
      for (const JobOutcome& j : jobs) {
        if (!j.ok()) continue;
        for (const PointResult& p : j.points)
          if (p.op == op && p.bytes == bytes) {
            byRound[j.subject][size_t(j.round)] = busbwOf(p, o.ranks);
            any = true;
          }
      }
      if (!any) continue;
      const std::vector<double>& base = byRound[subjects.front().name];
      for (const Subject& s : subjects) {
        PointSummary row{op, bytes, s.name, {}};
        for (double v : byRound[s.name])
          if (v > 0) row.busbw.push_back(v);
        ncclnet::bench::Summary sum = ncclnet::bench::summarize(row.busbw);
        row.median = sum.median, row.q1 = sum.q1, row.q3 = sum.q3;
        if (&s != &subjects.front()) {
          ncclnet::bench::Summary r =
              ncclnet::bench::summarize(ncclnet::bench::pairedRatios(byRound[s.name], base));
          row.ratioMedian = r.median, row.ratioQ1 = r.q1, row.ratioQ3 = r.q3;
        }
        rows.push_back(row);
      }
    }
  return rows;
}

void printJob(std::ostream& out, const JobOutcome& j) {
  out << (j.ok() ? "PASS " : "FAIL ") << j.subject << " round " << j.round + 1 << " ("
      << format("%.1f s", j.seconds)
      << "): " << (j.ok() ? j.proof.describe() : j.status + ": " + j.detail) << "\n";
  for (const std::string& e : j.events) out << "     " << e << "\n";
  if (!j.ok())
    for (const std::string& w : j.proof.warnings) out << "     " << w << "\n";
}

void printResults(std::ostream& out, const Options& o, const JobOutcome& j) {
  for (const PointResult& p : j.points) {
    double algbw = p.us > 0 ? double(p.bytes) / p.us / 1e3 : 0;
    char line[160];
    std::snprintf(line, sizeof line, "RESULT %s %zu %.1f %.4f %.4f %s\n", opName(p.op), p.bytes,
                  p.us, algbw, busbwOf(p, o.ranks), p.ok ? "ok" : "FAIL");
    out << line;
  }
}

void printTable(std::ostream& out, const std::vector<Subject>& subjects,
                const std::vector<PointSummary>& rows) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-13s %11s", "op", "bytes");
  out << buf;
  for (const Subject& s : subjects) {
    std::snprintf(buf, sizeof buf, " %24s", s.name.c_str());
    out << buf;
  }
  out << "   busbw GB/s: median [q1-q3] of the passing rounds; xR: ratio to " << subjects[0].name
      << ", round by round\n";
  for (size_t i = 0; i < rows.size(); i += subjects.size()) {
    std::snprintf(buf, sizeof buf, "%-13s %11zu", opName(rows[i].op), rows[i].bytes);
    out << buf;
    for (size_t k = 0; k < subjects.size() && i + k < rows.size(); k++) {
      const PointSummary& r = rows[i + k];
      std::string cell = r.busbw.empty() ? "-" : format("%.2f [%.2f-%.2f]", r.median, r.q1, r.q3);
      if (k > 0 && r.ratioMedian > 0) cell += format(" x%.2f", r.ratioMedian);
      std::snprintf(buf, sizeof buf, " %24s", cell.c_str());
      out << buf;
    }
    out << "\n";
  }
}

void writeJson(std::ostream& out, const Options& o, const std::vector<Subject>& subjects,
               const std::vector<JobOutcome>& jobs, const std::vector<PointSummary>& rows,
               bool mps) {
  using ncclnet::json::Json;
  Json j = Json::object();
  j["tool"] = "nccl-driver";
  j["ranks"] = o.ranks;
  j["rounds"] = o.rounds;
  j["mps"] = mps;
  j["nccl_version"] = jobs.empty() ? 0 : jobs.front().ncclVersion;
  Json subjectList = Json::array();
  for (const Subject& s : subjects) {
    Json env = Json::object();
    for (const EnvVar& e : s.env) env[e.first] = e.second;
    subjectList.push_back({{"name", s.name}, {"env", env}});
  }
  j["subjects"] = subjectList;
  Json jobList = Json::array();
  for (const JobOutcome& job : jobs) {
    Json proof = Json::object();
    proof["proven"] = job.proof.proven();
    proof["text"] = job.proof.describe();
    proof["network"] = job.proof.network;
    proof["connections"] = job.proof.connections;
    proof["via_expected"] = job.proof.viaExpected;
    proof["gdr"] = job.proof.gdr;
    proof["violations"] = job.proof.violations;
    proof["caller_lines"] = job.proof.callerLines;
    Json points = Json::array();
    for (const PointResult& p : job.points) {
      points.push_back({{"op", opName(p.op)},
                        {"bytes", p.bytes},
                        {"time_us", p.us},
                        {"busbw_gbps", busbwOf(p, o.ranks)},
                        {"ok", p.ok}});
    }
    Json entry = Json::object();
    entry["subject"] = job.subject;
    entry["round"] = job.round + 1;
    entry["status"] = job.status;
    entry["detail"] = job.detail;
    entry["seconds"] = job.seconds;
    entry["proof"] = proof;
    entry["events"] = job.events;
    entry["points"] = points;
    entry["logs"] = job.logs;
    jobList.push_back(entry);
  }
  j["jobs"] = jobList;
  Json summary = Json::array();
  for (const PointSummary& r : rows) {
    Json row = Json::object();
    row["op"] = opName(r.op);
    row["bytes"] = r.bytes;
    row["subject"] = r.subject;
    row["busbw_median"] = r.median;
    row["busbw_q1"] = r.q1;
    row["busbw_q3"] = r.q3;
    row["passing_rounds"] = r.busbw.size();
    if (r.ratioMedian > 0) {
      row["ratio_median"] = r.ratioMedian;
      row["ratio_q1"] = r.ratioQ1;
      row["ratio_q3"] = r.ratioQ3;
    }
    summary.push_back(row);
  }
  j["summary"] = summary;
  out << ncclnet::json::jsonText(j) << "\n";
}

}  // namespace nccldriver
