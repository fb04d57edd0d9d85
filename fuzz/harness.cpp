// The checks each fuzz target applies to one input (see harness.h).
#include "harness.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dpl/compiler/compile.h"
#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"

namespace dpl::fuzz {

namespace {

// In a directory that does not exist, so that relative imports in the input find nothing on this machine.
constexpr const char* kRulesPath = "/nonexistent-dpl-fuzz/input.dpl";
constexpr const char* kRelaxPath = "/nonexistent-dpl-fuzz/input.relax";

// "" when `diags` holds at least one error and every error points into a source file; also renders them all,
// which exercises the caret printer on whatever locations the front end produced.
std::string check_failure_reported(const DiagnosticEngine& diags, std::string_view stage) {
  if (!diags.has_errors()) return std::string(stage) + " failed without reporting an error";
  for (const Diagnostic& diag : diags.diagnostics()) {
    if (diag.severity == Severity::Error && !diag.loc.valid()) {
      return std::string(stage) + " reported an error without a location: " + diag.message;
    }
  }
  if (diags.str().empty()) return std::string(stage) + " reported errors that print as nothing";
  return "";
}

// A module read from text, with the source its diagnostics point into.
struct ReadModule {
  std::unique_ptr<SourceFile> source;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;
};

std::unique_ptr<ReadModule> read(std::string_view text) {
  auto read = std::make_unique<ReadModule>();
  read->source = std::make_unique<SourceFile>(kRelaxPath, std::string(text));
  read->module = read_module(*read->source, read->diags);
  return read;
}

// A well-formed module: it verifies, and it prints to text that reads back to an equal module.
std::string check_well_formed(const Module& module) {
  if (std::string problem = verify(module); !problem.empty()) return "the module does not verify: " + problem;
  const std::unique_ptr<ReadModule> again = read(print_module(module));
  if (again->module == nullptr) return "the printed module does not read back:\n" + again->diags.str();
  if (EqualityResult equal = structurally_equal(module, *again->module); !equal) {
    return "the printed module reads back different: " + equal.difference;
  }
  return "";
}

// The names of the functions `source` defines as decision trees or multi-root rules' functions (`int NAME(dpl::
// Rewriter& rewriter, dpl::Node* root) {`, `bool NAME(...) {` at the start of a line), and those it only declares
// (the same ending in `;`).
void tree_functions(const std::string& source, std::map<std::string, int>& defined,
                    std::map<std::string, int>& declared) {
  static const std::string kSignature = "(dpl::Rewriter& rewriter, dpl::Node* root)";
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    const std::string_view line(source.data() + start, end - start);
    const size_t signature = line.find(kSignature);
    // Decision trees return int, multi-root rules' functions bool.
    const size_t name_start = line.starts_with("int ") ? 4 : line.starts_with("bool ") ? 5 : 0;
    if (name_start != 0 && signature != std::string_view::npos) {
      const std::string name(line.substr(name_start, signature - name_start));
      const std::string_view rest = line.substr(signature + kSignature.size());
      if (rest == " {") ++defined[name];
      if (rest == ";") ++declared[name];
    }
    start = end + 1;
  }
}

// The source split into three parts (dplc --parts 3) defines the same functions as the single file, each once,
// and the first part declares every function another part defines.
std::string check_parts(const compiler::AstFile& ast, const compiler::EmittedCpp& single) {
  compiler::EmitOptions options;
  options.parts = 3;
  const compiler::EmittedCpp split = compiler::emit_cpp(ast, options);
  if (split.parts.size() != 2) return "--parts 3 gave " + std::to_string(split.parts.size() + 1) + " parts";
  std::map<std::string, int> single_defined, single_declared, defined, first_declared, other_declared;
  tree_functions(single.source, single_defined, single_declared);
  tree_functions(split.source, defined, first_declared);
  std::map<std::string, int> first_defined = defined;
  for (const compiler::EmittedSource& part : split.parts) tree_functions(part.text, defined, other_declared);
  if (defined != single_defined) return "--parts 3 defines other functions than the single file";
  for (const auto& [name, count] : defined) {
    if (count != 1) return "--parts 3 defines " + name + " " + std::to_string(count) + " times";
    if (first_defined.count(name) == 0 && first_declared.count(name) == 0) {
      return "--parts 3 does not declare " + name + " in the first part";
    }
  }
  return "";
}

}  // namespace

std::string check_rules_input(std::string_view text) {
  const SourceFile source(kRulesPath, std::string(text));
  DiagnosticEngine diags;
  const compiler::CompileResult result = compiler::compile(source, diags);
  if (!result.ok) return check_failure_reported(diags, "compiling the rules");
  if (!result.cpp.has_value() || result.cpp->header.empty() || result.cpp->source.empty()) {
    return "the rules compiled without errors but no C++ was emitted";
  }
  return check_parts(*result.ast, *result.cpp);
}

std::string check_relax_input(std::string_view text) {
  const std::unique_ptr<ReadModule> read_result = read(text);
  if (read_result->module == nullptr) return check_failure_reported(read_result->diags, "reading the module");
  if (read_result->diags.has_errors()) return "the module was read although errors were reported";
  return check_well_formed(*read_result->module);
}

std::string check_pass_input(std::string_view bytes) {
  const std::vector<const PassDef*> passes = PassRegistry::all();
  if (bytes.empty() || passes.empty()) return "";
  const PassDef& pass = *passes[static_cast<unsigned char>(bytes[0]) % passes.size()];
  const std::unique_ptr<ReadModule> read_result = read(bytes.substr(1));
  if (read_result->module == nullptr) return check_failure_reported(read_result->diags, "reading the module");
  RunOptions options;
  options.verify_each = true;
  const PassResult result = run_pass(pass, *read_result->module, options);
  const std::string context = "pass " + std::string(pass.name) + ": ";
  if (!result.ok() && result.error.find("rewrite budget exhausted") == std::string::npos) {
    return context + result.error;
  }
  if (std::string problem = check_well_formed(*read_result->module); !problem.empty()) {
    return context + "after the pass, " + problem;
  }
  return "";
}

}  // namespace dpl::fuzz
