// The rule interpreter calling natives in process: predicates in guards, rewriters as the right-hand side with the
// compiled code's decline semantics, and the errors for externs without a fitting native.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dpl/compiler/compile.h"
#include "dpl/compiler/rule_interpreter.h"
#include "dpl/ir/analysis.h"
#include "dpl/ir/op_registry.h"
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/natives.h"
#include "dpl/text/tvmscript.h"

namespace {

using ::testing::HasSubstr;

std::vector<std::string> predicate_calls;  // the names of the values is_rank_two was called on

bool is_rank_two(const dpl::Node* x) {
  predicate_calls.emplace_back(x->name());
  return x->type()->rank() == 2;
}
// Replaces with the sum of all elements: a scalar where a matrix was, which replace() declines.
dpl::Node* sum_everything(dpl::Rewriter& rewriter, dpl::Node* x) {
  return rewriter.call(dpl::op::sum, {x}, dpl::OpRegistry::global().get(dpl::op::sum).default_attrs());
}
dpl::Node* swap_subtract(dpl::Rewriter& rewriter, dpl::Node* a, dpl::Node* b) {
  if (a == b) return nullptr;
  return rewriter.call(dpl::op::subtract, {b, a});
}

// A .dpl text checked by the front end; the AST lives as long as the object.
struct Checked {
  std::unique_ptr<dpl::SourceFile> source;
  dpl::compiler::CompileResult compiled;
};

std::unique_ptr<Checked> check(const std::string& text) {
  auto checked = std::make_unique<Checked>();
  checked->source = std::make_unique<dpl::SourceFile>("natives_in_process.dpl", text);
  dpl::DiagnosticEngine diags;
  dpl::compiler::CompileOptions options;
  options.generate = false;
  checked->compiled = dpl::compiler::compile(*checked->source, diags, options);
  EXPECT_TRUE(checked->compiled.ok) << diags.str();
  return checked;
}

const std::string kExterns =
    "extern predicate is_rank_two(x: Tensor) from \"n.h\";\n"
    "extern rewriter sum_everything(x: Tensor) from \"n.h\";\n"
    "extern rewriter swap_subtract(a: Tensor, b: Tensor) from \"n.h\";\n";

const std::string kGraph =
    "@R.function\n"
    "def main(x: R.Tensor((2, 3), dtype=\"float32\"), v: R.Tensor((4,), dtype=\"float32\")) -> "
    "R.Tuple(R.Tensor((2, 3), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\"), R.Tensor((2, 3), "
    "dtype=\"float32\")):\n"
    "    with R.dataflow():\n"
    "        a: R.Tensor((2, 3), dtype=\"float32\") = R.exp(x)\n"
    "        b: R.Tensor((4,), dtype=\"float32\") = R.exp(v)\n"
    "        c: R.Tensor((2, 3), dtype=\"float32\") = R.tanh(x)\n"
    "        gv: R.Tuple(R.Tensor((2, 3), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\"), R.Tensor((2, 3), "
    "dtype=\"float32\")) = (a, b, c)\n"
    "        R.output(gv)\n"
    "    return gv\n";

struct RulesRun {
  dpl::PassResult result;
  std::string printed;
};

RulesRun run_rules(const std::string& rules, const dpl::NativeRegistry& natives) {
  std::unique_ptr<Checked> checked = check(rules);
  dpl::DiagnosticEngine diags;
  std::unique_ptr<dpl::compiler::RuleInterpreter> interpreter =
      dpl::compiler::RuleInterpreter::create(*checked->compiled.ast, diags, natives);
  EXPECT_NE(interpreter, nullptr) << diags.str();
  if (interpreter == nullptr) return {};
  dpl::SourceFile graph("graph.relax", kGraph);
  std::unique_ptr<dpl::Module> module = dpl::read_module(graph, diags);
  EXPECT_NE(module, nullptr) << diags.str();
  if (module == nullptr) return {};
  dpl::RunOptions options;
  options.verify_each = true;
  RulesRun run;
  run.result = dpl::run_pass(*interpreter->passes().at(0), *module, options);
  run.printed = dpl::print_module(*module);
  return run;
}

dpl::NativeRegistry test_natives() {
  dpl::NativeRegistry natives;
  natives.add(dpl::make_native<&is_rank_two>("is_rank_two"));
  natives.add(dpl::make_native<&sum_everything>("sum_everything"));
  natives.add(dpl::make_native<&swap_subtract>("swap_subtract"));
  return natives;
}

TEST(InterpretedNatives, APredicateIsCalledOnTheMatchedValueInTheGuard) {
  predicate_calls.clear();
  const dpl::NativeRegistry natives = test_natives();
  RulesRun run = run_rules(kExterns + "pass p { rule r: exp(x) where is_rank_two(x) => sigmoid(x); }\n", natives);
  ASSERT_TRUE(run.result.ok()) << run.result.error;
  EXPECT_EQ(run.result.stats.rewrites, 1u);
  // exp(x) and exp(v):
  EXPECT_EQ(predicate_calls, (std::vector<std::string>{"x", "v"}));
  EXPECT_NE(run.printed.find("a: R.Tensor((2, 3), dtype=\"float32\") = R.sigmoid(x)"), std::string::npos)
      << run.printed;
  EXPECT_NE(run.printed.find("b: R.Tensor((4,), dtype=\"float32\") = R.exp(v)"), std::string::npos) << run.printed;
}

// As the compiled guard's C++ `&&` and `||` do: a predicate whose side does not count is not called (a native
// may rely on what the other side checked); the rule fires as before.
TEST(InterpretedNatives, APredicateOnTheSideThatDoesNotCountIsNotCalled) {
  const dpl::NativeRegistry natives = test_natives();
  predicate_calls.clear();
  RulesRun run = run_rules(kExterns + "pass p { rule r: exp(x) where x.rank == 2 && is_rank_two(x) => sigmoid(x); }\n",
                           natives);
  ASSERT_TRUE(run.result.ok()) << run.result.error;
  EXPECT_EQ(run.result.stats.rewrites, 1u);
  EXPECT_EQ(predicate_calls, (std::vector<std::string>{"x"}));  // not on v, whose rank is 1
  predicate_calls.clear();
  run = run_rules(kExterns + "pass p { rule r: exp(x) where x.rank == 1 || is_rank_two(x) => sigmoid(x); }\n",
                  natives);
  ASSERT_TRUE(run.result.ok()) << run.result.error;
  EXPECT_EQ(run.result.stats.rewrites, 2u);
  EXPECT_EQ(predicate_calls, (std::vector<std::string>{"x"}));  // v's rank decided it
}

TEST(InterpretedNatives, AReplacementOfAnotherTypeIsDeclinedAndTheNextRuleTried) {
  const dpl::NativeRegistry natives = test_natives();
  // sum_everything builds a scalar for a (2, 3) tensor: replace() declines it; the lower-priority rule fires.
  RulesRun run = run_rules(kExterns +
                               "pass p {\n"
                               "  rule to_sum priority 2: tanh(x) => sum_everything(x);\n"
                               "  rule to_sigmoid: tanh(x) => sigmoid(x);\n"
                               "}\n",
                           natives);
  ASSERT_TRUE(run.result.ok()) << run.result.error;
  EXPECT_EQ(run.result.stats.rewrites, 1u);
  ASSERT_EQ(run.result.stats.fired.size(), 2u);
  EXPECT_EQ(run.result.stats.fired[0], 0u);
  EXPECT_EQ(run.result.stats.fired[1], 1u);
  EXPECT_NE(run.printed.find("R.sigmoid(x)"), std::string::npos) << run.printed;
  EXPECT_EQ(run.printed.find("R.sum"), std::string::npos) << run.printed;  // the declined node is gone
}

TEST(InterpretedNatives, ARewriterThatReturnsNullDeclines) {
  const dpl::NativeRegistry natives = test_natives();
  RulesRun run = run_rules(kExterns + "pass p { rule r: exp(x) => swap_subtract(x, x); }\n", natives);
  ASSERT_TRUE(run.result.ok()) << run.result.error;
  EXPECT_EQ(run.result.stats.rewrites, 0u);
  EXPECT_NE(run.printed.find("R.exp(x)"), std::string::npos) << run.printed;
}

TEST(InterpretedNatives, ARewriterGetsTheBuiltOperands) {
  const dpl::NativeRegistry natives = test_natives();
  RulesRun run = run_rules(kExterns + "pass p { rule r: tanh(x) => swap_subtract(x, exp(x)); }\n", natives);
  ASSERT_TRUE(run.result.ok()) << run.result.error;
  EXPECT_EQ(run.result.stats.rewrites, 1u);
  EXPECT_NE(run.printed.find("c: R.Tensor((2, 3), dtype=\"float32\") = R.subtract(lv, x)"), std::string::npos)
      << run.printed;
}

// What RuleInterpreter::create reports for `checked` with `natives`; it must fail with `errors` errors.
std::string creation_errors(const Checked& checked, const dpl::NativeRegistry& natives, size_t errors) {
  dpl::DiagnosticEngine diags;
  EXPECT_EQ(dpl::compiler::RuleInterpreter::create(*checked.compiled.ast, diags, natives), nullptr);
  EXPECT_EQ(diags.error_count(), errors) << diags.str();
  return diags.str();
}

TEST(InterpretedNatives, WithoutNativesEachRuleCallingAnExternIsAnError) {
  std::unique_ptr<Checked> checked = check(kExterns +
                                           "pass p {\n"
                                           "  rule r: exp(x) where is_rank_two(x) => sigmoid(x);\n"
                                           "  rule s: tanh(x) => sum_everything(x);\n"
                                           "}\n");
  const dpl::NativeRegistry none;
  const std::string text = creation_errors(*checked, none, 2);
  EXPECT_THAT(text,
              HasSubstr("natives_in_process.dpl:5:24: error: rule 'r' cannot be interpreted: extern predicate "
                        "'is_rank_two' needs native code; load a natives library (--natives LIB.so) or compile the "
                        "rules with dplc"));
  EXPECT_THAT(text, HasSubstr("natives_in_process.dpl:6:22: error: rule 's' cannot be interpreted: extern rewriter "
                              "'sum_everything' needs native code"));
  EXPECT_TRUE(dpl::compiler::RuleInterpreter::unsupported_reason(checked->compiled.ast->passes[0].rules[0], none));
  const dpl::NativeRegistry natives = test_natives();
  EXPECT_FALSE(dpl::compiler::RuleInterpreter::unsupported_reason(checked->compiled.ast->passes[0].rules[0], natives));
}

TEST(InterpretedNatives, ExternsWithoutAFittingNativeAreErrorsAtTheirDeclarations) {
  std::unique_ptr<Checked> checked = check(
      "extern predicate is_rank_two(x: Tensor, y: Tensor) from \"n.h\";\n"
      "extern predicate sum_everything(x: Tensor) from \"n.h\";\n"
      "extern rewriter no_such_native(x: Tensor) from \"n.h\";\n"
      "pass p {\n"
      "  rule r: add(x, y) where is_rank_two(x, y) => x;\n"
      "  rule s: exp(x) where sum_everything(x) => x;\n"
      "  rule t: tanh(x) => no_such_native(x);\n"
      "  rule u: sqrt(x) => no_such_native(x);\n"
      "}\n");
  const dpl::NativeRegistry natives = test_natives();
  const std::string text = creation_errors(*checked, natives, 3);  // each declaration once, however many callers
  EXPECT_THAT(text,
              HasSubstr("natives_in_process.dpl:1:18: error: extern predicate 'is_rank_two' takes 2 operands, but the "
                        "loaded native takes 1: bool is_rank_two(const dpl::Node*) (linked in)\n"
                        "extern predicate is_rank_two(x: Tensor, y: Tensor) from \"n.h\";\n"
                        "                 ^~~~~~~~~~~"));
  EXPECT_THAT(text,
              HasSubstr("natives_in_process.dpl:2:18: error: extern predicate 'sum_everything' is declared a "
                        "predicate, but the loaded native is a rewriter: dpl::Node* sum_everything(dpl::Rewriter&, "
                        "dpl::Node*) (linked in)"));
  EXPECT_THAT(text,
              HasSubstr("natives_in_process.dpl:3:17: error: extern rewriter 'no_such_native' has no native: none "
                        "named 'no_such_native' is loaded (loaded: is_rank_two, sum_everything, swap_subtract)"));
}

}  // namespace
