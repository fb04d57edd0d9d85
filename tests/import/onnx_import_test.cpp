// The importer on models built here with ONNX's protobuf API: weights versus literals, opaque custom operators,
// and every kind of bad input (empty, garbage, truncated, undefined values, unsupported dtypes, wrong types).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <limits>
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

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::onnx::TensorProto;

// A model under construction; negative extents in a shape are symbolic dimensions: -1 `n`, -2 `w`, -3 `m`.
class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset = 17) {
    proto_.set_ir_version(8);
    auto* opset_import = proto_.add_opset_import();
    opset_import->set_domain("");
    opset_import->set_version(opset);
    proto_.mutable_graph()->set_name("test");
  }

  void input(const std::string& name, int32_t dtype, const std::vector<int64_t>& shape) {
    describe(proto_.mutable_graph()->add_input(), name, dtype, shape);
  }
  void output(const std::string& name, int32_t dtype, const std::vector<int64_t>& shape) {
    describe(proto_.mutable_graph()->add_output(), name, dtype, shape);
  }
  void value_info(const std::string& name, int32_t dtype, const std::vector<int64_t>& shape) {
    describe(proto_.mutable_graph()->add_value_info(), name, dtype, shape);
  }
  void initializer(const std::string& name, int32_t dtype, const std::vector<int64_t>& shape,
                   const std::vector<double>& values) {
    TensorProto* tensor = proto_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(dtype);
    for (int64_t extent : shape) tensor->add_dims(extent);
    for (double value : values) {
      if (dtype == TensorProto::INT64)
        tensor->add_int64_data(static_cast<int64_t>(value));
      else
        tensor->add_float_data(static_cast<float>(value));
    }
  }
  // Shape(x) -> Gather -> Unsqueeze, as exporters take one extent: extent `index` of `x` as the one-element
  // vector `name`.
  void extent(const std::string& x, int64_t index, const std::string& name) {
    initializer(name + "_index", TensorProto::INT64, {}, {static_cast<double>(index)});
    initializer(name + "_axes", TensorProto::INT64, {1}, {0});
    node("Shape", {x}, {name + "_shape"});
    node("Gather", {name + "_shape", name + "_index"}, {name + "_scalar"});
    node("Unsqueeze", {name + "_scalar", name + "_axes"}, {name});
  }
  ::onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& domain = "") {
    ::onnx::NodeProto* node = proto_.mutable_graph()->add_node();
    node->set_op_type(op_type);
    node->set_name(op_type + "_" + std::to_string(proto_.graph().node_size() - 1));
    node->set_domain(domain);
    for (const std::string& name : inputs) node->add_input(name);
    for (const std::string& name : outputs) node->add_output(name);
    return *node;
  }
  void add_domain(const std::string& domain) {
    auto* opset_import = proto_.add_opset_import();
    opset_import->set_domain(domain);
    opset_import->set_version(1);
  }

  std::unique_ptr<Imported> import(const OnnxImportOptions& options = {}) const {
    auto result = std::make_unique<Imported>();
    result->source = std::make_unique<SourceFile>("built.onnx", proto_.SerializeAsString());
    result->module = import_onnx(*result->source, result->diags, options, &result->stats);
    return result;
  }

 private:
  static void describe(::onnx::ValueInfoProto* info, const std::string& name, int32_t dtype,
                       const std::vector<int64_t>& shape) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(dtype);
    auto* dims = tensor->mutable_shape();
    for (int64_t extent : shape) {
      if (extent < 0)
        dims->add_dim()->set_dim_param(std::string(1, "nwm"[-extent - 1]));
      else
        dims->add_dim()->set_dim_value(extent);
    }
  }
  ::onnx::ModelProto proto_;
};

void set_attr(::onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(::onnx::AttributeProto::INT);
  attr->set_i(value);
}
void set_attr(::onnx::NodeProto& node, const std::string& name, float value) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(::onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::string& value) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(::onnx::AttributeProto::STRING);
  attr->set_s(value);
}
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(::onnx::AttributeProto::INTS);
  for (int64_t value : values) attr->add_ints(value);
}

