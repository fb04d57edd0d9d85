// Rewriter::partition and composite_of, pinned with hand-written matchers: the composite function it creates
// (printed, read back, evaluated), escape rejection, largest match under users-first order, unused composites.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dpl/interp/interpreter.h"
#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/text/tvmscript.h"

namespace dpl {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Module> read_text(const std::string& text) {
  const SourceFile source("test.py", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = read_module(source, diags);
  EXPECT_NE(module, nullptr) << "the test's TVMScript does not read";
  return module;
}

RunOptions verifying() {
  RunOptions options;
  options.verify_each = true;
  return options;
}

std::string g_last_error;

// partition "demo.diff_of_squares": multiply(add(a, b), subtract(c, d)) — the leaves a, b, c, d are the inputs.
constexpr RuleInfo kDiffRules[] = {{"demo.diff_of_squares", "partition.dpl:1"}};
int match_diff_of_squares(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::multiply)) return -1;
  Node* sum = root->operand(0);
  Node* difference = root->operand(1);
  if (!sum->is_call_of(op::add) || !difference->is_call_of(op::subtract)) return -1;
  Node* const inputs[] = {sum->operand(0), sum->operand(1), difference->operand(0), difference->operand(1)};
  Node* call = rewriter.partition("demo.diff_of_squares", root, inputs);
  g_last_error = rewriter.last_error();
  return call != nullptr ? 0 : -1;
}
const PassDef kDiffPass{"test_partition_diff", "carves (a+b)*(c-d)", "partition.dpl", kDiffRules,
                        match_diff_of_squares, VisitOrder::UsersFirst};

constexpr char kDiffOfSquares[] = R"(# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3), dtype="float32") = R.add(x, y)
            lv1: R.Tensor((2, 3), dtype="float32") = R.subtract(x, y)
            gv: R.Tensor((2, 3), dtype="float32") = R.multiply(lv, lv1)
            R.output(gv)
        return gv
)";

constexpr char kPartitioned[] = R"(# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((2, 3), dtype="float32") = cls.fused_add_subtract_multiply(x, y)
            R.output(gv)
        return gv

    @R.function(private=True)
    def fused_add_subtract_multiply(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        R.func_attr({"Composite": "demo.diff_of_squares", "Primitive": True})
        with R.dataflow():
            lv: R.Tensor((2, 3), dtype="float32") = R.add(x, y)
            lv1: R.Tensor((2, 3), dtype="float32") = R.subtract(x, y)
            gv: R.Tensor((2, 3), dtype="float32") = R.multiply(lv, lv1)
            R.output(gv)
        return gv
)";

Value evaluate_main(const Module& module, std::span<const Tensor> args) {
  const EvalResult result = Interpreter().evaluate(module, *module.find("main"), args);
  EXPECT_TRUE(result.ok()) << result.error;
  return result.value;
}

// Both modules' main functions, on the same two random (2, 3) inputs drawn from `seed` and `seed + 1`, agree.
void expect_same_results(const Module& rewritten, const Module& original, uint64_t seed) {
  const std::vector<Tensor> args = {Tensor::random(DType::Float32, {2, 3}, seed),
                                    Tensor::random(DType::Float32, {2, 3}, seed + 1)};
  const ValueComparison same = compare(evaluate_main(rewritten, args), evaluate_main(original, args));
  EXPECT_TRUE(same.within_tolerance) << same.str();
}

