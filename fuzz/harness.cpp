// The checks each fuzz target applies to one input (see harness.h).
#include "harness.h"

#include <memory>
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

}  // namespace

std::string check_rules_input(std::string_view text) {
  const SourceFile source(kRulesPath, std::string(text));
  DiagnosticEngine diags;
  const compiler::CompileResult result = compiler::compile(source, diags);
  if (!result.ok) return check_failure_reported(diags, "compiling the rules");
  if (!result.cpp.has_value() || result.cpp->header.empty() || result.cpp->source.empty()) {
    return "the rules compiled without errors but no C++ was emitted";
  }
  return "";
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
