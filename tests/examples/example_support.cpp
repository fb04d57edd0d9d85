// Helpers shared by the example tests (see example_support.h).
#include "example_support.h"

#include <chrono>
#include <iostream>
#include <sstream>

#include "dpl/interp/equivalence.h"
#include "dpl/ir/analysis.h"
#include "dpl/text/tvmscript.h"

namespace dpl::example_test {

namespace {

Loaded read(std::unique_ptr<SourceFile> source) {
  Loaded loaded;
  loaded.source = std::move(source);
  DiagnosticEngine diags;
  loaded.module = read_module(*loaded.source, diags);
  EXPECT_NE(loaded.module, nullptr) << diags.str();
  return loaded;
}

}  // namespace

Loaded load_file(const std::string& path) {
  std::string error;
  std::unique_ptr<SourceFile> source = SourceFile::load(path, error);
  if (source == nullptr) {
    ADD_FAILURE() << error;
    return {};
  }
  return read(std::move(source));
}

Loaded parse_text(const std::string& text, const std::string& name) {
  return read(std::make_unique<SourceFile>(name, text));
}

PassStats run_verified(const PassDef& pass, Module& module) {
  RunOptions options;
  options.verify_each = true;
  PassResult result = run_pass(pass, module, options);
  EXPECT_TRUE(result.ok()) << "pass " << pass.name << ": " << result.error;
  return std::move(result.stats);
}

std::map<std::string, uint64_t> fired_by_rule(const PassStats& stats) {
  std::map<std::string, uint64_t> fired;
  for (size_t i = 0; i < stats.rule_names.size(); ++i) fired[stats.rule_names[i]] = stats.fired[i];
  return fired;
}

const Function* main_function(const Module& module) {
  const Function* main = module.find("main");
  EXPECT_NE(main, nullptr) << "the module has no function main";
  return main;
}

::testing::AssertionResult computes_the_same(const Module& before, const Module& after, uint64_t seed,
                                             const InputOptions& options, std::optional<Tolerance> tolerance) {
  const Function* before_main = before.find("main");
  const Function* after_main = after.find("main");
  if (before_main == nullptr || after_main == nullptr) return ::testing::AssertionFailure() << "no function main";
  const auto start = std::chrono::steady_clock::now();
  const EquivalenceResult result =
      compare_on_random_inputs(&before, *before_main, &after, *after_main, seed, options, tolerance);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (result.kind != EquivalenceResult::Kind::Equal && result.kind != EquivalenceResult::Kind::Different) {
    return ::testing::AssertionFailure() << result.str();
  }
  // Big models: say how long it took and how close the results are.
  if (elapsed.count() > 1.0) {
    std::cout << "evaluated before and after in " << elapsed.count() << " s: " << result.comparison.str() << "\n";
  }
  if (!result.equal()) return ::testing::AssertionFailure() << result.str();
  return ::testing::AssertionSuccess() << result.comparison.str();
}

InputOptions positive(const std::string& names) {
  InputOptions options;
  std::istringstream words(names);
  for (std::string name; words >> name;) options.ranges[name] = ValueRange{0.5, 1.5};
  return options;
}

::testing::AssertionResult verifies_and_rereads(const Module& module) {
  if (std::string problem = verify(module); !problem.empty()) {
    return ::testing::AssertionFailure() << "verify: " << problem;
  }
  const std::string text = print_module(module);
  SourceFile source("<printed>", text);
  DiagnosticEngine diags;
  const std::unique_ptr<Module> reread = read_module(source, diags);
  if (reread == nullptr) {
    return ::testing::AssertionFailure() << "the printed text does not read back:\n" << diags.str();
  }
  const EqualityResult equal = structurally_equal(*reread, module);
  if (!equal) return ::testing::AssertionFailure() << "re-read module differs: " << equal.difference;
  return ::testing::AssertionSuccess();
}

}  // namespace dpl::example_test
