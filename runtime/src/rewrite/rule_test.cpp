// Rule tests: run a pass on an input graph, compare with the expectation and the numbers (rule_test.h).
#include "dpl/rewrite/rule_test.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "dpl/interp/equivalence.h"
#include "dpl/ir/analysis.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"

namespace dpl {

namespace {

constexpr std::string_view kManifestHeader =
    "# dpl rule tests: name, kind, target, input, expect, seed, tolerance, numbers, dims";

// Reads a TVMScript file; null with the reason (the reader's diagnostics) in `error`.
std::unique_ptr<Module> read_ir(const std::string& path, std::string& error) {
  std::unique_ptr<SourceFile> source = SourceFile::load(path, error);
  if (source == nullptr) return nullptr;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = read_module(*source, diags);
  if (module == nullptr) error = "cannot read " + path + ":\n" + diags.str();
  return module;
}

// What evaluating the functions of `before` and their namesakes in `after` showed: every public function (it
// must still exist) and every private one the pass kept (a lone `@R.function(private=True)`, say).
struct NumericCheck {
  std::string problem;           // evaluation failed, or a function is missing after the pass
  bool differs = false;          // some output is outside the tolerance
  std::string worst;             // the comparison with the largest error
  double max_abs_error = 0.0;
};

// A symbol in `function`'s parameter types that `dims` gives no value (random inputs cannot be drawn), if any.
std::optional<std::string> symbol_without_value(const Function& function,
                                                const std::map<std::string, int64_t, std::less<>>& dims) {
  for (const Node* param : function.params()) {
    const TypeRef type = param->type();
    if (!type->is_tensor() || !type->has_shape()) continue;
    for (const Dim dim : type->dims()) {
      for (const Dim symbol : dim.symbols()) {
        if (!dims.contains(symbol.symbol_name())) return std::string(symbol.symbol_name());
      }
    }
  }
  return std::nullopt;
}

NumericCheck check_numbers(const Module& before, const Module& after, const RuleTestCase& test) {
  NumericCheck check;
  std::optional<Tolerance> tolerance;
  if (test.tolerance) tolerance = Tolerance{*test.tolerance, *test.tolerance};
  for (const std::unique_ptr<Function>& function : before.functions()) {
    const Function* rewritten = after.find(function->name());
    if (rewritten == nullptr && function->is_private()) continue;
    if (rewritten == nullptr) {
      check.problem = "function " + function->name() + " is gone after the pass";
      return check;
    }
    InputOptions inputs;
    inputs.dims = test.dims;
    EquivalenceResult result =
        compare_on_random_inputs(&before, *function, &after, *rewritten, test.seed, inputs, tolerance);
    if (result.kind != EquivalenceResult::Kind::Equal && result.kind != EquivalenceResult::Kind::Different) {
      check.problem = function->name() + ": " + result.str();
      if (result.kind == EquivalenceResult::Kind::InputsFail) {
        if (std::optional<std::string> symbol = symbol_without_value(*function, test.dims)) {
          check.problem += "; give it a value in the test: `dims " + *symbol + " = N;`";
        }
      }
      return check;
    }
    check.differs = check.differs || !result.equal();
    const Comparison& worst = result.comparison.worst;
    double error = worst.mismatch.empty() ? worst.max_abs_error : std::numeric_limits<double>::infinity();
    if (check.worst.empty() || error > check.max_abs_error) {
      check.max_abs_error = error;
      check.worst = function->name() + " " + result.comparison.str();
    }
  }
  if (check.worst.empty()) check.problem = "no function of the input is left to evaluate";
  return check;
}

std::string join(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t end = line.find(separator, start);
    fields.push_back(line.substr(start, end - start));
    if (end == std::string::npos) return fields;
    start = end + 1;
  }
}

}  // namespace

std::string run_passes_verified(std::span<const PassDef* const> passes, Module& module) {
  RunOptions options;
  options.verify_each = true;
  for (const PassDef* pass : passes) {
    PassResult result = run_pass(*pass, module, options);
    if (!result.ok()) return "pass " + std::string(pass->name) + ": " + result.error;
  }
  return "";
}

RuleTestResult run_rule_test(const RuleTestCase& test, const RunPasses& run) {
  std::string error;
  std::unique_ptr<Module> original = read_ir(test.input_path, error);
  std::unique_ptr<Module> rewritten = original != nullptr ? read_ir(test.input_path, error) : nullptr;
  std::unique_ptr<Module> expected =
      test.expect_path.empty() || rewritten == nullptr ? nullptr : read_ir(test.expect_path, error);
  if (rewritten == nullptr || (!test.expect_path.empty() && expected == nullptr)) return {false, error};

  if (std::string failure = run(*rewritten); !failure.empty()) return {false, failure};
  std::vector<std::string> failures;
  const Module& want = expected != nullptr ? *expected : *original;
  if (EqualityResult equal = structurally_equal(*rewritten, want); !equal) {
    failures.push_back(std::string(expected != nullptr ? "the result differs from the expectation: "
                                                       : "the pass changed the input (expect unchanged): ") +
                       equal.difference);
  }
  NumericCheck numbers = check_numbers(*original, *rewritten, test);
  if (!numbers.problem.empty()) {
    failures.push_back(numbers.problem);
  } else if (numbers.differs && !test.numbers_differ) {
    failures.push_back("the pass changes what the graph computes (seed " + std::to_string(test.seed) +
                       "): " + numbers.worst);
  } else if (!numbers.differs && test.numbers_differ) {
    failures.push_back("the numbers did not change, but the test says 'numbers differ' (seed " +
                       std::to_string(test.seed) + "): " + numbers.worst);
  }
  if (!failures.empty()) return {false, join(failures)};
  return {true, test.numbers_differ ? "numbers differ as expected: " + numbers.worst
                                    : fmt::format("max abs error {:.3g}", numbers.max_abs_error)};
}

