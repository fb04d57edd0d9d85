// ONNX's own node tests (libonnx-testdata) through the importer: the ops each maps to, the types, and the numbers
// the reference interpreter computes on the test's inputs against the outputs ONNX recorded.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dpl/interp/interpreter.h"
#include "dpl/ir/analysis.h"
#include "dpl/text/tvmscript.h"
#include "import_test_util.h"

namespace dpl::import_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct NodeCase {
  std::string test;                  // directory under kNodeTests
  std::set<std::string> ops;         // exactly the ops the graph must call
  std::set<std::string> constants;   // graph inputs specialized to the test's values (shapes, axes, bounds)
};

// Resize's roi, scales and sizes: the node tests pass them as graph inputs.
const std::set<std::string> kResizeInputs = {"roi", "scales", "sizes"};

std::ostream& operator<<(std::ostream& out, const NodeCase& node_case) { return out << node_case.test; }

Literal read_literal(const fs::path& path) {
  std::string error;
  std::unique_ptr<SourceFile> file = SourceFile::load(path.string(), error);
  Literal literal;
  EXPECT_NE(file, nullptr) << error;
  if (file != nullptr) {
    EXPECT_TRUE(read_onnx_tensor(*file, literal, error)) << error;
  }
  return literal;
}

Tensor tensor_of(const Literal& literal) { return Tensor::from_values(literal.dtype, literal.shape, literal.values); }

// The test's tensors `prefix_0.pb`, `prefix_1.pb`, ... in order.
std::vector<Literal> read_data(const fs::path& dir, const std::string& prefix) {
  std::vector<Literal> literals;
  for (int i = 0; fs::exists(dir / (prefix + "_" + std::to_string(i) + ".pb")); ++i)
    literals.push_back(read_literal(dir / (prefix + "_" + std::to_string(i) + ".pb")));
  return literals;
}

// The names of a node test's graph inputs, in order: the parameters of a plain import (every input is one there).
std::vector<std::string> input_names(const fs::path& model) {
  std::unique_ptr<Imported> plain = import_file(model);
  std::vector<std::string> names;
  if (plain->module != nullptr)
    for (const Node* param : plain->module->functions()[0]->params()) names.push_back(param->name());
  return names;
}

class OnnxNodeTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(OnnxNodeTest, MapsAndComputesWhatOnnxRecorded) {
  const NodeCase& node_case = GetParam();
  const fs::path dir = kNodeTests / node_case.test;
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " is missing: install libonnx-testdata (bootstrap.sh)";
  std::vector<Literal> inputs = read_data(dir / "test_data_set_0", "input");
  std::vector<Literal> outputs = read_data(dir / "test_data_set_0", "output");
  const std::vector<std::string> names = input_names(dir / "model.onnx");
  ASSERT_EQ(names.size(), inputs.size());

  OnnxImportOptions options;
  std::vector<Tensor> args;
  for (size_t i = 0; i < names.size(); ++i) {
    if (node_case.constants.contains(names[i]))
      options.constant_inputs[names[i]] = inputs[i];
    else
      args.push_back(tensor_of(inputs[i]));
  }
  std::unique_ptr<Imported> imported = import_file(dir / "model.onnx", options);
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  const Function& main = *imported->module->functions()[0];
  EXPECT_EQ(verify(*imported->module), "");
  std::set<std::string> ops;
  for (const auto& [op, count] : op_counts(main)) ops.insert(op);
  EXPECT_EQ(ops, node_case.ops) << print_module(*imported->module);
  EXPECT_TRUE(imported->stats.opaque_ops.empty());

  // The interpreter checks every value against its inferred type; compare() checks the outputs' dtypes, shapes
  // and values against what ONNX recorded.
  Interpreter interpreter;
  EvalResult result = interpreter.evaluate(*imported->module, main, args);
  ASSERT_TRUE(result.ok()) << result.error << "\n" << print_module(*imported->module);
  std::vector<Value> expected;
  for (const Literal& output : outputs) expected.push_back(tensor_of(output));
  const Value want = expected.size() == 1 ? expected[0] : Value::tuple(expected);
  ValueComparison comparison = compare(result.value, want, Tolerance{1e-5, 1e-4});
  EXPECT_TRUE(comparison) << comparison.str();
}

