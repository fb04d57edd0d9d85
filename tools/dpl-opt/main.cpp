// dpl-opt: applies the compiled passes linked into it to TVMScript Relax files, lists them, compares two files.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "dpl/compiler/rule_interpreter.h"
#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/natives.h"
#include "dpl/support/diagnostics.h"
#include "dpl/support/file_output.h"
#include "dpl/support/shared_library.h"
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
  for (const dpl::PipelineDef* pipeline : dpl::PassRegistry::all_pipelines()) {
    names += names.empty() ? "" : ", ";
    names += pipeline->name;
  }
  return names.empty() ? "(none linked in)" : names;
}

// Resolves every requested name before any work is done, so a typo costs nothing. A pipeline name stands for
// its passes, in order.
bool resolve_passes(const std::vector<std::string>& names, std::vector<const dpl::PassDef*>& passes) {
  for (const std::string& name : names) {
    const dpl::PassDef* pass = name.empty() ? nullptr : dpl::PassRegistry::find(name);
    if (pass != nullptr) {
      passes.push_back(pass);
      continue;
    }
    const dpl::PipelineDef* pipeline = name.empty() ? nullptr : dpl::PassRegistry::find_pipeline(name);
    if (pipeline == nullptr) {
      print_error(fmt::format("unknown pass or pipeline '{}'; known: {}", name, known_pass_names()));
      return false;
    }
    for (std::string_view step : pipeline->passes) {
      const dpl::PassDef* step_pass = dpl::PassRegistry::find(step);
      if (step_pass == nullptr) {
        print_error(fmt::format("pipeline '{}' ({}) names pass '{}', which is not linked in", name,
                                pipeline->source, step));
        return false;
      }
      passes.push_back(step_pass);
    }
  }
  return true;
}

// Loads pass plugins built with dpl_add_pass_library(... MODULE). Their passes register themselves into this
// process's registry from static initializers as dlopen runs them; the plugin resolves the runtime's symbols from
// dpl-opt (built with ENABLE_EXPORTS), so there is one registry. Plugins stay loaded.
size_t registered_count() { return dpl::PassRegistry::all().size() + dpl::PassRegistry::all_pipelines().size(); }