std::unique_ptr<Imported> import_bytes(std::string bytes) {
  auto result = std::make_unique<Imported>();
  result->source = std::make_unique<SourceFile>("bad.onnx", std::move(bytes));
  result->module = import_onnx(*result->source, result->diags);
  return result;
}

TEST(OnnxImportErrors, EmptyFile) {
  std::unique_ptr<Imported> imported = import_bytes("");
  EXPECT_EQ(imported->module, nullptr);
  EXPECT_EQ(imported->diags.str(), "bad.onnx: error: the file is empty, not an ONNX model\n");
}

TEST(OnnxImportErrors, GarbageBytes) {
  std::unique_ptr<Imported> imported = import_bytes("# from tvm.script import relax as R\n\xff\xfe\x01");
  EXPECT_EQ(imported->module, nullptr);
  EXPECT_THAT(imported->diags.str(), HasSubstr("bad.onnx: error: not an ONNX model"));
}

TEST(OnnxImportErrors, TruncatedModel) {
  std::unique_ptr<Imported> whole = import_file(kNodeTests / "test_conv_with_strides_padding" / "model.onnx");
  ASSERT_NE(whole->module, nullptr) << whole->diags.str();
  const std::string& bytes = whole->source->text();
  for (size_t keep : {bytes.size() / 2, bytes.size() - 3, size_t{7}}) {
    std::unique_ptr<Imported> imported = import_bytes(bytes.substr(0, keep));
    EXPECT_EQ(imported->module, nullptr) << keep;
    EXPECT_THAT(imported->diags.str(), HasSubstr("not an ONNX model")) << keep;
  }
}

TEST(OnnxImportErrors, UndefinedInputNamesTheNode) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {2});
  model.node("Add", {"x", "ghost"}, {"y"});
  model.output("y", TensorProto::FLOAT, {2});
  std::unique_ptr<Imported> imported = model.import();
  EXPECT_EQ(imported->module, nullptr);
  EXPECT_THAT(imported->diags.str(),
              HasSubstr("built.onnx: error: node 0 'Add_0' (Add): input 'ghost' is not produced by an earlier node"));
}

TEST(OnnxImportErrors, OmittedRequiredInputNamesTheNode) {
  OnnxModel model;
  model.initializer("shape", TensorProto::INT64, {1}, {6});
  model.node("Reshape", {"", "shape"}, {"y"});
  model.node("Identity", {""}, {"z"});
  model.output("y", TensorProto::FLOAT, {6});
  model.output("z", TensorProto::FLOAT, {6});
  std::unique_ptr<Imported> imported = model.import();
  EXPECT_EQ(imported->module, nullptr);
  EXPECT_THAT(imported->diags.str(), HasSubstr("node 0 'Reshape_0' (Reshape): input 0 is required"));
  EXPECT_THAT(imported->diags.str(), HasSubstr("node 1 'Identity_1' (Identity): input 0 is required"));
  EXPECT_EQ(imported->diags.error_count(), 2u);
}

TEST(OnnxImportErrors, UnsupportedInputDtype) {
  OnnxModel model;
  model.input("text", TensorProto::STRING, {2});
  model.node("Identity", {"text"}, {"y"});
  model.output("y", TensorProto::STRING, {2});
  std::unique_ptr<Imported> imported = model.import();
  EXPECT_EQ(imported->module, nullptr);
  EXPECT_THAT(imported->diags.str(), HasSubstr("graph input 'text' is not a tensor of a supported dtype (STRING)"));
  EXPECT_EQ(imported->diags.error_count(), 1u) << "the Identity using it is not reported again";
}

TEST(OnnxImportErrors, MappingThatDoesNotTypeCheckNamesTheNode) {
  OnnxModel model;
  model.input("a", TensorProto::FLOAT, {2, 3});
  model.input("b", TensorProto::FLOAT, {4, 5});
  model.node("MatMul", {"a", "b"}, {"c"});
  model.output("c", TensorProto::FLOAT, {2, 5});
  std::unique_ptr<Imported> imported = model.import();
  EXPECT_EQ(imported->module, nullptr);
  EXPECT_THAT(imported->diags.str(), HasSubstr("node 0 'MatMul_0' (MatMul): matmul: "));
}

