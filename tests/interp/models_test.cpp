// End to end: the interpreter evaluates each real model of ../shared/models on random inputs and produces finite
// outputs of the declared types, deterministically.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "dpl/interp/interpreter.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"

namespace dpl {
namespace {

const std::string kModelDir = std::string(DPL_SHARED_DIR) + "/models/";

struct LoadedModel {
  std::unique_ptr<SourceFile> source;
  std::unique_ptr<Module> module;
};

LoadedModel load(const std::string& file) {
  LoadedModel model;
  std::string error;
  model.source = SourceFile::load(kModelDir + file, error);
  EXPECT_NE(model.source, nullptr) << error;
  if (model.source == nullptr) return model;
  DiagnosticEngine diags;
  model.module = read_module(*model.source, diags);
  EXPECT_NE(model.module, nullptr) << diags.str();
  return model;
}

// Every tensor of `value` is finite; `type` is the declared result type.
void expect_finite_of_type(const Value& value, TypeRef type, const std::string& path) {
  if (type->is_tuple()) {
    ASSERT_TRUE(value.is_tuple()) << path << ": " << value.type_str();
    ASSERT_EQ(value.fields().size(), type->fields().size()) << path;
    for (size_t i = 0; i < value.fields().size(); ++i) {
      expect_finite_of_type(value.fields()[i], type->fields()[i], path + "[" + std::to_string(i) + "]");
    }
    return;
  }
  ASSERT_TRUE(value.is_tensor()) << path << ": " << value.type_str();
  const Tensor& tensor = value.tensor();
  EXPECT_EQ(tensor.dtype(), type->dtype()) << path;
  ASSERT_TRUE(type->has_shape()) << path;
  ASSERT_EQ(tensor.rank(), type->rank()) << path;
  for (int d = 0; d < tensor.rank(); ++d) EXPECT_EQ(tensor.shape()[d], type->dims()[d].extent()) << path;
  EXPECT_TRUE(tensor.all_finite()) << path << ": " << tensor.str();
  // Not a degenerate output: random weights give varied values.
  const std::vector<double> values = tensor.values();
  EXPECT_NE(*std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end())) << path;
}

// Evaluates `file`'s main on random inputs from `seed`; returns the output.
Value evaluate_model(const std::string& file, uint64_t seed) {
  LoadedModel model = load(file);
  if (model.module == nullptr) return Value();
  const Function* main = model.module->find("main");
  EXPECT_NE(main, nullptr);
  if (main == nullptr) return Value();
  const auto start = std::chrono::steady_clock::now();
  InputsResult inputs = random_inputs(*main, seed);
  EXPECT_TRUE(inputs.ok()) << inputs.error;
  const EvalResult result = Interpreter().evaluate(*model.module, *main, inputs.tensors);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  std::cout << file << ": evaluated in " << elapsed.count() << " s\n";
  EXPECT_TRUE(result.ok()) << result.error;
  if (!result.ok()) return Value();
  expect_finite_of_type(result.value, main->return_type(), "output");
  return result.value;
}

TEST(Models, Bert) {
  const Value first = evaluate_model("bert_base_uncased.relax", 1);
  const Value again = evaluate_model("bert_base_uncased.relax", 1);
  EXPECT_TRUE(compare(again, first, Tolerance{0.0, 0.0})) << "evaluation is not deterministic";
  const Value other_seed = evaluate_model("bert_base_uncased.relax", 2);
  EXPECT_FALSE(compare(other_seed, first));
}

TEST(Models, Vit) { evaluate_model("vit_base_patch16_224.relax", 1); }

TEST(Models, ResNet50) { evaluate_model("resnet50.relax", 1); }

TEST(Models, TinyLlama) { evaluate_model("tinyllama_1_1b_chat.relax", 1); }

}  // namespace
}  // namespace dpl
