// SPDX-License-Identifier: Apache-2.0
// The command-line style every tool and the conformance suite share, on top
// of CLI11: one --help layout ("usage: ..." line, description, options,
// footer) and one way to refuse a command line, a single line on stderr,
//
//   <tool>: <what is wrong>; see <tool> --help
//
// and exit status 2. Host-side only: plugins and the SDK's plugin-side code
// never include this (they stay free of CLI11).
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ncclnet::cli {

// Every tool's exit status for a command line it refuses.
constexpr int kExitUsage = 2;

// The shared --help layout: the tool's own synopsis line first, then what
// it does, its options with their value names only (defaults and limits
// are in each description), then the footer (exit statuses).
class Formatter : public CLI::Formatter {
 public:
  explicit Formatter(std::string synopsis) : synopsis_(std::move(synopsis)) {
    column_width(24);
    label("OPTIONS", "options");
  }
  std::string make_usage(const CLI::App*, std::string) const override {
    return "usage: " + synopsis_ + "\n";
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    return opt->get_type_size() != 0 ? " " + opt->get_type_name() : "";
  }
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    std::string out = make_usage(app, name);
    if (!app->get_description().empty()) out += "\n" + app->get_description() + "\n";
    out += make_groups(app, mode);
    // One blank line between the options and the footer, whatever CLI11
    // puts after the last group.
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
      out.pop_back();
    if (!app->get_footer().empty()) out += "\n" + app->get_footer() + "\n";
    return out;
  }

 private:
  std::string synopsis_;
};

// An App in the shared style. `synopsis` follows "usage: " (it starts with
// the tool's name); `footer` usually gives the exit statuses.
inline std::unique_ptr<CLI::App> makeApp(const std::string& tool, const std::string& synopsis,
                                         const std::string& description,
                                         const std::string& footer) {
  auto app = std::make_unique<CLI::App>(description, tool);
  app->formatter(std::make_shared<Formatter>(synopsis));
  app->set_help_flag("-h,--help", "print this text and exit");
  app->footer(footer);
  // Unknown arguments are collected and refused in our words (parse below);
  // an option given twice keeps its last value, as the hand-written parsers
  // did (nccl-driver hands its ranks the caller's line plus its own --ranks).
  app->allow_extras(true);
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return app;
}

// An option that may be given again and again, each time with one value,
// all of them kept in order (a vector bound to it).
inline CLI::Option* repeatable(CLI::Option* opt) {
  return opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)->allow_extra_args(false);
}

// Prints the one usage-error line and returns kExitUsage.
inline int usageError(const std::string& tool, const std::string& what) {
  std::fprintf(stderr, "%s: %s; see %s --help\n", tool.c_str(), what.c_str(), tool.c_str());
  return kExitUsage;
}

// CLI11's message in the words the tools have always used: "--x needs a
// value" for an option without one; other messages as CLI11 words them.
inline std::string describe(const CLI::ParseError& e) {
  std::string text = e.what();
  size_t colon = text.find(": ");
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && colon != std::string::npos &&
      text.find(" required ", colon) != std::string::npos)
    return text.substr(0, colon) + " needs a value";
  return text;
}

// What a command line came to: go on, print help, or refuse it.
struct Parsed {
  enum class Kind { kRun, kHelp, kError } kind = Kind::kRun;
  std::string text;  // kHelp: the help text; kError: what is wrong (one line)
};

// Parses `args` (argv without argv[0]) without printing anything, for
// parsers that are tested on their own.
inline Parsed tryParse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector back to front
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    return {Parsed::Kind::kHelp, app.help()};
  } catch (const CLI::ParseError& e) {
    return {Parsed::Kind::kError, describe(e)};
  }
  std::vector<std::string> extra = app.remaining();
  if (!extra.empty()) return {Parsed::Kind::kError, "unknown argument '" + extra.front() + "'"};
  return {};
}

// tryParse, then what the tool does about it. nullopt: go on. Otherwise the
// tool exits with the value returned: 0 after printing --help to stdout, or
// kExitUsage after printing the one usage-error line.
inline std::optional<int> parse(CLI::App& app, std::vector<std::string> args) {
  Parsed parsed = tryParse(app, std::move(args));
  if (parsed.kind == Parsed::Kind::kHelp) {
    std::fputs(parsed.text.c_str(), stdout);
    return 0;
  }
  if (parsed.kind == Parsed::Kind::kError) return usageError(app.get_name(), parsed.text);
  return std::nullopt;
}

inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  return parse(app, std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc));
}

}  // namespace ncclnet::cli