TEST(OnnxImportErrors, DeclaredTypeThatContradictsTheMapping) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {2, 3});
  model.node("Relu", {"x"}, {"y"});
  model.node("Relu", {"y"}, {"z"});
  model.value_info("y", TensorProto::FLOAT, {3, 2});
  model.output("z", TensorProto::FLOAT, {2, 3});
  std::unique_ptr<Imported> imported = model.import();
  EXPECT_EQ(imported->module, nullptr);
  EXPECT_THAT(imported->diags.str(), HasSubstr("output 'y' has type R.Tensor((2, 3), dtype=\"float32\") but the "
                                               "model declares R.Tensor((3, 2), dtype=\"float32\")"));
}

TEST(OnnxImport, WeightsBecomeParametersAndSmallTensorsLiterals) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {-1, 4});
  model.initializer("w", TensorProto::FLOAT, {4, 6}, std::vector<double>(24, 0.5));
  model.initializer("scale", TensorProto::FLOAT, {}, {2.0});
  model.initializer("shape", TensorProto::INT64, {3}, {0, 2, 3});
  model.node("MatMul", {"x", "w"}, {"xw"});
  model.node("Mul", {"xw", "scale"}, {"scaled"});
  model.node("Reshape", {"scaled", "shape"}, {"y"});
  model.output("y", TensorProto::FLOAT, {-1, 2, 3});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_EQ(verify(*imported->module), "");
  EXPECT_EQ(print_module(*imported->module),
            "# from tvm.script import relax as R\n\n"
            "@R.function\n"
            "def main(x: R.Tensor((\"n\", 4), dtype=\"float32\"), w: R.Tensor((4, 6), dtype=\"float32\")) -> "
            "R.Tensor((\"n\", 2, 3), dtype=\"float32\"):\n"
            "    n = T.int64()\n"
            "    with R.dataflow():\n"
            "        xw: R.Tensor((n, 6), dtype=\"float32\") = R.matmul(x, w, out_dtype=\"void\")\n"
            "        scaled: R.Tensor((n, 6), dtype=\"float32\") = R.multiply(xw, R.const(2.0, \"float32\"))\n"
            "        y: R.Tensor((n, 2, 3), dtype=\"float32\") = R.reshape(scaled, R.shape([n, 2, 3]))\n"
            "        R.output(y)\n"
            "    return y\n");
  EXPECT_EQ(imported->stats.weights, 1u);
  EXPECT_EQ(imported->stats.onnx_nodes, 3u);
  EXPECT_EQ(imported->stats.mapped_nodes, 3u);
  EXPECT_THAT(imported->stats.opaque_ops, IsEmpty());
}

TEST(OnnxImport, ComputedReshapeShapeIsKeptOpaque) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {2, 3});
  model.input("shape", TensorProto::INT64, {2});
  model.node("Reshape", {"x", "shape"}, {"y"});
  model.output("y", TensorProto::FLOAT, {3, 2});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_EQ(imported->stats.opaque_ops, (std::map<std::string, size_t>{{"onnx.Reshape", 1}}));
  EXPECT_EQ(imported->module->functions()[0]->output()->type()->str(), "R.Tensor((3, 2), dtype=\"float32\")");
}