INSTANTIATE_TEST_SUITE_P(
    Node, OnnxNodeTest,
    ::testing::Values(NodeCase{"test_matmul_2d", {"matmul"}, {}},
                      NodeCase{"test_gemm_default_no_bias", {"matmul"}, {}},
                      NodeCase{"test_gemm_all_attributes", {"permute_dims", "matmul", "multiply", "add"}, {}},
                      NodeCase{"test_conv_with_strides_padding", {"nn.conv2d"}, {}},
                      NodeCase{"test_relu", {"nn.relu"}, {}},
                      NodeCase{"test_softmax_axis_1", {"nn.softmax"}, {}},
                      NodeCase{"test_softmax_example", {"nn.softmax"}, {}},
                      NodeCase{"test_transpose_default", {"permute_dims"}, {}},
                      NodeCase{"test_concat_2d_axis_0", {"concat"}, {}},
                      NodeCase{"test_batchnorm_example", {"nn.batch_norm"}, {}},
                      NodeCase{"test_split_equal_parts_1d", {"split"}, {}},
                      NodeCase{"test_reshape_negative_dim", {"reshape"}, {"shape"}},
                      NodeCase{"test_reduce_mean_keepdims_example", {"mean"}, {}},
                      NodeCase{"test_unsqueeze_axis_0", {"expand_dims"}, {"axes"}},
                      NodeCase{"test_squeeze", {"squeeze"}, {"axes"}},
                      NodeCase{"test_flatten_axis1", {"reshape"}, {}},
                      NodeCase{"test_maxpool_2d_pads", {"nn.max_pool2d"}, {}},
                      NodeCase{"test_averagepool_2d_pads", {"nn.avg_pool2d"}, {}},
                      NodeCase{"test_globalaveragepool", {"mean"}, {}},
                      NodeCase{"test_clip", {"clip"}, {"min", "max"}},
                      NodeCase{"test_cast_FLOAT_to_DOUBLE", {"astype"}, {}},
                      NodeCase{"test_erf", {"erf"}, {}},
                      NodeCase{"test_sigmoid", {"sigmoid"}, {}},
                      NodeCase{"test_tanh", {"tanh"}, {}},
                      NodeCase{"test_sqrt", {"sqrt"}, {}},
                      NodeCase{"test_pow", {"power"}, {}},
                      NodeCase{"test_add_bcast", {"add"}, {}},
                      NodeCase{"test_sub", {"subtract"}, {}},
                      NodeCase{"test_mul", {"multiply"}, {}},
                      NodeCase{"test_div", {"divide"}, {}},
                      NodeCase{"test_hardsigmoid", {"multiply", "add", "clip"}, {}},
                      NodeCase{"test_hardswish", {"multiply", "add", "clip"}, {}},
                      NodeCase{"test_convtranspose", {"nn.conv2d_transpose"}, {}},
                      NodeCase{"test_convtranspose_dilations", {"nn.conv2d_transpose"}, {}},
                      NodeCase{"test_convtranspose_kernel_shape", {"nn.conv2d_transpose"}, {}},
                      NodeCase{"test_convtranspose_output_shape", {"nn.conv2d_transpose"}, {}},
                      NodeCase{"test_convtranspose_pad", {"nn.conv2d_transpose"}, {}},
                      NodeCase{"test_convtranspose_pads", {"nn.conv2d_transpose"}, {}},
                      NodeCase{"test_convtranspose_with_kernel", {"nn.conv2d_transpose"}, {}},
                      NodeCase{"test_resize_downsample_sizes_cubic", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_downsample_sizes_linear_pytorch_half_pixel", {"image.resize2d"},
                               kResizeInputs},
                      NodeCase{"test_resize_downsample_sizes_nearest", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn", {"image.resize2d"},
                               kResizeInputs},
                      NodeCase{"test_resize_upsample_scales_cubic", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", {"image.resize2d"},
                               kResizeInputs},
                      NodeCase{"test_resize_upsample_scales_cubic_align_corners", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_scales_cubic_asymmetric", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_scales_linear", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_scales_linear_align_corners", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_scales_nearest", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_sizes_cubic", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_sizes_nearest", {"image.resize2d"}, kResizeInputs},
                      NodeCase{"test_resize_upsample_sizes_nearest_ceil_half_pixel", {"image.resize2d"},
                               kResizeInputs},
                      NodeCase{"test_resize_upsample_sizes_nearest_floor_align_corners", {"image.resize2d"},
                               kResizeInputs},
                      NodeCase{"test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric", {"image.resize2d"},
                               kResizeInputs}),
    [](const ::testing::TestParamInfo<NodeCase>& info) { return info.param.test; });