size_t run_rule_tests(std::span<const RuleTestCase> tests,
                      const std::function<RunPasses(const RuleTestCase&)>& passes_for, std::ostream& out) {
  size_t failed = 0;
  for (const RuleTestCase& test : tests) {
    RuleTestResult result = run_rule_test(test, passes_for(test));
    if (result.passed) {
      out << "PASS " << test.name << " (" << result.detail << ")\n";
    } else {
      out << "FAIL " << test.name << ": " << result.detail << "\n";
      ++failed;
    }
  }
  return failed;
}

bool format_rule_test_manifest(std::span<const RuleTestCase> tests, std::string& text, std::string& error) {
  text = std::string(kManifestHeader) + "\n";
  for (const RuleTestCase& test : tests) {
    for (const std::string* field : {&test.name, &test.target, &test.input_path, &test.expect_path}) {
      if (field->find_first_of("\t\r\n") != std::string::npos) {
        error = "test " + test.name + ": '" + *field + "' holds a tab or a line break";
        return false;
      }
    }
    std::string dims;
    for (const auto& [name, value] : test.dims) dims += fmt::format("{}{}={}", dims.empty() ? "" : ",", name, value);
    text += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", test.name,
                        test.target_is_pipeline ? "pipeline" : "pass", test.target, test.input_path,
                        test.expect_path.empty() ? "-" : test.expect_path, test.seed,
                        test.tolerance ? fmt::format("{}", *test.tolerance) : "-",
                        test.numbers_differ ? "differ" : "same", dims.empty() ? "-" : dims);
  }
  return true;
}

bool parse_rule_test_manifest(const std::string& text, std::vector<RuleTestCase>& tests, std::string& error) {
  std::vector<std::string> lines = split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = split(line, '\t');
    RuleTestCase test;
    bool ok = fields.size() == 9 && (fields[1] == "pass" || fields[1] == "pipeline") &&
              (fields[7] == "differ" || fields[7] == "same");
    if (ok) {
      test.name = fields[0];
      test.target_is_pipeline = fields[1] == "pipeline";
      test.target = fields[2];
      test.input_path = fields[3];
      test.expect_path = fields[4] == "-" ? "" : fields[4];
      const std::string& seed = fields[5];
      auto [end, code] = std::from_chars(seed.data(), seed.data() + seed.size(), test.seed);
      ok = code == std::errc() && end == seed.data() + seed.size();
      if (fields[6] != "-") {
        char* tolerance_end = nullptr;
        test.tolerance = std::strtod(fields[6].c_str(), &tolerance_end);
        ok = ok && tolerance_end == fields[6].c_str() + fields[6].size();
      }
      test.numbers_differ = fields[7] == "differ";
      if (fields[8] != "-") {
        for (const std::string& dim : split(fields[8], ',')) {
          const size_t equals = dim.find('=');
          int64_t value = 0;
          const char* digits_end = dim.data() + dim.size();
          auto [end, code] = std::from_chars(dim.data() + std::min(equals + 1, dim.size()), digits_end, value);
          ok = ok && equals != std::string::npos && equals != 0 && code == std::errc() && end == digits_end;
          if (ok) test.dims.emplace(dim.substr(0, equals), value);
        }
      }
    }
    if (!ok) {
      error = "line " + std::to_string(i + 1) + " is not a rule test: " + line;
      return false;
    }
    tests.push_back(std::move(test));
  }
  return true;
}

int rule_test_main(int argc, char** argv) {
  std::vector<std::string> manifests(argv + 1, argv + argc);
  if (manifests.empty() || std::any_of(manifests.begin(), manifests.end(),
                                       [](const std::string& arg) { return arg.starts_with("-"); })) {
    std::cerr << "usage: " << (argc > 0 ? argv[0] : "rule-tests")
              << " MANIFEST.dpl.tests...\nRuns the rule tests dplc listed, with the passes linked into this "
                 "program.\n";
    return 2;
  }
  std::vector<RuleTestCase> tests;
  for (const std::string& path : manifests) {
    std::string error;
    std::unique_ptr<SourceFile> manifest = SourceFile::load(path, error);
    if (manifest == nullptr || !parse_rule_test_manifest(manifest->text(), tests, error)) {
      std::cerr << "error: " << path << ": " << error << "\n";
      return 1;
    }
  }
  if (tests.empty()) {
    std::cerr << "error: the manifests hold no tests\n";
    return 1;
  }
  auto passes_for = [](const RuleTestCase& test) -> RunPasses {
    std::vector<const PassDef*> passes;
    std::string error;
    if (!test.target_is_pipeline) {
      passes.push_back(PassRegistry::find(test.target));
    } else if (const PipelineDef* pipeline = PassRegistry::find_pipeline(test.target)) {
      for (std::string_view name : pipeline->passes) passes.push_back(PassRegistry::find(name));
    } else {
      error = "no pipeline '" + test.target + "' is linked into this program";
    }
    if (error.empty() && std::find(passes.begin(), passes.end(), nullptr) != passes.end()) {
      error = "a pass of '" + test.target + "' is not linked into this program";
    }
    return [passes, error](Module& module) { return error.empty() ? run_passes_verified(passes, module) : error; };
  };
  size_t failed = run_rule_tests(tests, passes_for, std::cout);
  std::cout << tests.size() - failed << " of " << tests.size() << " rule tests passed\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace dpl