// Shape -> Slice -> Concat -> Reshape, as exporters write a flatten: a shape of the symbolic batch while it is
// symbolic, a literal shape once OnnxImportOptions::dims fixes it.
TEST(OnnxImport, ShapeComputationsFoldWithSymbolicOrFixedInputDims) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {-1, 3, 4});
  model.initializer("starts", TensorProto::INT64, {1}, {0});
  model.initializer("ends", TensorProto::INT64, {1}, {1});
  model.initializer("rest", TensorProto::INT64, {1}, {-1});
  model.node("Shape", {"x"}, {"shape"});
  model.node("Slice", {"shape", "starts", "ends"}, {"batch"});
  set_attr(model.node("Concat", {"batch", "rest"}, {"target"}), "axis", int64_t{0});
  model.node("Reshape", {"x", "target"}, {"y"});
  model.output("y", TensorProto::FLOAT, {-1, 12});

  std::unique_ptr<Imported> symbolic = model.import();
  ASSERT_NE(symbolic->module, nullptr) << symbolic->diags.str();
  EXPECT_THAT(symbolic->stats.opaque_ops, IsEmpty());
  EXPECT_EQ(symbolic->stats.mapped_nodes, 4u);
  EXPECT_EQ(op_counts(*symbolic->module->functions()[0]), (std::map<std::string, int>{{"reshape", 1}}));
  EXPECT_THAT(print_module(*symbolic->module), HasSubstr("y: R.Tensor((n, 12), dtype=\"float32\") = "
                                                         "R.reshape(x, R.shape([n, -1]))"));

  OnnxImportOptions options;
  options.dims = {{"n", 2}};
  std::unique_ptr<Imported> fixed = model.import(options);
  ASSERT_NE(fixed->module, nullptr) << fixed->diags.str();
  EXPECT_THAT(fixed->stats.opaque_ops, IsEmpty());
  EXPECT_EQ(op_counts(*fixed->module->functions()[0]), (std::map<std::string, int>{{"reshape", 1}}));
  EXPECT_THAT(print_module(*fixed->module), HasSubstr("y: R.Tensor((2, 12), dtype=\"float32\") = "
                                                      "R.reshape(x, R.shape([2, -1]))"));
}

// Shape -> Cast -> Gather -> Unsqueeze -> Concat -> Reshape over a symbolic batch and width: the Reshape maps to a
// shape of the model's symbols, its result has their type, the text reads back, and evaluated on a 2 x 3 x 4 x 5
// input the reshape keeps every value in order.
TEST(OnnxImport, SymbolicShapeComputationMapsToReshapeOfSymbols) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {-1, 3, 4, -2});
  model.initializer("first", TensorProto::INT64, {}, {0});
  model.initializer("axes", TensorProto::INT64, {1}, {0});
  model.initializer("channels", TensorProto::INT64, {1}, {12});
  model.node("Shape", {"x"}, {"shape"});
  set_attr(model.node("Cast", {"shape"}, {"shape32"}), "to", int64_t{TensorProto::INT32});
  model.node("Gather", {"shape32", "first"}, {"batch32"});
  model.node("Unsqueeze", {"batch32", "axes"}, {"batch32_1"});
  set_attr(model.node("Cast", {"batch32_1"}, {"batch"}), "to", int64_t{TensorProto::INT64});
  model.extent("x", -1, "width");
  set_attr(model.node("Concat", {"batch", "channels", "width"}, {"target"}), "axis", int64_t{0});
  model.node("Reshape", {"x", "target"}, {"y"});
  model.output("y", TensorProto::FLOAT, {-1, 12, -2});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_EQ(verify(*imported->module), "");
  EXPECT_THAT(imported->stats.opaque_ops, IsEmpty());
  EXPECT_EQ(imported->stats.mapped_nodes, 10u);
  const Function& main = *imported->module->functions()[0];
  EXPECT_EQ(op_counts(main), (std::map<std::string, int>{{"reshape", 1}}));
  EXPECT_THAT(print_module(*imported->module),
              HasSubstr("y: R.Tensor((n, 12, w), dtype=\"float32\") = R.reshape(x, R.shape([n, 12, w]))"));
  expect_text_reads_back(*imported->module, "symbolic.relax");

  InputOptions input_options;
  input_options.dims = {{"n", 2}, {"w", 5}};
  InputsResult inputs = random_inputs(main, 3, input_options);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  EvalResult result = Interpreter().evaluate(*imported->module, main, inputs.tensors);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.value.tensor().shape(), (std::vector<int64_t>{2, 12, 5}));
  EXPECT_EQ(result.value.tensor().values(), inputs.tensors[0].values());
}

