// Rule tests (`test NAME { input ...; expect ...; }` in a .dpl file): run a pass on an input graph, compare the
// result with the expectation, and both graphs' numbers. dplc --test runs them with the rule interpreter; the
// runner that dpl_add_pass_library() registers with ctest runs them with the compiled passes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "dpl/ir/graph.h"
#include "dpl/rewrite/driver.h"

namespace dpl {

struct RuleTestCase {
  std::string name;
  std::string target;  // the pass or pipeline it runs
  bool target_is_pipeline = false;
  std::string input_path;
  std::string expect_path;  // empty: the result must equal the input
  uint64_t seed = 1;
  std::optional<double> tolerance;  // absolute and relative; absent: by dtype (default_tolerance)
  bool numbers_differ = false;      // the rewrite is meant to change what the graph computes
  std::map<std::string, int64_t, std::less<>> dims;  // values of the input's symbolic dimensions
};

struct RuleTestResult {
  bool passed = false;
  std::string detail;  // passed: the largest error; failed: every reason, "; "-separated
};

// Runs the test's pass or pipeline on a module; returns an error message, empty on success.
using RunPasses = std::function<std::string(Module& module)>;

// Reads the input, runs `run` on it, compares the result structurally with the expectation
// (structurally_equal's difference on failure), then evaluates each function of the input (the public ones, and
// the private ones the pass kept) and its namesake in the result on the same random inputs (seeded) with the
// reference interpreter and compares them within the tolerance: they must agree, or, with `numbers_differ`,
// some output must differ.
RuleTestResult run_rule_test(const RuleTestCase& test, const RunPasses& run);

// Runs `passes` in order on `module` with the IR verifier after every rewrite (what tests want); the first
// pass that stops gives the error.
std::string run_passes_verified(std::span<const PassDef* const> passes, Module& module);

// Runs every test, printing `PASS name (detail)` or `FAIL name: detail` per test to `out`; `passes_for` gives
// the way to run each test's target. Returns the number of failed tests.
size_t run_rule_tests(std::span<const RuleTestCase> tests,
                      const std::function<RunPasses(const RuleTestCase&)>& passes_for, std::ostream& out);

// The manifest dplc writes for the test runner (`<stem>.dpl.tests`): a header line, then one tab-separated line
// per test: name, pass|pipeline, target, input path, expect path (or `-` for unchanged), seed, tolerance (or
// `-`), `differ` or `same`, dims (`b=2,s=16`, or `-`). Paths hold no tabs or line breaks (format_rule_test_manifest
// fails otherwise).
bool format_rule_test_manifest(std::span<const RuleTestCase> tests, std::string& text, std::string& error);
bool parse_rule_test_manifest(const std::string& text, std::vector<RuleTestCase>& tests, std::string& error);

// The main() of the compiled-pass test runner dpl_add_pass_library() builds: runs the tests of the manifests
// named on the command line with the passes and pipelines registered in the process (PassRegistry). Exit code 0
// when every test passes, 1 when one fails or a manifest cannot be read or holds no tests, 2 on bad usage.
int rule_test_main(int argc, char** argv);

}  // namespace dpl