bool load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    const size_t registered_before = registered_count();
    std::string error;
    if (!dpl::load_shared_library(path, error)) {
      print_error(fmt::format("cannot load plugin: {}", error));
      return false;
    }
    if (registered_count() == registered_before) {
      print_error(fmt::format("plugin {} registers no new pass or pipeline (build it with dpl_add_pass_library("
                              "<target> RULES ... MODULE); one already known by the same name is not registered "
                              "again)",
                              path));
      return false;
    }
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
  const std::vector<const dpl::PipelineDef*> pipelines = dpl::PassRegistry::all_pipelines();
  if (pipelines.empty()) return;
  size_t pipeline_width = 8;  // "pipeline"
  for (const dpl::PipelineDef* pipeline : pipelines) pipeline_width = std::max(pipeline_width, pipeline->name.size());
  std::cout << fmt::format("\n{:<{}}  passes\n", "pipeline", pipeline_width);
  for (const dpl::PipelineDef* pipeline : pipelines) {
    std::cout << fmt::format("{:<{}}  {}{}\n", pipeline->name, pipeline_width, fmt::join(pipeline->passes, ", "),
                             pipeline->description.empty() ? "" : fmt::format("  ({})", pipeline->description));
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

struct RewriteOptions {
  std::string input;
  std::string output;
  std::string dot_output;  // --dot: the before/after picture
  std::vector<std::string> pass_names;
  std::string rules;  // --rules FILE.dpl: run its passes with the rule interpreter
  bool stats = false;
  bool verify_each = false;
  bool print_after_each = false;  // the module as TVMScript on stderr after every pass
};

int rewrite_file(const RewriteOptions& options) {
  std::vector<const dpl::PassDef*> passes;
  std::unique_ptr<dpl::compiler::LoadedRules> interpreted;  // --rules: owns the passes it resolves to
  if (!options.rules.empty()) {
    std::string error;
    interpreted = dpl::compiler::load_rules(options.rules, std::cerr, error);
    if (interpreted == nullptr || !interpreted->interpreter->resolve(options.pass_names, passes, error)) {
      if (!error.empty()) print_error(error);
      return kInputError;
    }
  } else if (!resolve_passes(options.pass_names, passes)) {
    return kInputError;
  }
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
    if (options.print_after_each) {
      std::cerr << fmt::format("# ---- after pass {} ----\n", pass->name) << dpl::print_module(*module);
    }
    if (!result.ok()) {
      print_error(result.error);
      return kInputError;
    }
  }

  if (before != nullptr) {
    std::string title = std::filesystem::path(options.input).filename().string();
    for (size_t i = 0; i < options.pass_names.size(); ++i) title += (i == 0 ? ": " : ", ") + options.pass_names[i];
    std::string error;
    if (!dpl::write_file_atomically(options.dot_output, dpl::rewrite_to_dot(*before, *module, title), error)) {
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
  if (!dpl::write_file_atomically(options.output, text, error)) {
    print_error(error);
    return kInputError;
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dpl-opt: apply compiled dpl passes to a TVMScript Relax file.\n"
      "Exit codes: 0 success, 1 input error (bad IR, unknown pass, pass failure, files differ, plugin or natives "
      "library that cannot be loaded or registers nothing), 2 usage error."};
  RewriteOptions options;
  std::vector<std::string> equal_files;
  bool list = false;

  app.add_option("input", options.input, "Relax file to rewrite (TVMScript text)");
  app.add_option("-p,--passes", options.pass_names,
                 "Passes or pipelines to run, in order (comma-separated or repeated)")
      ->delimiter(',')
      ->allow_extra_args(false)  // one word per -p: the input file after it is not a pass name
      ->type_name("PASS[,PASS...]");
  app.add_option("--rules", options.rules,
                 "Run the passes of this .dpl file with the rule interpreter (no C++ compiler needed); -p picks "
                 "passes or pipelines of the file, by default all its passes in order")
      ->type_name("RULES.dpl");
  app.add_option("-o,--output", options.output, "Write the result here (atomically) instead of stdout");
  app.add_option("--dot", options.dot_output,
                 "Also write a Graphviz picture of the input before and after the passes, changed nodes highlighted")
      ->type_name("OUT.dot");
  app.add_flag("--stats", options.stats, "Print per-pass statistics (rules fired, nodes visited, time) to stderr");
  app.add_flag("--verify-each", options.verify_each, "Verify the IR after every rewrite");
  app.add_flag("--print-after-each", options.print_after_each,
               "Print the module as TVMScript to stderr after every pass, each headed '# ---- after pass NAME ----' "
               "(stdout keeps only the final result)");
  std::vector<std::string> plugin_paths;
  app.add_option("--load", plugin_paths,
                 "Load a pass plugin (a MODULE library from dpl_add_pass_library) before anything else; repeatable")
      ->allow_extra_args(false)
      ->type_name("PLUGIN.so");
  std::vector<std::string> natives_paths;
  app.add_option("--natives", natives_paths,
                 "With --rules: load a natives library (dpl_add_natives_library) whose functions the file's extern "
                 "predicates and rewriters name; repeatable")
      ->allow_extra_args(false)
      ->type_name("LIB.so");
  auto* list_flag = app.add_flag("--list-passes", list, "List the linked and loaded passes (name, source, rules, description) and pipelines");
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

  const bool rewriting = !options.input.empty() || !options.pass_names.empty() || !options.rules.empty() || !options.output.empty() ||
                         !options.dot_output.empty() || options.stats || options.verify_each ||
                         options.print_after_each;
  if ((list || !equal_files.empty()) && rewriting) {
    print_error("--list-passes and --equal take no input file or rewrite options");
    return kUsageError;
  }
  if (!natives_paths.empty() && options.rules.empty()) {
    print_error("--natives needs --rules (compiled passes have their natives compiled in)");
    return kUsageError;
  }
  if (!load_plugins(plugin_paths)) return kInputError;
  // Natives libraries (dpl_add_natives_library()) for the externs of --rules files.
  if (std::string error; !dpl::load_natives(natives_paths, error)) {
    print_error(error);
    return kInputError;
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