// The first Reshape's shape is computed, so ONNX's shape inference knows nothing of its result; dpl's gives it
// (n, w * 6) ((n, 6, w) into (n, -1)). Told the shape the Reshape mapped to, ONNX's inference gives the Relu after it
// the batch n, and the second shape computation reads it there.
TEST(OnnxImport, ReshapedValuesLendTheirShapeToLaterShapeComputations) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {-1, 6, -2});
  model.initializer("rest", TensorProto::INT64, {1}, {-1});
  model.initializer("three_rest", TensorProto::INT64, {2}, {3, -1});
  model.extent("x", 0, "x_batch");
  set_attr(model.node("Concat", {"x_batch", "rest"}, {"rows"}), "axis", int64_t{0});
  model.node("Reshape", {"x", "rows"}, {"y"});
  model.node("Relu", {"y"}, {"r"});
  model.extent("r", 0, "r_batch");
  set_attr(model.node("Concat", {"r_batch", "three_rest"}, {"cube"}), "axis", int64_t{0});
  model.node("Reshape", {"r", "cube"}, {"z"});
  model.output("z", TensorProto::FLOAT, {-1, 3, -3});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_THAT(imported->stats.opaque_ops, IsEmpty());
  const std::string text = print_module(*imported->module);
  EXPECT_THAT(text, HasSubstr("y: R.Tensor((n, w * 6), dtype=\"float32\") = R.reshape(x, R.shape([n, -1]))"));
  EXPECT_THAT(text, HasSubstr("z: R.Tensor((n, 3, w * 2), dtype=\"float32\") = R.reshape(r, R.shape([n, 3, -1]))"));
}

// Slicing a shape backwards, squeezing and unsqueezing one extent: the symbols land where ONNX's semantics put them.
TEST(OnnxImport, ShapeSlicesAndSqueezesKeepTheirSymbols) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {-1, 3, -2});
  model.initializer("last", TensorProto::INT64, {1}, {-1});
  model.initializer("before_first", TensorProto::INT64, {1}, {static_cast<double>(std::numeric_limits<int64_t>::min())});
  model.initializer("zero", TensorProto::INT64, {1}, {0});
  model.initializer("one", TensorProto::INT64, {1}, {1});
  model.initializer("minus_one", TensorProto::INT64, {1}, {-1});
  model.node("Shape", {"x"}, {"shape"});
  model.node("Slice", {"shape", "last", "before_first", "zero", "minus_one"}, {"reversed"});
  model.node("Reshape", {"x", "reversed"}, {"y"});
  model.node("Slice", {"shape", "zero", "one"}, {"batch1"});
  model.node("Squeeze", {"batch1", "zero"}, {"batch"});
  model.node("Unsqueeze", {"batch", "zero"}, {"batch_again"});
  set_attr(model.node("Concat", {"batch_again", "minus_one"}, {"flat"}), "axis", int64_t{0});
  model.node("Reshape", {"x", "flat"}, {"z"});
  model.output("y", TensorProto::FLOAT, {-2, 3, -1});
  model.output("z", TensorProto::FLOAT, {-1, -3});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_THAT(imported->stats.opaque_ops, IsEmpty());
  const std::string text = print_module(*imported->module);
  EXPECT_THAT(text, HasSubstr("y: R.Tensor((w, 3, n), dtype=\"float32\") = R.reshape(x, R.shape([w, 3, n]))"));
  EXPECT_THAT(text, HasSubstr("z: R.Tensor((n, w * 3), dtype=\"float32\") = R.reshape(x, R.shape([n, -1]))"));
}

