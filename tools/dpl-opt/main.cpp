// dpl-opt: applies the compiled passes linked into it to TVMScript Relax files, lists them, compares two files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/dot.h"
#include "dpl/text/tvmscript.h"

namespace {

enum ExitCode : int { kOk = 0, kInputError = 1, kUsageError = 2 };

void print_error(const std::string& message) { std::cerr << "dpl-opt: error: " << message << '\n'; }

// Reads and type-checks one file; on failure prints the diagnostics (file:line:col, source line, caret).
std::unique_ptr<dpl::Module> read_relax(const std::string& path) {
  std::string error;
  std::unique_ptr<dpl::SourceFile> source = dpl::SourceFile::load(path, error);
  if (source == nullptr) {
    print_error(error);
    return nullptr;
  }
  dpl::DiagnosticEngine diags;
  std::unique_ptr<dpl::Module> module = dpl::read_module(*source, diags);
  diags.print(std::cerr);
  return module;
}

std::string known_pass_names() {
  std::string names;
  for (const dpl::PassDef* pass : dpl::PassRegistry::all()) {
    names += names.empty() ? "" : ", ";
    names += pass->name;
  }
  return names.empty() ? "(none linked in)" : names;
}

// Resolves every requested name before any work is done, so a typo costs nothing.
bool resolve_passes(const std::vector<std::string>& names, std::vector<const dpl::PassDef*>& passes) {
  for (const std::string& name : names) {
    const dpl::PassDef* pass = name.empty() ? nullptr : dpl::PassRegistry::find(name);
    if (pass == nullptr) {
      print_error(fmt::format("unknown pass '{}'; known passes: {}", name, known_pass_names()));
      return false;
    }
    passes.push_back(pass);
  }
  return true;
}

void list_passes() {
  const std::vector<const dpl::PassDef*> passes = dpl::PassRegistry::all();
  if (passes.empty()) {
    std::cout << "no passes are linked into dpl-opt\n";
    return;
  }
  size_t name_width = 4;    // "pass"
  size_t source_width = 6;  // "source"
  for (const dpl::PassDef* pass : passes) {
    name_width = std::max(name_width, pass->name.size());
    source_width = std::max(source_width, pass->source.size());
  }
  std::cout << fmt::format("{:<{}}  {:<{}}  {:>5}  {}\n", "pass", name_width, "source", source_width, "rules",
                           "description");
  for (const dpl::PassDef* pass : passes) {
    std::cout << fmt::format("{:<{}}  {:<{}}  {:>5}  {}\n", pass->name, name_width, pass->source, source_width,
                             pass->rules.size(), pass->description);
  }
}

int compare_files(const std::vector<std::string>& paths) {
  std::unique_ptr<dpl::Module> a = read_relax(paths[0]);
  std::unique_ptr<dpl::Module> b = read_relax(paths[1]);
  if (a == nullptr || b == nullptr) return kInputError;
  const dpl::EqualityResult result = dpl::structurally_equal(*a, *b);
  if (result.equal) {
    std::cout << "equal\n";
    return kOk;
  }
  std::cout << fmt::format("not equal: {}\n", result.difference);
  return kInputError;
}

bool write_all(int fd, const std::string& text) {
  for (size_t written = 0; written < text.size();) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

// Writes `text` to a temporary file beside `path` and renames it over `path`: readers never see half a file and
// a failure leaves `path` untouched. A symbolic link is followed (the file it names is replaced, the link stays)
// and an existing file keeps its permissions. Anything but a regular file (/dev/null, a pipe) is written in place.
bool write_output(const std::string& path, const std::string& text, std::string& error) {
  struct stat existing {};
  const bool exists = stat(path.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
    const bool ok = fd >= 0 && write_all(fd, text);
    if (!ok) error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    if (fd >= 0 && close(fd) != 0 && ok) {
      error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
      return false;
    }
    return ok;
  }

  std::string target = path;
  if (exists) {
    std::error_code failed;
    std::filesystem::path resolved = std::filesystem::canonical(path, failed);
    if (!failed) target = resolved.string();
  }
  std::string temp = target + ".tmp.XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) {
    error = fmt::format("cannot create a temporary file for {}: {}", path, std::strerror(errno));
    return false;
  }
  mode_t mode = existing.st_mode & 07777;
  if (!exists) {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  bool ok = fchmod(fd, mode) == 0 && write_all(fd, text);
  ok = (close(fd) == 0) && ok;
  ok = ok && std::rename(temp.c_str(), target.c_str()) == 0;
  if (!ok) {
    error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    std::remove(temp.c_str());
  }
  return ok;
}

struct RewriteOptions {
  std::string input;
  std::string output;
  std::string dot_output;  // --dot: the before/after picture
  std::vector<std::string> pass_names;
  bool stats = false;
  bool verify_each = false;
};

int rewrite_file(const RewriteOptions& options) {
  std::vector<const dpl::PassDef*> passes;
  if (!resolve_passes(options.pass_names, passes)) return kInputError;
  std::unique_ptr<dpl::Module> module = read_relax(options.input);
  if (module == nullptr) return kInputError;
  // The passes rewrite `module` in place; the picture's "before" half is a second reading of the input.
  std::unique_ptr<dpl::Module> before;
  if (!options.dot_output.empty()) {
    before = read_relax(options.input);
    if (before == nullptr) return kInputError;
  }

  dpl::RunOptions run_options;
  run_options.verify_each = options.verify_each;
  for (const dpl::PassDef* pass : passes) {
    const dpl::PassResult result = dpl::run_pass(*pass, *module, run_options);
    if (options.stats) std::cerr << dpl::format_stats(result.stats, pass->rules);
    if (!result.ok()) {
      print_error(result.error);
      return kInputError;
    }
  }

  if (before != nullptr) {
    std::string title = std::filesystem::path(options.input).filename().string();
    for (size_t i = 0; i < options.pass_names.size(); ++i) title += (i == 0 ? ": " : ", ") + options.pass_names[i];
    std::string error;
    if (!write_output(options.dot_output, dpl::rewrite_to_dot(*before, *module, title), error)) {
      print_error(error);
      return kInputError;
    }
  }

  const std::string text = dpl::print_module(*module);
  if (options.output.empty()) {
    std::cout << text;
    return kOk;
  }
  std::string error;
  if (!write_output(options.output, text, error)) {
    print_error(error);
    return kInputError;
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dpl-opt: apply compiled dpl passes to a TVMScript Relax file.\n"
      "Exit codes: 0 success, 1 input error (bad IR, unknown pass, pass failure, files differ), 2 usage error."};
  RewriteOptions options;
  std::vector<std::string> equal_files;
  bool list = false;

  app.add_option("input", options.input, "Relax file to rewrite (TVMScript text)");
  app.add_option("-p,--passes", options.pass_names, "Passes to run, in order (comma-separated or repeated)")
      ->delimiter(',')
      ->allow_extra_args(false)  // one word per -p: the input file after it is not a pass name
      ->type_name("PASS[,PASS...]");
  app.add_option("-o,--output", options.output, "Write the result here (atomically) instead of stdout");
  app.add_option("--dot", options.dot_output,
                 "Also write a Graphviz picture of the input before and after the passes, changed nodes highlighted")
      ->type_name("OUT.dot");
  app.add_flag("--stats", options.stats, "Print per-pass statistics (rules fired, nodes visited, time) to stderr");
  app.add_flag("--verify-each", options.verify_each, "Verify the IR after every rewrite");
  auto* list_flag = app.add_flag("--list-passes", list, "List the linked passes: name, source, rules, description");
  auto* equal_option =
      app.add_option("--equal", equal_files, "Exit 0 when the two files are structurally equal, else 1 and say where")
          ->expected(2)
          ->type_name("A.relax B.relax");
  list_flag->excludes(equal_option);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsageError;
  }

  const bool rewriting = !options.input.empty() || !options.pass_names.empty() || !options.output.empty() ||
                         !options.dot_output.empty() || options.stats || options.verify_each;
  if ((list || !equal_files.empty()) && rewriting) {
    print_error("--list-passes and --equal take no input file or rewrite options");
    return kUsageError;
  }
  if (list) {
    list_passes();
    return kOk;
  }
  if (!equal_files.empty()) return compare_files(equal_files);
  if (options.input.empty()) {
    print_error("no input file (try --help)");
    return kUsageError;
  }
  return rewrite_file(options);
}
