// Helpers shared by the example tests: reading Relax text, running a pass with the verifier on, counting rule
// firings, and checking with the reference interpreter that a rewrite preserves what a function computes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "dpl/interp/interpreter.h"
#include "dpl/interp/tensor.h"
#include "dpl/ir/graph.h"
#include "dpl/rewrite/driver.h"
#include "dpl/support/diagnostics.h"

namespace dpl::example_test {

// A module together with the source text it was read from (diagnostics point into it).
struct Loaded {
  std::unique_ptr<SourceFile> source;
  std::unique_ptr<Module> module;
  explicit operator bool() const { return module != nullptr; }
};

// Reads a TVMScript Relax file; on failure the test fails with the reader's diagnostics and `module` is null.
Loaded load_file(const std::string& path);
// The same for text written in a test; `name` appears in diagnostics.
Loaded parse_text(const std::string& text, const std::string& name);

// Runs `pass` with the IR verifier after every rewrite; a stopped pass fails the test.
PassStats run_verified(const PassDef& pass, Module& module);

// How often each rule of the pass fired, by rule name.
std::map<std::string, uint64_t> fired_by_rule(const PassStats& stats);

// The module's `main` (the test fails when there is none).
const Function* main_function(const Module& module);

// Evaluates `before`'s and `after`'s main on the same random inputs (drawn from before's parameters with `seed`
// and `options`) and compares the outputs within `tolerance` (default: by dtype).
::testing::AssertionResult computes_the_same(const Module& before, const Module& after, uint64_t seed,
                                             const InputOptions& options = {},
                                             std::optional<Tolerance> tolerance = std::nullopt);

// Input options that draw the named parameters (space-separated) from [0.5, 1.5): variances and other values a
// graph takes the square root of, where random_inputs cannot tell from the use (sqrt(var + eps)).
InputOptions positive(const std::string& names);

// The module is well-formed, and printing it and reading the text back gives a structurally equal module.
::testing::AssertionResult verifies_and_rereads(const Module& module);

}  // namespace dpl::example_test
