// dplc --test: runs a .dpl file's `test` declarations with the rule interpreter (rule_tests.h).
#include "dpl/compiler/rule_tests.h"

#include <algorithm>

#include "dpl/compiler/compile.h"
#include "dpl/compiler/rule_interpreter.h"

namespace dpl::compiler {

namespace {

// The passes `test` runs, by name: the pass itself, or the passes of its pipeline.
std::vector<std::string> pass_names(const AstFile& file, const RuleTestCase& test) {
  if (!test.target_is_pipeline) return {test.target};
  for (const PipelineDecl& pipeline : file.pipelines) {
    if (pipeline.name == test.target) return pipeline.passes;
  }
  return {};
}

// Why the interpreter cannot run `test`'s passes: the first rule of them it cannot interpret, else `fallback`
// (what stopped the interpreter elsewhere in the file).
std::string why_not_interpreted(const AstFile& file, const RuleTestCase& test, const std::string& fallback) {
  for (const std::string& name : pass_names(file, test)) {
    auto pass = std::find_if(file.passes.begin(), file.passes.end(), [&](const Pass& p) { return p.name == name; });
    if (pass == file.passes.end()) continue;
    for (const Rule& rule : pass->rules) {
      if (std::optional<std::string> reason = RuleInterpreter::unsupported_reason(rule)) {
        return "the rule interpreter cannot run pass " + name + ": rule '" + rule.name + "': " + *reason;
      }
    }
  }
  return "the rule interpreter cannot run " + file.basename + ": " + fallback;
}

}  // namespace

std::vector<RuleTestCase> rule_test_cases(const AstFile& file) {
  std::vector<RuleTestCase> cases;
  for (const RuleTest& test : file.tests) {
    RuleTestCase test_case;
    test_case.name = test.name;
    test_case.target = test.target;
    test_case.target_is_pipeline = test.target_is_pipeline;
    test_case.input_path = test.input_path;
    test_case.expect_path = test.expect_unchanged ? "" : test.expect_path;
    test_case.seed = test.seed;
    test_case.tolerance = test.tolerance;
    test_case.numbers_differ = test.numbers_differ;
    test_case.dims = test.dims;
    cases.push_back(std::move(test_case));
  }
  return cases;
}

bool run_rule_tests_interpreted(const std::string& path, std::ostream& out, std::ostream& messages) {
  std::unique_ptr<CheckedFile> checked = check_file(path, messages);
  if (checked == nullptr) return false;
  const AstFile& file = *checked->compiled.ast;
  if (file.tests.empty()) {
    messages << "dplc: error: " << path << " has no tests (test NAME { input \"...\"; expect \"...\"; })\n";
    return false;
  }
  DiagnosticEngine interpreter_diags;
  std::unique_ptr<RuleInterpreter> interpreter = RuleInterpreter::create(file, interpreter_diags);
  std::string not_interpreted =
      interpreter_diags.diagnostics().empty() ? "" : interpreter_diags.diagnostics().front().message;

  std::vector<RuleTestCase> tests = rule_test_cases(file);
  auto passes_for = [&](const RuleTestCase& test) -> RunPasses {
    if (interpreter == nullptr) {
      std::string why = why_not_interpreted(file, test, not_interpreted);
      return [why](Module&) { return why; };
    }
    std::vector<const PassDef*> passes = interpreter->resolve(test.target);
    return [passes](Module& module) { return run_passes_verified(passes, module); };
  };
  return run_rule_tests(tests, passes_for, out) == 0;
}

}  // namespace dpl::compiler
