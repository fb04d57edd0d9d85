// Seed 004's single-root patterns on more graphs than the bundled inputs: the graphs each pattern must match and
// those it must not (the seed's `assert pattern.match(...)` / `assert not ...`), adapted to Relax. Every graph a
// rule rewrites is also evaluated before and after by the reference interpreter.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "add_or_subtract.dpl.h"
#include "batch_norm.dpl.h"
#include "constant.dpl.h"
#include "data_layout.dpl.h"
#include "diamond.dpl.h"
#include "example_support.h"
#include "kernel_size.dpl.h"
#include "op_class.dpl.h"
#include "optional.dpl.h"
#include "plus_zero.dpl.h"
#include "tuple_item.dpl.h"
#include "tuples.dpl.h"
#include "types.dpl.h"

namespace dpl::example_test {
namespace {

struct MatchCase {
  const char* name;  // test name suffix
  const PassDef& (*pass)();
  uint64_t rewrites;  // 0: the pattern must not match
  const char* dataflow;  // the bindings of main's dataflow block, the last one named `out`
  const char* params;    // main's parameters
  const char* positive_params = "";  // drawn from [0.5, 1.5) (see positive())
};

void PrintTo(const MatchCase& match, std::ostream* out) { *out << match.name; }

// A whole function around the case's parameters and bindings.
std::string function_text(const MatchCase& match) {
  std::string text = "@R.function\ndef main(" + std::string(match.params) + "):\n    with R.dataflow():\n";
  std::string bindings = match.dataflow;
  size_t start = 0;
  while (start < bindings.size()) {
    size_t end = bindings.find('\n', start);
    if (end == std::string::npos) end = bindings.size();
    if (end > start) text += "        " + bindings.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return text + "        R.output(out)\n    return out\n";
}

class Seed004Match : public ::testing::TestWithParam<MatchCase> {};

TEST_P(Seed004Match, RewritesExactlyTheMatchingGraphs) {
  const MatchCase& match = GetParam();
  const std::string text = function_text(match);
  Loaded original = parse_text(text, std::string(match.name) + ".relax");
  Loaded rewritten = parse_text(text, std::string(match.name) + ".relax");
  ASSERT_TRUE(original && rewritten);
  EXPECT_EQ(run_verified(match.pass(), *rewritten.module).rewrites, match.rewrites) << text;
  EXPECT_TRUE(verifies_and_rereads(*rewritten.module));
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 11, positive(match.positive_params))) << text;
}

using namespace dpl_passes;

#define F32(shape) "R.Tensor(" shape ", \"float32\")"

INSTANTIATE_TEST_SUITE_P(
    Seed004, Seed004Match,
    ::testing::Values(
        // --- one of two ops: add and subtract match, the constant on either side of add
        MatchCase{"zero_plus_x", seed004_add_or_subtract_zero_pass, 1,
                  "out = R.add(R.const(0.0, \"float32\"), x)", "x: " F32("(4,)")},
        MatchCase{"x_minus_int_zero", seed004_add_or_subtract_zero_pass, 1,
                  "out = R.subtract(i, R.const(0, \"int64\"))", "i: R.Tensor((4,), \"int64\")"},
        MatchCase{"zero_minus_x_is_not_x", seed004_add_or_subtract_zero_pass, 0,
                  "out = R.subtract(R.const(0.0, \"float32\"), x)", "x: " F32("(4,)")},
        MatchCase{"x_times_zero_is_neither_op", seed004_add_or_subtract_zero_pass, 0,
                  "out = R.multiply(x, R.const(0.0, \"float32\"))", "x: " F32("(4,)")},
        // a zero that broadcasts x to a larger shape is not a scalar: no match
        MatchCase{"x_plus_zero_tensor", seed004_add_or_subtract_zero_pass, 0,
                  "out = R.add(x, R.const([[0.0], [0.0]], \"float32\"))", "x: " F32("(4,)")},

        // --- op class: nn.dense and matmul are opaque, not in the class `broadcast`
        MatchCase{"dense_of_transposes", seed004_binary_op_of_transposes_pass, 0,
                  "out = R.nn.dense(R.permute_dims(x, axes=[1, 0]), R.permute_dims(w, axes=[1, 0]))",
                  "x: " F32("(2, 3)") ", w: " F32("(2, 4)")},
        MatchCase{"matmul_of_transposes", seed004_binary_op_of_transposes_pass, 0,
                  "out = R.matmul(R.permute_dims(x, axes=[1, 0]), R.permute_dims(w, axes=[1, 0]))",
                  "x: " F32("(3, 2)") ", w: " F32("(4, 3)")},
        MatchCase{"divide_of_transposes", seed004_binary_op_of_transposes_pass, 1,
                  "out = R.divide(R.permute_dims(x, axes=[2, 0, 1]), R.permute_dims(y, axes=[2, 0, 1]))",
                  "x: " F32("(2, 3, 4)") ", y: " F32("(1, 3, 1)")},
        MatchCase{"transposes_of_different_ranks", seed004_binary_op_of_transposes_pass, 0,
                  "out = R.add(R.permute_dims(x), R.permute_dims(y))", "x: " F32("(2, 3)") ", y: " F32("(2,)")},
        // bias_add is in the class and has an attribute: the rule copies it (`**r`), so the bias_add it builds
        // keeps axis=0 (before the rule copied attributes, the default axis=1 failed type inference and it declined).
        MatchCase{"bias_add_of_transposes", seed004_binary_op_of_transposes_pass, 1,
                  "out = R.nn.bias_add(R.permute_dims(x, axes=[0]), R.permute_dims(b, axes=[0]), axis=0)",
                  "x: " F32("(3,)") ", b: " F32("(3,)")},
        MatchCase{"different_transposes", seed004_binary_op_of_transposes_pass, 0,
                  "out = R.add(R.permute_dims(x, axes=[1, 0, 2]), R.permute_dims(y, axes=[0, 2, 1]))",
                  "x: " F32("(2, 2, 2)") ", y: " F32("(2, 2, 2)")},

        // --- data_layout="NHWC": a default (NCHW) conv2d does not match
        MatchCase{"default_conv2d_is_nchw", seed004_nhwc_conv2d_to_nchw_pass, 0, "out = R.nn.conv2d(x, w)",
                  "x: " F32("(1, 3, 8, 8)") ", w: " F32("(4, 3, 3, 3)")},
        MatchCase{"nhwc_strided_grouped", seed004_nhwc_conv2d_to_nchw_pass, 1,
                  "out = R.nn.conv2d(x, w, strides=[2, 1], padding=[1, 0, 1, 2], groups=2, data_layout=\"NHWC\", "
                  "kernel_layout=\"OHWI\")",
                  "x: " F32("(1, 9, 7, 4)") ", w: " F32("(6, 3, 3, 2)")},
        MatchCase{"nhwc_with_explicit_out_layout", seed004_nhwc_conv2d_to_nchw_pass, 0,
                  "out = R.nn.conv2d(x, w, data_layout=\"NHWC\", out_layout=\"NCHW\")",
                  "x: " F32("(1, 8, 8, 3)") ", w: " F32("(4, 3, 3, 3)")},

        // --- kernel size 3x3, read from the OIHW weight's type
        MatchCase{"kernel_1x1", seed004_3x3_kernels_to_hwio_pass, 0, "out = R.nn.conv2d(x, w)",
                  "x: " F32("(1, 3, 8, 8)") ", w: " F32("(4, 3, 1, 1)")},
        MatchCase{"kernel_3x3_nhwc_dilated", seed004_3x3_kernels_to_hwio_pass, 1,
                  "out = R.nn.conv2d(x, w, dilation=[2, 2], data_layout=\"NHWC\")",
                  "x: " F32("(1, 9, 9, 3)") ", w: " F32("(4, 3, 3, 3)")},
        MatchCase{"kernel_3x3_already_hwio", seed004_3x3_kernels_to_hwio_pass, 0,
                  "out = R.nn.conv2d(x, w, kernel_layout=\"HWIO\")",
                  "x: " F32("(1, 3, 8, 8)") ", w: " F32("(3, 3, 3, 3)")},

        // --- optional relu: with and without; not without the bias_add, not over other axes
        MatchCase{"conv_bias_relu", seed004_conv_block_global_pool_pass, 1,
                  "out = R.mean(R.nn.relu(R.nn.bias_add(R.nn.conv2d(x, w), b)), axis=[2, 3], keepdims=True)",
                  "x: " F32("(2, 3, 6, 6)") ", w: " F32("(4, 3, 3, 3)") ", b: " F32("(4,)")},
        MatchCase{"conv_bias", seed004_conv_block_global_pool_pass, 1,
                  "out = R.mean(R.nn.bias_add(R.nn.conv2d(x, w), b), axis=[2, 3], keepdims=True)",
                  "x: " F32("(2, 3, 6, 6)") ", w: " F32("(4, 3, 3, 3)") ", b: " F32("(4,)")},
        MatchCase{"conv_relu_without_bias", seed004_conv_block_global_pool_pass, 0,
                  "out = R.mean(R.nn.relu(R.nn.conv2d(x, w)), axis=[2, 3], keepdims=True)",
                  "x: " F32("(2, 3, 6, 6)") ", w: " F32("(4, 3, 3, 3)")},
        MatchCase{"conv_bias_sigmoid", seed004_conv_block_global_pool_pass, 0,
                  "out = R.mean(R.sigmoid(R.nn.bias_add(R.nn.conv2d(x, w), b)), axis=[2, 3], keepdims=True)",
                  "x: " F32("(2, 3, 6, 6)") ", w: " F32("(4, 3, 3, 3)") ", b: " F32("(4,)")},
        MatchCase{"mean_over_channels", seed004_conv_block_global_pool_pass, 0,
                  "out = R.mean(R.nn.bias_add(R.nn.conv2d(x, w), b), axis=[1], keepdims=True)",
                  "x: " F32("(2, 3, 6, 6)") ", w: " F32("(4, 3, 3, 3)") ", b: " F32("(4,)")},

        // --- types
        MatchCase{"astype_float16_to_float32", seed004_types_pass, 0, "out = R.astype(x, dtype=\"float32\")",
                  "x: R.Tensor((10, 10), \"float16\")"},
        MatchCase{"reshape_10x10_to_100", seed004_types_pass, 0, "out = R.reshape(x, R.shape([100]))",
                  "x: " F32("(10, 10)")},
        MatchCase{"reshape_5x20_to_10x10", seed004_types_pass, 0, "out = R.reshape(x, R.shape([10, 10]))",
                  "x: " F32("(5, 20)")},
        MatchCase{"conv2d_relu_1x32x28x28", seed004_types_pass, 1,
                  "out = R.nn.relu(R.nn.conv2d(x, w, strides=[1, 1], padding=[1, 1, 1, 1]))",
                  "x: " F32("(1, 3, 28, 28)") ", w: " F32("(32, 3, 3, 3)")},
        MatchCase{"conv2d_relu_1x32x26x26", seed004_types_pass, 0, "out = R.nn.relu(R.nn.conv2d(x, w))",
                  "x: " F32("(1, 3, 28, 28)") ", w: " F32("(32, 3, 3, 3)")},

        // --- tuples: fields counted exactly, the axes must agree
        MatchCase{"concat_of_three", seed004_flatten_concat_pass, 0, "out = R.concat((a, b, a), axis=0)",
                  "a: " F32("(2, 3)") ", b: " F32("(2, 3)")},
        MatchCase{"nested_concat_other_axis", seed004_flatten_concat_pass, 0,
                  "out = R.concat((R.concat((a, b), axis=1), c), axis=0)",
                  "a: " F32("(2, 3)") ", b: " F32("(2, 3)") ", c: " F32("(2, 6)")},
        MatchCase{"nested_concat_negative_axis", seed004_flatten_concat_pass, 1,
                  "out = R.concat((a, R.concat((b, a), axis=-1)), axis=-1)",
                  "a: " F32("(2, 3)") ", b: " F32("(2, 1)")},

        // --- tuple item 0 of an inference batch_norm under relu
        MatchCase{"relu_of_batch_norm_item_1", seed004_decompose_batch_norm_relu_pass, 0,
                  "bn = R.nn.batch_norm(x, g, b, m, v, training=False)\nout = R.nn.relu(bn[1])",
                  "x: " F32("(1, 4, 2, 2)") ", g: " F32("(4,)") ", b: " F32("(4,)") ", m: " F32("(4,)")
                  ", v: " F32("(4,)")},
        MatchCase{"relu_of_training_batch_norm", seed004_decompose_batch_norm_relu_pass, 0,
                  "bn = R.nn.batch_norm(x, g, b, m, v, training=True)\nout = R.nn.relu(bn[0])",
                  "x: " F32("(1, 4, 2, 2)") ", g: " F32("(4,)") ", b: " F32("(4,)") ", m: " F32("(4,)")
                  ", v: " F32("(4,)")},
        MatchCase{"relu_of_batch_norm_epsilon_1e-3", seed004_decompose_batch_norm_relu_pass, 0,
                  "bn = R.nn.batch_norm(x, g, b, m, v, epsilon=0.001, training=False)\nout = R.nn.relu(bn[0])",
                  "x: " F32("(1, 4, 2, 2)") ", g: " F32("(4,)") ", b: " F32("(4,)") ", m: " F32("(4,)")
                  ", v: " F32("(4,)")},
        MatchCase{"relu_of_batch_norm_2x4x3x3", seed004_decompose_batch_norm_relu_pass, 1,
                  "bn = R.nn.batch_norm(x, g, b, m, v, epsilon=1e-05, training=False)\nout = R.nn.relu(bn[0])",
                  "x: " F32("(2, 4, 3, 3)") ", g: " F32("(4,)") ", b: " F32("(4,)") ", m: " F32("(4,)")
                  ", v: " F32("(4,)")},

        // --- constant weight: a parameter weight does not match (the seed's first assert)
        MatchCase{"conv_weight_is_a_parameter", seed004_constant_conv_bias_to_add_pass, 0,
                  "out = R.nn.bias_add(R.nn.conv2d(x, w), b)",
                  "x: " F32("(1, 3, 8, 8)") ", w: " F32("(3, 3, 3, 3)") ", b: " F32("(3,)")},
        MatchCase{"conv_weight_is_a_constant", seed004_constant_conv_bias_to_add_pass, 1,
                  "out = R.nn.bias_add(R.nn.conv2d(x, R.const([[[[0.5, -1.0], [2.0, 0.25]]], [[[1.0, 0.0], "
                  "[-0.5, 3.0]]]], \"float32\")), b)",
                  "x: " F32("(1, 1, 5, 5)") ", b: " F32("(2,)")},

        // --- plus zero (either zero, either side), but not other values or ops
        MatchCase{"x_plus_int_zero", seed004_plus_zero_pass, 1, "out = R.add(x, R.const(0, \"int32\"))",
                  "x: R.Tensor((3,), \"int32\")"},
        MatchCase{"x_plus_one", seed004_plus_zero_pass, 0, "out = R.add(x, R.const(1.0, \"float32\"))",
                  "x: " F32("(3,)")},
        MatchCase{"x_minus_zero", seed004_plus_zero_pass, 0, "out = R.subtract(x, R.const(0.0, \"float32\"))",
                  "x: " F32("(3,)")},

        // --- diamond: both paths from one conv2d of variables
        MatchCase{"diamond_alpha_0_2", seed004_relu_plus_leaky_relu_pass, 1,
                  "c = R.nn.conv2d(x, w)\nout = R.add(R.nn.leaky_relu(c, alpha=0.2), R.nn.relu(c))",
                  "x: " F32("(1, 2, 5, 5)") ", w: " F32("(3, 2, 3, 3)")},
        MatchCase{"two_convolutions", seed004_relu_plus_leaky_relu_pass, 0,
                  "out = R.add(R.nn.relu(R.nn.conv2d(x, w)), R.nn.leaky_relu(R.nn.conv2d(x, w), alpha=0.2))",
                  "x: " F32("(1, 2, 5, 5)") ", w: " F32("(3, 2, 3, 3)")},
        MatchCase{"conv_of_a_computed_input", seed004_relu_plus_leaky_relu_pass, 0,
                  "c = R.nn.conv2d(R.exp(x), w)\nout = R.add(R.nn.relu(c), R.nn.leaky_relu(c, alpha=0.2))",
                  "x: " F32("(1, 2, 5, 5)") ", w: " F32("(3, 2, 3, 3)")},

        // --- batch norm written out: (N, C) with (C,) statistics only, eps a scalar constant
        MatchCase{"batch_norm_arithmetic_eps_1e-3", seed004_fold_batch_norm_pass, 1,
                  "out = R.add(R.divide(R.multiply(R.subtract(x, m), g), R.sqrt(R.add(R.const(0.001, "
                  "\"float32\"), v))), b)",
                  "x: " F32("(3, 5)") ", g: " F32("(5,)") ", b: " F32("(5,)") ", m: " F32("(5,)")
                  ", v: " F32("(5,)"), "v"},
        MatchCase{"batch_norm_arithmetic_nchw", seed004_fold_batch_norm_pass, 0,
                  "out = R.add(R.divide(R.multiply(g, R.subtract(x, m)), R.sqrt(R.add(v, R.const(1e-05, "
                  "\"float32\")))), b)",
                  "x: " F32("(1, 5, 2, 5)") ", g: " F32("(5,)") ", b: " F32("(5,)") ", m: " F32("(5,)")
                  ", v: " F32("(5,)"), "v"},
        MatchCase{"batch_norm_arithmetic_eps_parameter", seed004_fold_batch_norm_pass, 0,
                  "out = R.add(R.divide(R.multiply(g, R.subtract(x, m)), R.sqrt(R.add(v, eps))), b)",
                  "x: " F32("(3, 5)") ", g: " F32("(5,)") ", b: " F32("(5,)") ", m: " F32("(5,)")
                  ", v: " F32("(5,)") ", eps: " F32("()"), "v eps"}),
    [](const ::testing::TestParamInfo<MatchCase>& info) {
      std::string name = info.param.name;
      for (char& c : name) {
        if (c == '-' || c == '.') c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace dpl::example_test
