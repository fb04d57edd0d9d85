// dplc --test and --tests-manifest: the `test` declarations of a .dpl file, run with the rule interpreter or
// listed for the compiled-pass runner (dpl/rewrite/rule_test.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/rewrite/rule_test.h"

namespace dpl::compiler {

// The checked tests of `file` (paths absolute), in file order.
std::vector<RuleTestCase> rule_test_cases(const AstFile& file);

// Reads and checks `path`, then runs each of its tests with the rule interpreter: one `PASS name (...)` or
// `FAIL name: why` line per test to `out`; diagnostics to `messages`. A test whose pass the interpreter cannot
// run fails, saying why. True when the file compiled, has tests, and every test passed.
bool run_rule_tests_interpreted(const std::string& path, std::ostream& out, std::ostream& messages);

}  // namespace dpl::compiler
