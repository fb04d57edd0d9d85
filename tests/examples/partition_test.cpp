// The partition examples: seed 001's partition-then-rewrite pipeline and seed 004's `pattern.partition` cases
// (attributes, a rejecting check, conv2d + bias_add with and without relu, a dominator region) give their expected
// modules, compute what their inputs compute (composite calls evaluated by the interpreter), and reject what they
// must.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "add_subtract_multiply.dpl.h"
#include "dominator.dpl.h"
#include "dpl/ir/analysis.h"
#include "dpl/text/tvmscript.h"
#include "example_support.h"
#include "partition_attributes.dpl.h"
#include "partition_check.dpl.h"
#include "partition_conv_bias.dpl.h"

namespace dpl::example_test {
namespace {

std::string example_path(const std::string& dir, const std::string& file) {
  return std::string(DPL_EXAMPLES_DIR) + "/" + dir + "/" + file;
}

::testing::AssertionResult equal_to_file(const Module& module, const std::string& path) {
  Loaded expected = load_file(path);
  if (!expected) return ::testing::AssertionFailure() << "cannot read " << path;
  const EqualityResult equal = structurally_equal(module, *expected.module);
  if (equal) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << path << ": " << equal.difference << "\n" << print_module(module);
}

size_t count_func_calls(const Function& function) {
  size_t count = 0;
  for (const Node* node : function.nodes()) count += !node->is_dead() && node->kind() == NodeKind::FuncCall;
  return count;
}

// --- seed 001: partition (x + y) * (x - y), then rewrite the composite call to x * x - y * y

const std::string kSeed001Input = example_path("seed001", "add_subtract_multiply.input.relax");

TEST(Seed001, PartitionMakesTheCompositeFunction) {
  Loaded module = load_file(kSeed001Input);
  ASSERT_TRUE(module);
  const PassStats stats = run_verified(dpl_passes::seed001_partition_pass(), *module.module);
  EXPECT_EQ(fired_by_rule(stats), (std::map<std::string, uint64_t>{{"ccompiler.add_subtract_multiply", 1}}));
  EXPECT_TRUE(equal_to_file(*module.module, example_path("seed001", "add_subtract_multiply.partitioned.relax")));
  ASSERT_EQ(module.module->functions().size(), 2u);
  const Function& composite = *module.module->functions()[1];
  const AttrValue* name = composite.find_attr("Composite");
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(*name, AttrValue(std::string("ccompiler.add_subtract_multiply")));
  EXPECT_TRUE(verifies_and_rereads(*module.module));
  Loaded original = load_file(kSeed001Input);
  ASSERT_TRUE(original);
  EXPECT_TRUE(computes_the_same(*original.module, *module.module, 1));
}

TEST(Seed001, ThePipelineRewritesTheCompositeCall) {
  const PipelineDef* pipeline = PassRegistry::find_pipeline("seed001");
  ASSERT_EQ(pipeline, &dpl_passes::seed001_pipeline());
  ASSERT_EQ(pipeline->passes.size(), 2u);
  EXPECT_EQ(pipeline->passes[0], "seed001_partition");
  EXPECT_EQ(pipeline->passes[1], "seed001_difference_of_squares");
  EXPECT_EQ(pipeline->source, "add_subtract_multiply.dpl");
  Loaded module = load_file(kSeed001Input);
  ASSERT_TRUE(module);
  for (std::string_view name : pipeline->passes) {
    const PassDef* pass = PassRegistry::find(name);
    ASSERT_NE(pass, nullptr) << name;
    EXPECT_EQ(run_verified(*pass, *module.module).rewrites, 1u) << name;
  }
  EXPECT_TRUE(equal_to_file(*module.module, example_path("seed001", "add_subtract_multiply.expected.relax")));
  EXPECT_TRUE(verifies_and_rereads(*module.module));
  Loaded original = load_file(kSeed001Input);
  ASSERT_TRUE(original);
  EXPECT_TRUE(computes_the_same(*original.module, *module.module, 1));
}

// The rewrite matches calls of functions with that Composite attribute only.
TEST(Seed001, OtherCompositesAreNotRewritten) {
  Loaded module = load_file(kSeed001Input);
  ASSERT_TRUE(module);
  run_verified(dpl_passes::seed001_partition_pass(), *module.module);
  for (auto& [key, value] : module.module->functions()[1]->attrs()) {
    if (key == "Composite") value = AttrValue(std::string("ccompiler.something_else"));
  }
  EXPECT_EQ(run_verified(dpl_passes::seed001_difference_of_squares_pass(), *module.module).rewrites, 0u);
  const Function* main = main_function(*module.module);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(count_func_calls(*main), 1u);
}

// --- seed 004: partition examples

struct PartitionExample {
  const char* stem;  // examples/seed004/<stem>.{dpl,input.relax,expected.relax}
  const PassDef& (*pass)();
  std::map<std::string, uint64_t> fired;
};

void PrintTo(const PartitionExample& example, std::ostream* out) { *out << example.stem; }

class Seed004Partition : public ::testing::TestWithParam<PartitionExample> {};

TEST_P(Seed004Partition, GivesTheExpectedModuleAndComputesTheSame) {
  const PartitionExample& example = GetParam();
  const std::string input = example_path("seed004", std::string(example.stem) + ".input.relax");
  Loaded module = load_file(input);
  Loaded original = load_file(input);
  ASSERT_TRUE(module && original);
  EXPECT_EQ(fired_by_rule(run_verified(example.pass(), *module.module)), example.fired);
  EXPECT_TRUE(equal_to_file(*module.module, example_path("seed004", std::string(example.stem) + ".expected.relax")));
  EXPECT_TRUE(verifies_and_rereads(*module.module));
  EXPECT_TRUE(computes_the_same(*original.module, *module.module, 3));
}

INSTANTIATE_TEST_SUITE_P(
    Seed004, Seed004Partition,
    ::testing::Values(
        // conv2d + bias_add + relu, then a conv2d + bias_add without relu.
        PartitionExample{"partition_conv_bias", dpl_passes::seed004_partition_conv_bias_pass,
                         {{"seed004.conv2d_bias_add_relu", 1}, {"seed004.conv2d_bias_add", 1}}},
        PartitionExample{"partition_attributes", dpl_passes::seed004_partition_one_layer_pass, {{"one_layer", 1}}},
        // The batch-1 conv2d + relu is carved, the batch-2 one is rejected by the check.
        PartitionExample{"partition_check", dpl_passes::seed004_partition_checked_pass,
                         {{"seed004.nchw_batch1_conv2d_relu", 1}}},
        // The seed's post-dominator diamond: conv2d -> relu, leaky_relu -> add, carved whole.
        PartitionExample{"dominator", dpl_passes::seed004_partition_conv_elementwise_add_pass,
                         {{"seed004.conv2d_elementwise_add", 1}}}),
    [](const ::testing::TestParamInfo<PartitionExample>& info) { return std::string(info.param.stem); });

const char* const kConv = "R.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, "
                          "data_layout=\"{layout}\", kernel_layout=\"OIHW\", out_layout=\"{layout}\", out_dtype=\"void\")";

// A module with main(x, w[, b]) computing `bindings` (the last one named `out`).
std::string module_text(const std::string& params, const std::vector<std::string>& bindings) {
  std::string text = "@R.function\ndef main(" + params + "):\n    with R.dataflow():\n";
  for (const std::string& binding : bindings) text += "        " + binding + "\n";
  return text + "        R.output(out)\n    return out\n";
}

std::string conv(const std::string& layout) {
  std::string text = kConv;
  for (size_t at; (at = text.find("{layout}")) != std::string::npos;) text.replace(at, 8, layout);
  return text;
}

TEST(Seed004Partition, TheCheckRejectsOtherLayoutsAndBatches) {
  const std::string nhwc = module_text("x: R.Tensor((1, 8, 8, 3), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\")",
                                       {"c = " + conv("NHWC"), "out = R.nn.relu(c)"});
  const std::string batch2 = module_text("x: R.Tensor((2, 3, 8, 8), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\")",
                                         {"c = " + conv("NCHW"), "out = R.nn.relu(c)"});
  for (const std::string& text : {nhwc, batch2}) {
    Loaded module = parse_text(text, "rejected.relax");
    ASSERT_TRUE(module);
    EXPECT_EQ(run_verified(dpl_passes::seed004_partition_checked_pass(), *module.module).rewrites, 0u) << text;
    EXPECT_EQ(module.module->functions().size(), 1u);
  }
}

// A match whose intermediate value is used outside it is not carved: the conv2d's result is also an output.
TEST(Seed004Partition, AMatchWhoseIntermediateEscapesIsRejected) {
  const std::string text =
      module_text("x: R.Tensor((1, 3, 8, 8), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\"), "
                  "b: R.Tensor((4,), \"float32\")",
                  {"c = " + conv("NCHW"), "a = R.nn.bias_add(c, b, axis=1)", "r = R.nn.relu(a)", "out = (r, c)"});
  Loaded module = parse_text(text, "escape.relax");
  Loaded original = parse_text(text, "escape.relax");
  ASSERT_TRUE(module && original);
  EXPECT_EQ(run_verified(dpl_passes::seed004_partition_conv_bias_pass(), *module.module).rewrites, 0u);
  EXPECT_TRUE(structurally_equal(*module.module, *original.module));
}

// Where the relu's input has another user, the bias_add escapes the larger match; conv2d + bias_add is carved.
TEST(Seed004Partition, AnEscapingReluInputFallsBackToTheSmallerPattern) {
  const std::string text =
      module_text("x: R.Tensor((1, 3, 8, 8), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\"), "
                  "b: R.Tensor((4,), \"float32\")",
                  {"c = " + conv("NCHW"), "a = R.nn.bias_add(c, b, axis=1)", "r = R.nn.relu(a)", "out = (r, a)"});
  Loaded module = parse_text(text, "fallback.relax");
  Loaded original = parse_text(text, "fallback.relax");
  ASSERT_TRUE(module && original);
  EXPECT_EQ(fired_by_rule(run_verified(dpl_passes::seed004_partition_conv_bias_pass(), *module.module)),
            (std::map<std::string, uint64_t>{{"seed004.conv2d_bias_add_relu", 0}, {"seed004.conv2d_bias_add", 1}}));
  EXPECT_TRUE(verifies_and_rereads(*module.module));
  EXPECT_TRUE(computes_the_same(*original.module, *module.module, 5));
}

// Seed 004's dominator pattern on regions it must carve (a longer path, one path) and on regions it must not: a path
// node with a user outside the region, a path node outside the class, a conv2d used outside, two conv2ds.
struct DominatorCase {
  const char* name;
  std::vector<std::string> bindings;  // after c = conv2d(x, w); the last one is `out`
  uint64_t carved;
};

void PrintTo(const DominatorCase& dominator, std::ostream* out) { *out << dominator.name; }

class Seed004Dominator : public ::testing::TestWithParam<DominatorCase> {};

TEST_P(Seed004Dominator, CarvesExactlyTheDominatedRegions) {
  const DominatorCase& dominator = GetParam();
  std::vector<std::string> bindings = {"c = " + conv("NCHW")};
  bindings.insert(bindings.end(), dominator.bindings.begin(), dominator.bindings.end());
  const std::string text = module_text(
      "x: R.Tensor((1, 3, 8, 8), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\"), v: R.Tensor((4, 3, 3, 3), "
      "\"float32\")",
      bindings);
  Loaded module = parse_text(text, std::string(dominator.name) + ".relax");
  Loaded original = parse_text(text, std::string(dominator.name) + ".relax");
  ASSERT_TRUE(module && original);
  EXPECT_EQ(run_verified(dpl_passes::seed004_partition_conv_elementwise_add_pass(), *module.module).rewrites,
            dominator.carved)
      << text;
  EXPECT_TRUE(verifies_and_rereads(*module.module));
  EXPECT_TRUE(computes_the_same(*original.module, *module.module, 7));
  if (dominator.carved == 0) {
    EXPECT_TRUE(structurally_equal(*module.module, *original.module));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Seed004, Seed004Dominator,
    ::testing::Values(
        DominatorCase{"longer_path", {"r = R.nn.relu(c)", "e = R.exp(r)", "s = R.sigmoid(c)", "out = R.add(e, s)"}, 1},
        DominatorCase{"one_path", {"r = R.nn.relu(c)", "out = R.add(r, r)"}, 1},
        DominatorCase{"path_node_used_outside",
                      {"r = R.nn.relu(c)", "l = R.nn.leaky_relu(c, alpha=0.1)", "a = R.add(r, l)", "out = (a, r)"},
                      0},
        DominatorCase{"path_node_outside_the_class",
                      {"r = R.nn.relu(c)", "m = R.nn.softmax(c, axis=1)", "out = R.add(r, m)"}, 0},
        DominatorCase{"conv_used_outside", {"r = R.nn.relu(c)", "a = R.add(r, r)", "out = (a, c)"}, 0},
        DominatorCase{"two_convs",
                      {"d = " + std::string("R.nn.conv2d(x, v, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], "
                                            "groups=1, data_layout=\"NCHW\", kernel_layout=\"OIHW\", "
                                            "out_layout=\"NCHW\", out_dtype=\"void\")"),
                       "r = R.nn.relu(c)", "s = R.nn.relu(d)", "out = R.add(r, s)"},
                      0}),
    [](const ::testing::TestParamInfo<DominatorCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dpl::example_test