// Arithmetic on a symbol gives an expression: n * 2 beside a -1 makes the Reshape (n * 2, 3), and nothing stays
// opaque (the Shape is left unused and removed). n * 1 is still n; n / 4 is not exact, so the element is unknown
// and, as the only one, becomes -1.
TEST(OnnxImport, ShapeArithmeticOnSymbolsGivesExpressions) {
  auto import_scaled = [](std::string_view op, double factor) {
    OnnxModel model;
    model.input("x", TensorProto::FLOAT, {-1, 6});
    model.initializer("index", TensorProto::INT64, {1}, {0});
    model.initializer("factor", TensorProto::INT64, {1}, {factor});
    model.initializer("rest", TensorProto::INT64, {1}, {-1});
    model.node("Shape", {"x"}, {"shape"});
    model.node("Gather", {"shape", "index"}, {"batch"});
    model.node(std::string(op), {"batch", "factor"}, {"scaled"});
    set_attr(model.node("Concat", {"scaled", "rest"}, {"target"}), "axis", int64_t{0});
    model.node("Reshape", {"x", "target"}, {"y"});
    model.output("y", TensorProto::FLOAT, {-3, -2});
    return model.import();
  };
  std::unique_ptr<Imported> doubled = import_scaled("Mul", 2);
  ASSERT_NE(doubled->module, nullptr) << doubled->diags.str();
  EXPECT_THAT(doubled->stats.opaque_ops, IsEmpty());
  EXPECT_THAT(print_module(*doubled->module),
              HasSubstr("y: R.Tensor((n * 2, 3), dtype=\"float32\") = R.reshape(x, R.shape([n * 2, -1]))"));

  std::unique_ptr<Imported> shifted = import_scaled("Sub", 1);
  ASSERT_NE(shifted->module, nullptr) << shifted->diags.str();
  EXPECT_THAT(print_module(*shifted->module), HasSubstr("R.reshape(x, R.shape([n - 1, -1]))"));

  std::unique_ptr<Imported> same = import_scaled("Mul", 1);
  ASSERT_NE(same->module, nullptr) << same->diags.str();
  EXPECT_THAT(same->stats.opaque_ops, IsEmpty());
  EXPECT_THAT(print_module(*same->module),
              HasSubstr("y: R.Tensor((n, 6), dtype=\"float32\") = R.reshape(x, R.shape([n, -1]))"));

  std::unique_ptr<Imported> quartered = import_scaled("Div", 4);
  ASSERT_NE(quartered->module, nullptr) << quartered->diags.str();
  EXPECT_EQ(quartered->stats.opaque_ops, (std::map<std::string, size_t>{{"onnx.Reshape", 1}, {"onnx.Shape", 1}}));
}

// ONNX's 0 copies the input's extent (n); the one element only known at run time (w / 4, not exact) becomes -1,
// which the element count determines (w * 6). With allowzero the 0 is an extent of 0 and the unknown element might
// be a 0 that empties the tensor, which -1 cannot stand for: the Reshape stays opaque.
TEST(OnnxImport, ReshapeZeroCopiesTheInputExtentAndOneUnknownElementIsInferred) {
  auto import_reshape = [](int64_t allow_zero) {
    OnnxModel model;
    model.input("x", TensorProto::FLOAT, {-1, 6, -2});
    model.initializer("two", TensorProto::INT64, {1}, {2});
    model.initializer("three", TensorProto::INT64, {1}, {3});
    model.initializer("four", TensorProto::INT64, {1}, {4});
    model.initializer("copy", TensorProto::INT64, {1}, {0});
    model.node("Shape", {"x"}, {"shape"});
    model.node("Slice", {"shape", "two", "three"}, {"width"});
    model.node("Div", {"width", "four"}, {"row"});
    set_attr(model.node("Concat", {"copy", "row"}, {"target"}), "axis", int64_t{0});
    set_attr(model.node("Reshape", {"x", "target"}, {"y"}), "allowzero", allow_zero);
    model.output("y", TensorProto::FLOAT, {-1, -3});
    return model.import();
  };
  std::unique_ptr<Imported> copied = import_reshape(0);
  ASSERT_NE(copied->module, nullptr) << copied->diags.str();
  EXPECT_THAT(copied->stats.opaque_ops, IsEmpty());
  EXPECT_THAT(print_module(*copied->module),
              HasSubstr("y: R.Tensor((n, w * 6), dtype=\"float32\") = R.reshape(x, R.shape([n, -1]))"));

  std::unique_ptr<Imported> zero = import_reshape(1);
  ASSERT_NE(zero->module, nullptr) << zero->diags.str();
  EXPECT_EQ(zero->stats.opaque_ops.count("onnx.Reshape"), 1u);
}