// Operators without a mapping stay in the graph as opaque calls that keep their attributes and result types.
TEST(OnnxUnknownOp, LstmIsKeptOpaqueWithItsAttributesAndResultTypes) {
  std::unique_ptr<Imported> imported = import_file(kNodeTests / "test_lstm_defaults" / "model.onnx");
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  const Function& main = *imported->module->functions()[0];
  EXPECT_EQ(imported->stats.opaque_ops, (std::map<std::string, size_t>{{"onnx.LSTM", 1}}));
  const Node* lstm = first_call_of(main, "onnx.LSTM");
  ASSERT_NE(lstm, nullptr);
  EXPECT_TRUE(is_onnx_opaque_op(lstm->op()));
  EXPECT_FALSE(is_onnx_opaque_op(op::add));
  const OpInfo& info = OpRegistry::global().get(lstm->op());
  const int hidden_size = info.attr_index("hidden_size");
  ASSERT_GE(hidden_size, 0);
  // The model sets hidden_size; direction keeps the schema's default.
  EXPECT_TRUE(std::holds_alternative<int64_t>(lstm->attr(static_cast<size_t>(hidden_size))));
  EXPECT_EQ(lstm->attr(static_cast<size_t>(info.attr_index("direction"))), AttrValue(std::string("forward")));
  // Two outputs (Y omitted, Y_h): a tuple whose second field is Y_h's declared type.
  ASSERT_TRUE(lstm->type()->is_tuple());
  ASSERT_EQ(lstm->type()->fields().size(), 2u);
  EXPECT_EQ(main.output()->kind(), NodeKind::TupleItem);
  EXPECT_EQ(main.output()->index(), 1);
  EXPECT_EQ(main.output()->type()->str(), "R.Tensor((1, 3, 3), dtype=\"float32\")");

  // Printed and read back in a process that knows the op: the same graph.
  const std::string text = print_module(*imported->module);
  // `R` would shadow the module alias `R`: the printer renames that parameter.
  EXPECT_THAT(text, HasSubstr("R.onnx.LSTM(X, W, p, "));
  SourceFile source("lstm.relax", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> reread = read_module(source, diags);
  ASSERT_NE(reread, nullptr) << diags.str();
  EXPECT_TRUE(structurally_equal(*reread, *imported->module));
}

TEST(OnnxUnknownOp, ConvWithSamePaddingIsKeptOpaque) {
  std::unique_ptr<Imported> imported = import_file(kNodeTests / "test_conv_with_autopad_same" / "model.onnx");
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_EQ(imported->stats.opaque_ops, (std::map<std::string, size_t>{{"onnx.Conv", 1}}));
  const Node* conv = first_call_of(*imported->module->functions()[0], "onnx.Conv");
  ASSERT_NE(conv, nullptr);
  const OpInfo& info = OpRegistry::global().get(conv->op());
  EXPECT_EQ(conv->attr(static_cast<size_t>(info.attr_index("auto_pad"))), AttrValue(std::string("SAME_LOWER")));
  EXPECT_EQ(conv->type()->str(), "R.Tensor((1, 1, 3, 3), dtype=\"float32\")");
}

// Resize and ConvTranspose forms the Relax ops do not express decline: the node stays an opaque call.
TEST(OnnxUnknownOp, ResizeAndConvTransposeFormsWithoutARelaxEqualAreKeptOpaque) {
  const std::vector<std::string> declined = {
      "test_resize_downsample_scales_linear",  // 2 x 4 by 0.6: ONNX maps coordinates by 1/0.6, Relax by 2/1
      "test_resize_tf_crop_and_resize",        // needs roi
      "test_convtranspose_autopad_same",       // SAME_* padding
      "test_convtranspose_1d",                 // only 2-D maps
  };
  for (const std::string& test : declined) {
    const fs::path dir = kNodeTests / test;
    OnnxImportOptions options;
    const std::vector<std::string> names = input_names(dir / "model.onnx");
    const std::vector<Literal> inputs = read_data(dir / "test_data_set_0", "input");
    for (size_t i = 0; i < names.size() && i < inputs.size(); ++i)
      if (kResizeInputs.contains(names[i])) options.constant_inputs[names[i]] = inputs[i];
    std::unique_ptr<Imported> imported = import_file(dir / "model.onnx", options);
    ASSERT_NE(imported->module, nullptr) << test << ": " << imported->diags.str();
    const std::string op_type = test.find("resize") != std::string::npos ? "Resize" : "ConvTranspose";
    // One opaque op (`onnx.Resize`, or `onnx.Resize_2` when another opset's Resize was registered first).
    ASSERT_EQ(imported->stats.opaque_ops.size(), 1u) << test;
    EXPECT_THAT(imported->stats.opaque_ops.begin()->first, ::testing::StartsWith("onnx." + op_type)) << test;
    EXPECT_EQ(imported->stats.mapped_nodes, 0u) << test;
  }
}

}  // namespace
}  // namespace dpl::import_test
