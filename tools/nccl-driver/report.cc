// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <cstdio>
#include <map>

#include "ncclnet/host/json_writer.hpp"
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
  ncclnet::host::JsonWriter w(out);
  w.beginObject();
  w.key("tool").value("nccl-driver");
  w.key("ranks").value(o.ranks);
  w.key("rounds").value(o.rounds);
  w.key("mps").value(mps);
  w.key("nccl_version").value(jobs.empty() ? 0 : jobs.front().ncclVersion);
  w.key("subjects").beginArray();
  for (const Subject& s : subjects) {
    w.beginObject().key("name").value(s.name).key("env").beginObject();
    for (const EnvVar& e : s.env) w.key(e.first).value(e.second);
    w.endObject().endObject();
  }
  w.endArray();
  w.key("jobs").beginArray();
  for (const JobOutcome& j : jobs) {
    w.beginObject();
    w.key("subject").value(j.subject).key("round").value(j.round + 1);
    w.key("status").value(j.status).key("detail").value(j.detail);
    w.key("seconds").value(j.seconds);
    w.key("proof").beginObject();
    w.key("proven").value(j.proof.proven()).key("text").value(j.proof.describe());
    w.key("network").value(j.proof.network).key("connections").value(j.proof.connections);
    w.key("via_expected").value(j.proof.viaExpected).key("gdr").value(j.proof.gdr);
    w.key("violations").beginArray();
    for (const std::string& v : j.proof.violations) w.value(v);
    w.endArray();
    w.key("caller_lines").beginArray();
    for (const std::string& v : j.proof.callerLines) w.value(v);
    w.endArray().endObject();
    w.key("events").beginArray();
    for (const std::string& e : j.events) w.value(e);
    w.endArray();
    w.key("points").beginArray();
    for (const PointResult& p : j.points) {
      w.beginObject().key("op").value(opName(p.op)).key("bytes").value(p.bytes);
      w.key("time_us").value(p.us).key("busbw_gbps").value(busbwOf(p, o.ranks));
      w.key("ok").value(p.ok).endObject();
    }
    w.endArray();
    w.key("logs").beginArray();
    for (const std::string& l : j.logs) w.value(l);
    w.endArray().endObject();
  }
  w.endArray();
  w.key("summary").beginArray();
  for (const PointSummary& r : rows) {
    w.beginObject().key("op").value(opName(r.op)).key("bytes").value(r.bytes);
    w.key("subject").value(r.subject).key("busbw_median").value(r.median);
    w.key("busbw_q1").value(r.q1).key("busbw_q3").value(r.q3);
    w.key("passing_rounds").value(int(r.busbw.size()));
    if (r.ratioMedian > 0)
      w.key("ratio_median")
          .value(r.ratioMedian)
          .key("ratio_q1")
          .value(r.ratioQ1)
          .key("ratio_q3")
          .value(r.ratioQ3);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  out << "\n";
}

}  // namespace nccldriver
