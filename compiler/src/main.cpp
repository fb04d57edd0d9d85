// dplc, the command-line front end: compiles a .dpl rule file into <stem>.dpl.h / <stem>.dpl.cpp.
#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "dpl/compiler/compile.h"
#include "dpl/compiler/rule_tests.h"
#include "dpl/compiler/verify.h"
#include "dpl/rewrite/natives.h"
#include "dpl/support/file_output.h"

namespace {

namespace fs = std::filesystem;

constexpr int kExitOk = 0;
constexpr int kExitInputError = 1;
constexpr int kExitUsage = 2;

// `name` or `outer::inner`: C++ identifiers joined by `::`.
bool is_namespace_name(std::string_view name) {
  size_t start = 0;
  while (true) {
    size_t end = name.find("::", start);
    std::string_view part = name.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0]))) return false;
    for (char c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
    if (end == std::string_view::npos) return true;
    start = end + 2;
  }
}

// Makefile syntax: spaces (and `#`, `$`) in paths are escaped.
std::string make_escape(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dplc: compiles .dpl rewrite rules into a C++ pass library", "dplc"};
  std::string input;
  std::string output_dir;
  std::string namespace_name = "dpl_passes";
  std::string depfile;
  std::string emit;
  bool check_only = false;
  bool verify = false;
  bool run_tests = false;
  std::string tests_manifest;
  std::vector<std::string> natives_paths;
  size_t parts = 1;
  app.add_option("rules", input, "The .dpl rule file")->required();
  app.add_option("-o,--output", output_dir, "Directory for <stem>.dpl.h and <stem>.dpl.cpp");
  app.add_option("--namespace", namespace_name, "C++ namespace of the generated pass functions")->capture_default_str();
  app.add_option("--parts", parts,
                 "Split <stem>.dpl.cpp into N files (<stem>.dpl.part2.cpp ...) that compile in parallel: the "
                 "decision trees of large rule files spread over them")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--depfile", depfile, "Also write a Makefile-syntax depfile listing the inputs");
  app.add_option("--emit", emit, "Print instead of writing files: ast, cpp, or plan (each pass's decision tree)")
      ->check(CLI::IsMember({"ast", "cpp", "plan"}));
  app.add_flag("--check", check_only, "Only check the rules; write nothing");
  app.add_flag("--verify", verify,
               "Test each rule numerically on small instances of its left-hand side; write nothing");
  app.add_flag("--test", run_tests, "Run the file's test declarations with the rule interpreter; write nothing");
  app.add_option("--tests-manifest", tests_manifest,
                 "Also write the file's tests (absolute paths) for the compiled-pass test runner");
  app.add_option("--natives", natives_paths,
                 "With --test or --verify: load a natives library (dpl_add_natives_library) whose functions the "
                 "file's extern predicates and rewriters name; repeatable")
      ->allow_extra_args(false)
      ->type_name("LIB.so");
  try {
    app.parse(argc, argv);
    if (!check_only && !verify && !run_tests && emit.empty() && output_dir.empty()) {
      throw CLI::RequiredError("-o DIR (or --check, or --emit)");
    }
    if (!depfile.empty() && output_dir.empty()) throw CLI::ValidationError("--depfile needs -o DIR");
    if (!tests_manifest.empty() && output_dir.empty()) throw CLI::ValidationError("--tests-manifest needs -o DIR");
    if (!natives_paths.empty() && !run_tests && !verify) {
      throw CLI::ValidationError("--natives needs --test or --verify (compiled passes have their natives compiled in)");
    }
    if (!is_namespace_name(namespace_name)) {
      throw CLI::ValidationError("--namespace: '" + namespace_name + "' is not a C++ namespace name");
    }
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::cerr << "dplc: " << e.what() << "\nRun 'dplc --help' for usage.\n";
    return kExitUsage;
  }

  if (std::string error; !dpl::load_natives(natives_paths, error)) {
    std::cerr << "dplc: error: " << error << "\n";
    return kExitInputError;
  }
  if (run_tests) {
    return dpl::compiler::run_rule_tests_interpreted(input, std::cout, std::cerr) ? kExitOk : kExitInputError;
  }
  if (verify) {
    return dpl::compiler::verify_rules(input, std::cout, std::cerr).ok ? kExitOk : kExitInputError;
  }

  std::string read_error;
  std::unique_ptr<dpl::SourceFile> source = dpl::SourceFile::load(input, read_error);
  if (source == nullptr) {
    std::cerr << "dplc: error: " << read_error << "\n";
    return kExitInputError;
  }

  dpl::compiler::CompileOptions options;
  options.emit.namespace_name = namespace_name;
  options.emit.parts = parts;
  options.generate = !check_only && emit != "ast" && emit != "plan";
  dpl::DiagnosticEngine diags;
  dpl::compiler::CompileResult result = dpl::compiler::compile(*source, diags, options);
  diags.print(std::cerr);
  if (!result.ok) return kExitInputError;

  if (emit == "ast") {
    std::cout << dpl::compiler::dump_ast(*result.ast);
    return kExitOk;
  }
  if (check_only) return kExitOk;
  if (emit == "plan") {
    std::cout << dpl::compiler::emit_plan(*result.ast);
    return kExitOk;
  }
  if (emit == "cpp") {
    std::cout << "// ---- " << result.cpp->header_name << "\n" << result.cpp->header;
    std::cout << "// ---- " << result.cpp->source_name << "\n" << result.cpp->source;
    for (const dpl::compiler::EmittedSource& part : result.cpp->parts) {
      std::cout << "// ---- " << part.name << "\n" << part.text;
    }
    return kExitOk;
  }

  std::error_code code;
  fs::create_directories(output_dir, code);
  if (code) {
    std::cerr << "dplc: error: cannot create " << output_dir << ": " << code.message() << "\n";
    return kExitInputError;
  }
  const fs::path header_path = fs::path(output_dir) / result.cpp->header_name;
  const fs::path source_path = fs::path(output_dir) / result.cpp->source_name;
  std::string write_error;
  dpl::StagedOutputs outputs;
  bool written = outputs.stage(header_path.string(), result.cpp->header, write_error) &&
                 outputs.stage(source_path.string(), result.cpp->source, write_error);
  std::vector<fs::path> targets = {header_path, source_path};
  for (const dpl::compiler::EmittedSource& part : result.cpp->parts) {
    targets.push_back(fs::path(output_dir) / part.name);
    written = written && outputs.stage(targets.back().string(), part.text, write_error);
  }
  if (written && !depfile.empty()) {
    // Absolute paths: the build tool may run in another directory than dplc did.
    std::string rule;
    for (const fs::path& target : targets) {
      rule += (rule.empty() ? "" : " ") + make_escape(fs::absolute(target).string());
    }
    rule += ":";
    for (const std::string& dependency : result.inputs) rule += " " + make_escape(fs::absolute(dependency).string());
    written = outputs.stage(depfile, rule + "\n", write_error);
  }
  if (written && !tests_manifest.empty()) {
    std::string manifest;
    written = dpl::format_rule_test_manifest(dpl::compiler::rule_test_cases(*result.ast), manifest, write_error) &&
              outputs.stage(tests_manifest, manifest, write_error);
  }
  written = written && outputs.commit(write_error);
  if (!written) {
    std::cerr << "dplc: error: " << write_error << "\n";
    return kExitInputError;
  }
  return kExitOk;
}