// A symbol only an operator's declared result has (m) is bound by no parameter, so no shape literal can use it: the
// element is unknown, and as the only one it becomes -1.
TEST(OnnxImport, SymbolsNoParameterBindsStayOutOfShapes) {
  OnnxModel model;
  model.add_domain("com.example");
  model.input("x", TensorProto::FLOAT, {-1, 4});
  model.initializer("zero", TensorProto::INT64, {1}, {0});
  model.initializer("one", TensorProto::INT64, {1}, {1});
  model.initializer("rest", TensorProto::INT64, {2}, {2, 2});
  model.node("Grow", {"x"}, {"y"}, "com.example");  // an operator no other test registers
  model.value_info("y", TensorProto::FLOAT, {-3, 4});
  model.node("Shape", {"y"}, {"shape"});
  model.node("Slice", {"shape", "zero", "one"}, {"rows"});
  set_attr(model.node("Concat", {"rows", "rest"}, {"target"}), "axis", int64_t{0});
  model.node("Reshape", {"y", "target"}, {"z"});
  model.output("z", TensorProto::FLOAT, {-3, 2, 2});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_EQ(imported->stats.opaque_ops, (std::map<std::string, size_t>{{"onnx.com_example.Grow", 1}}));
  EXPECT_THAT(print_module(*imported->module), HasSubstr("= R.reshape(y, R.shape([-1, 2, 2]))"));
}

TEST(OnnxImport, CustomDomainOperatorsAreOpaqueOnePerAttributeSignature) {
  OnnxModel model;
  model.add_domain("com.example");
  model.input("x", TensorProto::FLOAT, {2, 3});
  ::onnx::NodeProto& fancy = model.node("Fancy", {"x"}, {"y"}, "com.example");
  set_attr(fancy, "depth", int64_t{3});
  set_attr(fancy, "gain", 0.5f);
  set_attr(fancy, "mode", std::string("wide"));
  set_attr(fancy, "window", std::vector<int64_t>{1, 2});
  ::onnx::NodeProto& plain = model.node("Fancy", {"y"}, {"z"}, "com.example");
  set_attr(plain, "mode", std::string("narrow"));
  model.value_info("y", TensorProto::FLOAT, {2, 3});
  model.output("z", TensorProto::INT64, {-1});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_EQ(imported->stats.opaque_ops,
            (std::map<std::string, size_t>{{"onnx.com_example.Fancy", 1}, {"onnx.com_example.Fancy_2", 1}}));
  const std::string text = print_module(*imported->module);
  EXPECT_THAT(text, HasSubstr("y: R.Tensor((2, 3), dtype=\"float32\") = R.onnx.com_example.Fancy(x, depth=3, "
                              "gain=0.5, mode=\"wide\", window=[1, 2], result_types=\"float32:2,3\")"));
  EXPECT_THAT(text, HasSubstr("z: R.Tensor((n,), dtype=\"int64\") = R.onnx.com_example.Fancy_2(y, "
                              "mode=\"narrow\", result_types=\"int64:n\")"));
  SourceFile source("fancy.relax", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> reread = read_module(source, diags);
  ASSERT_NE(reread, nullptr) << diags.str();
  EXPECT_TRUE(structurally_equal(*reread, *imported->module));
}

TEST(OnnxImport, LayerNormWithoutBiasGetsZeros) {
  OnnxModel model;
  model.input("x", TensorProto::FLOAT, {2, 8});
  model.initializer("gamma", TensorProto::FLOAT, {8}, std::vector<double>(8, 1.0));
  ::onnx::NodeProto& norm = model.node("LayerNormalization", {"x", "gamma"}, {"y"});
  set_attr(norm, "epsilon", 1e-3f);
  model.output("y", TensorProto::FLOAT, {2, 8});
  std::unique_ptr<Imported> imported = model.import();
  ASSERT_NE(imported->module, nullptr) << imported->diags.str();
  EXPECT_THAT(print_module(*imported->module),
              HasSubstr("R.nn.layer_norm(x, gamma, lv, axes=[1], epsilon=0.0010000000474974513, center=True, "
                        "scale=True)"));
  EXPECT_EQ(op_counts(*imported->module->functions()[0]), (std::map<std::string, int>{{"nn.layer_norm", 1},
                                                                                        {"zeros", 1}}));
}

}  // namespace
}  // namespace dpl::import_test