TEST(Partition, CarvesTheMatchIntoACompositeFunction) {
  std::unique_ptr<Module> module = read_text(kDiffOfSquares);
  std::unique_ptr<Module> original = read_text(kDiffOfSquares);
  ASSERT_TRUE(module && original);
  const PassResult result = run_pass(kDiffPass, *module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  // The function the partition created contains the same pattern; the pass does not visit it.
  ASSERT_EQ(module->functions().size(), 2u);
  const Function* fused = module->find("fused_add_subtract_multiply");
  ASSERT_NE(fused, nullptr);
  EXPECT_TRUE(fused->is_private());
  EXPECT_EQ(verify(*module), "");

  const std::string printed = print_module(*module);
  EXPECT_EQ(printed, kPartitioned);
  std::unique_ptr<Module> reread = read_text(printed);
  ASSERT_NE(reread, nullptr);
  const EqualityResult equal = structurally_equal(*module, *reread);
  EXPECT_TRUE(equal.equal) << equal.difference;

  expect_same_results(*module, *original, 1);
}

TEST(Partition, RejectsAMatchWhoseIntermediateValueIsUsedOutside) {
  std::string text = kDiffOfSquares;
  const std::string output = "            R.output(gv)\n        return gv\n";
  text.replace(text.find(output), output.size(),
               "            out: R.Tensor((2, 3), dtype=\"float32\") = R.add(gv, lv)\n"
               "            R.output(out)\n        return out\n");
  std::unique_ptr<Module> module = read_text(text);
  ASSERT_NE(module, nullptr);
  g_last_error.clear();
  const PassResult result = run_pass(kDiffPass, *module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(module->functions().size(), 1u);
  EXPECT_THAT(g_last_error, HasSubstr("binding 'lv' (R.add) is also used outside the match, by binding 'out'"));
}

TEST(Partition, DeclinesOnAFunctionOutsideAModule) {
  std::unique_ptr<Module> module = read_text(kDiffOfSquares);
  ASSERT_NE(module, nullptr);
  g_last_error.clear();
  const PassResult result = run_pass(kDiffPass, *module->find("main"), verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_THAT(g_last_error, HasSubstr("outside a module"));
}

// partition "demo.scale_shift": add(multiply(a, const c1), const c2) — constant leaves are copied in.
constexpr RuleInfo kScaleShiftRules[] = {{"demo.scale_shift", "partition.dpl:2"}};
int match_scale_shift(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::add) || !root->operand(0)->is_call_of(op::multiply)) return -1;
  Node* product = root->operand(0);
  if (product->operand(1)->kind() != NodeKind::Constant || root->operand(1)->kind() != NodeKind::Constant) return -1;
  Node* const inputs[] = {product->operand(0), product->operand(1), root->operand(1)};
  Node* call = rewriter.partition("demo.scale_shift", root, inputs);
  g_last_error = rewriter.last_error();
  return call != nullptr ? 0 : -1;
}
const PassDef kScaleShiftPass{"test_partition_scale_shift", "carves a*2+1", "partition.dpl", kScaleShiftRules,
                              match_scale_shift, VisitOrder::UsersFirst};

TEST(Partition, CopiesConstantInputsAndNamesUnnamedParametersByPosition) {
  std::unique_ptr<Module> module = read_text(R"(@R.function
def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    with R.dataflow():
        e: R.Tensor((4,), dtype="float32") = R.exp(x)
        lv: R.Tensor((4,), dtype="float32") = R.multiply(e, R.const(2.0, "float32"))
        gv: R.Tensor((4,), dtype="float32") = R.add(lv, R.const(1.0, "float32"))
        R.output(gv)
    return gv
)");
  ASSERT_NE(module, nullptr);
  Function& main = *module->find("main");
  main.output()->operand(0)->operand(0)->set_name("");  // e: the partition's only parameter
  const PassResult result = run_pass(kScaleShiftPass, *module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  ASSERT_EQ(result.stats.rewrites, 1u) << g_last_error;
  const Function* fused = module->find("fused_multiply_add");
  ASSERT_NE(fused, nullptr);
  ASSERT_EQ(fused->params().size(), 1u);
  EXPECT_EQ(fused->params()[0]->name(), "p0");
  EXPECT_EQ(fused->find_attr("Composite") != nullptr ? std::get<std::string>(*fused->find_attr("Composite")) : "",
            "demo.scale_shift");
  const Node* call = main.output();
  ASSERT_EQ(call->kind(), NodeKind::FuncCall);
  ASSERT_EQ(call->num_operands(), 1u);
  EXPECT_TRUE(call->operand(0)->is_call_of(op::exp));
  std::unique_ptr<Module> reread = read_text(print_module(*module));
  ASSERT_NE(reread, nullptr);
  const EqualityResult equal = structurally_equal(*module, *reread);
  EXPECT_TRUE(equal.equal) << equal.difference;
}

// Two partitions where one match contains the other: nn.relu(add(a, b)) is tried before add(a, b).
constexpr RuleInfo kAddReluRules[] = {{"demo.add_relu", "partition.dpl:3"}, {"demo.add", "partition.dpl:4"}};
int match_add_relu_or_add(Rewriter& rewriter, Node* root) {
  if (root->is_call_of(op::nn_relu) && root->operand(0)->is_call_of(op::add)) {
    Node* sum = root->operand(0);
    Node* const inputs[] = {sum->operand(0), sum->operand(1)};
    if (rewriter.partition("demo.add_relu", root, inputs) != nullptr) return 0;
  }
  if (root->is_call_of(op::add)) {
    Node* const inputs[] = {root->operand(0), root->operand(1)};
    if (rewriter.partition("demo.add", root, inputs) != nullptr) return 1;
  }
  return -1;
}

constexpr char kAddRelu[] = R"(@R.function
def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    with R.dataflow():
        lv: R.Tensor((4,), dtype="float32") = R.add(x, y)
        gv: R.Tensor((4,), dtype="float32") = R.nn.relu(lv)
        R.output(gv)
    return gv
)";

// The composites of the functions main calls, in call order.
std::vector<std::string> called_composites(const Module& module) {
  std::vector<std::string> composites;
  for (const Node* node : module.find("main")->nodes()) {
    if (node->kind() != NodeKind::FuncCall || node->is_dead()) continue;
    const AttrValue* composite = module.find(node->callee())->find_attr("Composite");
    composites.push_back(composite != nullptr ? std::get<std::string>(*composite) : "");
  }
  return composites;
}

TEST(Partition, UsersFirstOrderLetsTheLargestMatchWin) {
  const PassDef users_first{"test_add_relu", "", "partition.dpl", kAddReluRules, match_add_relu_or_add,
                            VisitOrder::UsersFirst};
  std::unique_ptr<Module> module = read_text(kAddRelu);
  ASSERT_NE(module, nullptr);
  const PassResult result = run_pass(users_first, *module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.fired, std::vector<uint64_t>({1, 0}));
  EXPECT_EQ(called_composites(*module), std::vector<std::string>({"demo.add_relu"}));
  EXPECT_NE(module->find("fused_add_nn_relu"), nullptr);

  // Operands first, the add is carved out before the relu is visited, and the relu no longer matches.
  const PassDef operands_first{"test_add_relu", "", "partition.dpl", kAddReluRules, match_add_relu_or_add,
                               VisitOrder::OperandsFirst};
  module = read_text(kAddRelu);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(run_pass(operands_first, *module, verifying()).ok());
  EXPECT_EQ(called_composites(*module), std::vector<std::string>({"demo.add"}));
}

// rule unfuse: composite("demo.diff_of_squares")(a, b) => multiply(add(a, b), subtract(a, b)).
bool g_composite_of_non_call_empty = true;
constexpr RuleInfo kUnfuseRules[] = {{"unfuse", "unfuse.dpl:1"}};
int match_unfuse(Rewriter& rewriter, Node* root) {
  if (root->kind() != NodeKind::FuncCall) {
    g_composite_of_non_call_empty = g_composite_of_non_call_empty && rewriter.composite_of(root).empty();
    return -1;
  }
  if (rewriter.composite_of(root) != "demo.diff_of_squares" || root->num_operands() != 2) return -1;
  Node* a = root->operand(0);
  Node* b = root->operand(1);
  Node* sum = rewriter.call(op::add, {a, b});
  Node* difference = rewriter.call(op::subtract, {a, b});
  Node* product = rewriter.call(op::multiply, {sum, difference});
  return product != nullptr && rewriter.replace(root, product) ? 0 : -1;
}
const PassDef kUnfusePass{"test_unfuse", "inlines a composite", "unfuse.dpl", kUnfuseRules, match_unfuse};

TEST(Partition, CompositeOfNamesTheCalleesCompositeAndUncalledCompositesAreRemoved) {
  std::unique_ptr<Module> module = read_text(kPartitioned);
  std::unique_ptr<Module> original = read_text(kDiffOfSquares);
  ASSERT_TRUE(module && original);
  g_composite_of_non_call_empty = true;
  const PassResult result = run_pass(kUnfusePass, *module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_TRUE(g_composite_of_non_call_empty);
  // The composite function nothing calls any more is gone: the module is the original again.
  EXPECT_EQ(module->functions().size(), 1u);
  const EqualityResult equal = structurally_equal(*module, *original);
  EXPECT_TRUE(equal.equal) << equal.difference;
  expect_same_results(*module, *original, 3);
}

// kPartitioned with the composite calling another composite for its add: unfusing main's call leaves the outer
// composite uncalled, and removing it leaves the inner one uncalled in turn.
std::string partitioned_with_a_nested_composite() {
  std::string text = kPartitioned;
  const std::string add = "            lv: R.Tensor((2, 3), dtype=\"float32\") = R.add(x, y)\n";
  text.replace(text.find(add), add.size(),
               "            lv: R.Tensor((2, 3), dtype=\"float32\") = cls.fused_add(x, y)\n");
  const std::string attrs = "        R.func_attr({\"Composite\": \"demo.diff_of_squares\", \"Primitive\": True})\n";
  text.insert(text.find(attrs) + attrs.size(), "        cls = Module\n");
  text += R"(
    @R.function(private=True)
    def fused_add(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        R.func_attr({"Composite": "demo.add", "Primitive": True})
        with R.dataflow():
            gv: R.Tensor((2, 3), dtype="float32") = R.add(x, y)
            R.output(gv)
        return gv
)";
  return text;
}

TEST(Partition, ACompositeCalledOnlyByARemovedCompositeGoesWithIt) {
  std::unique_ptr<Module> module = read_text(partitioned_with_a_nested_composite());
  ASSERT_NE(module, nullptr);
  ASSERT_NE(module->find("fused_add"), nullptr);
  const PassResult result = run_pass(kUnfusePass, *module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(module->find("fused_add_subtract_multiply"), nullptr);
  EXPECT_EQ(module->find("fused_add"), nullptr);
  EXPECT_EQ(module->functions().size(), 1u);
}

// kPartitioned with main adding x and y itself: the composite function is there, and nothing calls it.
std::string partitioned_without_the_call() {
  std::string text = kPartitioned;
  const std::string call = "cls.fused_add_subtract_multiply(x, y)";
  text.replace(text.find(call), call.size(), "R.add(x, y)");
  const std::string cls = "        cls = Module\n";
  text.erase(text.find(cls), cls.size());
  return text;
}

TEST(Partition, CompositesThatWereNotCalledBeforeThePassStay) {
  std::unique_ptr<Module> module = read_text(partitioned_without_the_call());
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(run_pass(kUnfusePass, *module, verifying()).ok());
  EXPECT_NE(module->find("fused_add_subtract_multiply"), nullptr);
}

// A pass that rewrites nothing may still change a function: its closing compaction drops calls the output does
// not depend on. A composite only such a call called goes with it.
TEST(Partition, ACompositeWhoseOnlyCallCompactionDropsIsRemovedThoughNoRuleFired) {
  std::unique_ptr<Module> module = read_text(partitioned_without_the_call());
  ASSERT_NE(module, nullptr);
  Function* main = module->find("main");
  ASSERT_NE(main, nullptr);
  std::vector<Node*> args(main->params().begin(), main->params().end());
  main->add_func_call("fused_add_subtract_multiply", args, nullptr);  // unused: the output does not need it
  const PassResult result = run_pass(kUnfusePass, *module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(module->find("fused_add_subtract_multiply"), nullptr);
  EXPECT_EQ(module->functions().size(), 1u);
}

}  // namespace
}  // namespace dpl
