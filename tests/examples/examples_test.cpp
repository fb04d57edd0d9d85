// Every bundled example with an input and an expected model (examples/<dir>/<stem>.{dpl,input.relax,
// expected.relax}) through the pass dplc compiled from it: the exact expected result, a well-formed result that
// prints and reads back, the same outputs as the input in the reference interpreter, and nothing left to do.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "add_or_subtract.dpl.h"
#include "attention.dpl.h"
#include "batch_norm.dpl.h"
#include "combine_branches.dpl.h"
#include "combine_parallel_matmuls.dpl.h"
#include "combine_qkv.dpl.h"
#include "commutative.dpl.h"
#include "constant.dpl.h"
#include "data_layout.dpl.h"
#include "diamond.dpl.h"
#include "dpl/ir/analysis.h"
#include "dpl/text/tvmscript.h"
#include "example_support.h"
#include "keep_original.dpl.h"
#include "kernel_size.dpl.h"
#include "op_class.dpl.h"
#include "optional.dpl.h"
#include "plus_zero.dpl.h"
#include "tuple_item.dpl.h"
#include "tuples.dpl.h"
#include "types.dpl.h"
#include "variadic.dpl.h"

namespace dpl::example_test {
namespace {

struct Example {
  const char* dir;   // examples/<dir>/
  const char* stem;  // <stem>.dpl, <stem>.input.relax, <stem>.expected.relax
  const PassDef& (*pass)();
  uint64_t rewrites;
  // The input the interpreter evaluates, in the example's directory, when it cannot evaluate the example's own
  // (seed 000's attention: 2x4096x8x40 is too big; the commutative example has no dtype); it must give the same
  // number of rewrites.
  const char* numeric_input = nullptr;
  const char* positive_params = "";  // parameters drawn from [0.5, 1.5) (see positive())
  // The seed's rewrite deliberately changes what the graph computes (1.0 becomes 2.0): the interpreter must see it.
  bool changes_values = false;
};

void PrintTo(const Example& example, std::ostream* out) { *out << example.dir << "/" << example.stem; }

std::string example_path(const Example& example, const char* suffix) {
  return std::string(DPL_EXAMPLES_DIR) + "/" + example.dir + "/" + example.stem + suffix;
}

class BundledExample : public ::testing::TestWithParam<Example> {};

TEST_P(BundledExample, PassIsRegisteredUnderItsName) {
  const PassDef& pass = GetParam().pass();
  EXPECT_EQ(PassRegistry::find(pass.name), &pass);
  EXPECT_EQ(pass.source, std::string(GetParam().stem) + ".dpl");
}

// dplc gives each pass the driver's loop with its matcher inlined (PassDef::sweep); the other tests run through it.
TEST_P(BundledExample, RunsItsOwnSweep) { EXPECT_NE(GetParam().pass().sweep, nullptr); }

TEST_P(BundledExample, GivesTheExpectedResult) {
  const Example& example = GetParam();
  Loaded input = load_file(example_path(example, ".input.relax"));
  Loaded expected = load_file(example_path(example, ".expected.relax"));
  ASSERT_TRUE(input && expected);
  const PassStats stats = run_verified(example.pass(), *input.module);
  EXPECT_EQ(stats.rewrites, example.rewrites);
  const EqualityResult equal = structurally_equal(*input.module, *expected.module);
  EXPECT_TRUE(equal) << equal.difference << "\n" << print_module(*input.module);
  EXPECT_TRUE(verifies_and_rereads(*input.module));
}

TEST_P(BundledExample, ComputesWhatTheInputComputes) {
  const Example& example = GetParam();
  const std::string input = example.numeric_input != nullptr
                                ? std::string(DPL_EXAMPLES_DIR) + "/" + example.dir + "/" + example.numeric_input
                                : example_path(example, ".input.relax");
  Loaded original = load_file(input);
  Loaded rewritten = load_file(input);
  ASSERT_TRUE(original && rewritten);
  EXPECT_EQ(run_verified(example.pass(), *rewritten.module).rewrites, example.rewrites);
  const InputOptions options = positive(example.positive_params);
  for (uint64_t seed : {1, 2}) {
    const ::testing::AssertionResult same = computes_the_same(*original.module, *rewritten.module, seed, options);
    if (example.changes_values) {
      EXPECT_FALSE(same);
    } else {
      EXPECT_TRUE(same);
    }
  }
}

TEST_P(BundledExample, ASecondRunChangesNothing) {
  Loaded expected = load_file(example_path(GetParam(), ".expected.relax"));
  ASSERT_TRUE(expected);
  EXPECT_EQ(run_verified(GetParam().pass(), *expected.module).rewrites, 0u);
}

using dpl_passes::seed000_attention_pass;
using dpl_passes::seed000_commutative_pass;
using dpl_passes::seed000_keep_original_pass;

INSTANTIATE_TEST_SUITE_P(
    Seed000, BundledExample,
    ::testing::Values(Example{"seed000", "attention", seed000_attention_pass, 1, "attention.small.input.relax"},
                      Example{"seed000", "commutative", seed000_commutative_pass, 1,
                              "commutative.float32.input.relax", "", true},
                      // The rule declines: the result is the input itself (expected == input).
                      Example{"seed000", "keep_original", seed000_keep_original_pass, 0}),
    [](const ::testing::TestParamInfo<Example>& info) { return std::string(info.param.stem); });

INSTANTIATE_TEST_SUITE_P(
    Seed002, BundledExample,
    ::testing::Values(
        // The three projections of the seed's example, one weight transposed twice (defined after the first
        // matmul): the concat is placed after all three weights.
        Example{"seed002", "combine_qkv", dpl_passes::seed002_combine_qkv_pass, 1},
        // Three matmuls with constant weights on x, two with parameter weights on y.
        Example{"seed002", "combine_parallel_matmuls", dpl_passes::seed002_combine_parallel_matmuls_pass, 2},
        // Two matmul + bias branches on x (the bias on either side of add), three relu(matmul) branches on y.
        Example{"seed002", "combine_branches", dpl_passes::seed002_combine_branches_pass, 2}),
    [](const ::testing::TestParamInfo<Example>& info) { return std::string(info.param.stem); });

INSTANTIATE_TEST_SUITE_P(
    Seed004, BundledExample,
    ::testing::Values(
        // a + 0 and b - 0.
        Example{"seed004", "add_or_subtract", dpl_passes::seed004_add_or_subtract_zero_pass, 2},
        // add(a, b) of two transposes, then maximum(transposed sum, a).
        Example{"seed004", "op_class", dpl_passes::seed004_binary_op_of_transposes_pass, 2},
        Example{"seed004", "data_layout", dpl_passes::seed004_nhwc_conv2d_to_nchw_pass, 1},
        // The 3x3 convolution, not the 1x1 one after it.
        Example{"seed004", "kernel_size", dpl_passes::seed004_3x3_kernels_to_hwio_pass, 1},
        // The mean of the relu and the mean of the bias_add.
        Example{"seed004", "optional", dpl_passes::seed004_conv_block_global_pool_pass, 2},
        // astype, then the reshape it fed, then conv2d + relu.
        Example{"seed004", "types", dpl_passes::seed004_types_pass, 3},
        // The left nesting, then the right one; the three-field concat it makes is left alone.
        Example{"seed004", "tuples", dpl_passes::seed004_flatten_concat_pass, 2},
        // The same for tuples of any length: (a, b, c) into (abc, d), that into (abcd, a, b).
        Example{"seed004", "variadic", dpl_passes::seed004_flatten_concat_any_pass, 2},
        Example{"seed004", "tuple_item", dpl_passes::seed004_decompose_batch_norm_relu_pass, 1},
        Example{"seed004", "constant", dpl_passes::seed004_constant_conv_bias_to_add_pass, 1},
        // x + 0.0 and 0 + i (int64).
        Example{"seed004", "plus_zero", dpl_passes::seed004_plus_zero_pass, 2},
        Example{"seed004", "diamond", dpl_passes::seed004_relu_plus_leaky_relu_pass, 1},
        Example{"seed004", "batch_norm", dpl_passes::seed004_fold_batch_norm_pass, 1, nullptr, "var"}),
    [](const ::testing::TestParamInfo<Example>& info) { return std::string(info.param.stem); });

}  // namespace
}  // namespace dpl::example_test
