// SPDX-License-Identifier: Apache-2.0
// JUnit XML.
#include "report/junit.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace conformance {

namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 if there is none
// (a plugin's log line may hold any bytes; XML must stay well-formed).
size_t utf8Length(const std::string& s, size_t i) {
  unsigned char lead = static_cast<unsigned char>(s[i]);
  size_t n = lead < 0x80           ? 1
             : (lead >> 5) == 0x6  ? 2
             : (lead >> 4) == 0xe  ? 3
             : (lead >> 3) == 0x1e ? 4
                                   : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; k++) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

std::string escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x80) {
      size_t n = utf8Length(s, i);
      if (n == 0) {
        out += '?';
      } else {
        out.append(s, i, n);
        i += n - 1;
      }
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += "&#10;"; break;
      case '\t': out += "&#9;"; break;
      default:
        // XML 1.0 has no place for other control characters.
        if (ch < 0x20)
          out += '?';
        else
          out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", s);
  return text;
}

// "v12/Data.SizesEveryByteVerified" -> ("v12/Data", "SizesEveryByteVerified").
std::pair<std::string, std::string> splitTest(const std::string& test) {
  size_t dot = test.rfind('.');
  if (dot == std::string::npos) return {"ncclnet-conformance", test};
  return {test.substr(0, dot), test.substr(dot + 1)};
}

void writeCase(std::ostream& out, const TestResult& r, bool strict) {
  auto [suite, name] = splitTest(r.test);
  out << "    <testcase name=\"" << escape(name) << "\" classname=\"" << escape(suite)
      << "\" time=\"" << seconds(r.seconds) << "\">\n";
  out << "      <properties>\n";
  auto property = [&](const std::string& key, const std::string& value) {
    out << "        <property name=\"" << escape(key) << "\" value=\"" << escape(value) << "\"/>\n";
  };
  property("rule", ruleLabel(r.rule));
  property("severity", r.severity());
  property("verdict", verdictName(r.verdict));
  if (!r.reason.empty()) property("reason", r.reason);
  out << "      </properties>\n";
  std::string body = r.reason + (r.rerun.empty() ? "" : "\nrerun: " + r.rerun);
  if (countsAsFailure(r.verdict, strict)) {
    std::string type =
        r.verdict == Verdict::Fail ? "fail" : std::string(verdictName(r.verdict)) + " (--strict)";
    out << "      <failure message=\"" << escape(r.reason) << "\" type=\"" << escape(type) << "\">"
        << escape(body) << "</failure>\n";
  } else if (r.verdict == Verdict::NotRun || r.verdict == Verdict::Excluded) {
    out << "      <skipped message=\"" << escape(r.reason) << "\"/>\n";
  }
  if (r.verdict == Verdict::Warn || !r.notes.empty()) {
    std::string text = r.verdict == Verdict::Warn ? "WARN (SHOULD): " + body + "\n" : "";
    for (const std::string& n : r.notes) text += "note: " + n + "\n";
    out << "      <system-out>" << escape(text) << "</system-out>\n";
  }
  out << "    </testcase>\n";
}

}  // namespace

bool writeJunit(const Report& report, const std::string& path, std::string* error) {
  std::map<std::string, std::vector<const TestResult*>> suites;
  for (const TestResult& r : report.results) suites[splitTest(r.test).first].push_back(&r);
  std::ostringstream out;
  int failures = 0, skipped = 0;
  for (const TestResult& r : report.results) {
    failures += countsAsFailure(r.verdict, report.strict);
    skipped += !countsAsFailure(r.verdict, report.strict) &&
               (r.verdict == Verdict::NotRun || r.verdict == Verdict::Excluded);
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"ncclnet-conformance\" tests=\"" << report.results.size()
      << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\""
      << seconds(report.seconds) << "\">\n";
  for (const auto& [name, cases] : suites) {
    int f = 0, s = 0;
    double time = 0;
    for (const TestResult* r : cases) {
      f += countsAsFailure(r->verdict, report.strict);
      s += !countsAsFailure(r->verdict, report.strict) &&
           (r->verdict == Verdict::NotRun || r->verdict == Verdict::Excluded);
      time += r->seconds;
    }
    out << "  <testsuite name=\"" << escape(name) << "\" tests=\"" << cases.size()
        << "\" failures=\"" << f << "\" errors=\"0\" skipped=\"" << s << "\" time=\""
        << seconds(time) << "\">\n";
    out << "    <properties>\n";
    out << "      <property name=\"plugin\" value=\"" << escape(report.request) << "\"/>\n";
    out << "      <property name=\"pluginName\" value=\"" << escape(report.plugin.name) << "\"/>\n";
    out << "      <property name=\"pluginPath\" value=\"" << escape(report.plugin.path) << "\"/>\n";
    out << "      <property name=\"ncclWindow\" value=\"" << escape(report.ncclWindow) << "\"/>\n";
    const Provenance& p = report.provenance;
    for (const auto& [key, value] :
         {std::pair<const char*, const std::string&>{"toolVersion", p.toolVersion},
          {"gitCommit", p.gitCommit},
          {"utcTime", p.utcTime},
          {"host", p.host},
          {"pluginSha256", p.pluginSha256},
          {"profileSha256", p.profileSha256}}) {
      out << "      <property name=\"" << key << "\" value=\"" << escape(value) << "\"/>\n";
    }
    out << "    </properties>\n";
    for (const TestResult* r : cases) writeCase(out, *r, report.strict);
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
  std::ofstream file(path);
  file << out.str();
  if (!file) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace conformance
