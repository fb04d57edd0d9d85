// What the reader builds: nodes, types, attributes, constants, tuples, aliases, module functions.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "dpl/ir/analysis.h"
#include "text_test_util.h"

namespace dpl {
namespace {

using text_test::kDataDir;
using text_test::read_file;
using text_test::read_ok;

const Function& only_function(const text_test::ReadResult& result) {
  return *result.module->functions().front();
}

TEST(Reader, SeedAddExample) {
  auto result = read_file(kDataDir + "/seed000_add_input.relax");
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  const Module& module = *result->module;
  EXPECT_FALSE(module.is_ir_module());
  ASSERT_EQ(module.functions().size(), 1u);
  const Function& main = *module.functions()[0];
  EXPECT_EQ(main.name(), "main");
  EXPECT_TRUE(main.has_dataflow_block());
  ASSERT_EQ(main.params().size(), 1u);
  EXPECT_EQ(main.params()[0]->name(), "x");
  const Dim dims[] = {Dim::fixed(16), Dim::fixed(16)};
  TypeRef tensor = Type::tensor(DType::Float32, dims);
  EXPECT_EQ(main.params()[0]->type(), tensor);
  const Node* x4 = main.output();
  ASSERT_NE(x4, nullptr);
  EXPECT_EQ(x4->name(), "x4");
  EXPECT_TRUE(x4->is_call_of(op::add));
  EXPECT_EQ(x4->type(), tensor);
  const Node* x2 = x4->operand(0);
  EXPECT_EQ(x4->operand(1), x2);
  EXPECT_EQ(x2->name(), "x2");
  EXPECT_EQ(x2->operand(0), main.params()[0]);
  EXPECT_EQ(verify(module), "");
}

TEST(Reader, MultiLineSignatureAndBlankLines) {
  auto result = read_file(kDataDir + "/seed000_attention_input.relax");
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  const Function& main = only_function(*result);
  ASSERT_EQ(main.params().size(), 3u);
  EXPECT_EQ(main.params()[2]->name(), "V");
  EXPECT_EQ(main.output()->name(), "lv72");
  EXPECT_TRUE(main.output()->is_call_of(op::permute_dims));
  // `R.matmul(lv59, lv62_transposed)` takes the default out_dtype.
  const Node* softmax_input = main.output()->operand(0)->operand(0)->operand(0);
  EXPECT_TRUE(softmax_input->is_call_of(op::nn_softmax));
}

TEST(Reader, AttributesTakeDefaultsAndKeywords) {
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((2, 3), \"float32\")):\n"
                        "    y = R.nn.softmax(x)\n"
                        "    z = R.permute_dims(y, axes=[1, 0])\n"
                        "    return z\n");
  ASSERT_NE(result->module, nullptr);
  const Node* z = only_function(*result).output();
  const OpInfo& permute = OpRegistry::global().get(op::permute_dims);
  const int axes = permute.attr_index("axes");
  ASSERT_GE(axes, 0);
  EXPECT_EQ(std::get<std::vector<int64_t>>(z->attr(static_cast<size_t>(axes))), (std::vector<int64_t>{1, 0}));
  const Node* y = z->operand(0);
  EXPECT_EQ(y->attrs(), OpRegistry::global().get(op::nn_softmax).default_attrs());
  const Dim dims[] = {Dim::fixed(3), Dim::fixed(2)};
  EXPECT_EQ(z->type(), Type::tensor(DType::Float32, dims));
}

TEST(Reader, ConstantsAndTheirDefaults) {
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((4,), \"float32\")):\n"
                        "    a = R.const(1.0)\n"
                        "    b = R.const(2, \"int32\")\n"
                        "    c = R.const(2, \"float32\")\n"
                        "    d = R.const(-0.1, dtype=\"float32\")\n"
                        "    e = R.const([[1, 2, 3], [4, 5, 6]], \"int64\")\n"
                        "    f = R.const(True)\n"
                        "    g = R.const(7)\n"
                        "    h = R.const(-inf, \"float32\")\n"
                        "    return (a, b, c, d, e, f, g, h)\n");
  ASSERT_NE(result->module, nullptr);
  const Node* out = only_function(*result).output();
  ASSERT_EQ(out->kind(), NodeKind::Tuple);
  ASSERT_EQ(out->num_operands(), 8u);
  auto literal = [&](size_t i) -> const Literal& { return out->operand(i)->literal(); };
  EXPECT_EQ(literal(0), (Literal{DType::Float32, {}, {1.0}}));
  EXPECT_EQ(literal(1), (Literal{DType::Int32, {}, {2.0}}));
  EXPECT_EQ(literal(2), (Literal{DType::Float32, {}, {2.0}}));
  // Values are rounded to their dtype, as numpy does for TVM.
  EXPECT_EQ(literal(3).values[0], static_cast<double>(-0.1f));
  EXPECT_EQ(literal(4), (Literal{DType::Int64, {2, 3}, {1, 2, 3, 4, 5, 6}}));
  EXPECT_EQ(literal(5), (Literal{DType::Bool, {}, {1.0}}));
  EXPECT_EQ(literal(6), (Literal{DType::Int32, {}, {7.0}}));
  EXPECT_TRUE(std::isinf(literal(7).values[0]) && literal(7).values[0] < 0);
  const int64_t shape[] = {2, 3};
  EXPECT_EQ(out->operand(4)->type()->static_num_elements(), shape[0] * shape[1]);
}

TEST(Reader, Float16ConstantsRoundToHalfPrecision) {
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((4,), \"float16\")):\n"
                        "    y = R.multiply(x, R.const(0.1, \"float16\"))\n"
                        "    return y\n");
  ASSERT_NE(result->module, nullptr);
  // 0.1 in binary16 is 1638 * 2^-14.
  EXPECT_EQ(only_function(*result).output()->operand(1)->literal().values[0], 1638.0 / 16384.0);
}

TEST(Reader, ShapesTuplesAndItems) {
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((2, 6), \"float32\")):\n"
                        "    with R.dataflow():\n"
                        "        r = R.reshape(x, R.shape([3, -1]))\n"
                        "        s = R.split(r, indices_or_sections=2, axis=1)\n"
                        "        a = s[0]\n"
                        "        c = R.concat((a, s[1]), axis=0)\n"
                        "        R.output(c)\n"
                        "    return c\n");
  ASSERT_NE(result->module, nullptr);
  const Function& main = only_function(*result);
  const Node* c = main.output();
  ASSERT_TRUE(c->is_call_of(op::concat));
  const Node* tuple = c->operand(0);
  EXPECT_EQ(tuple->kind(), NodeKind::Tuple);
  EXPECT_TRUE(tuple->name().empty());
  ASSERT_EQ(tuple->num_operands(), 2u);
  EXPECT_EQ(tuple->operand(0)->kind(), NodeKind::TupleItem);
  EXPECT_EQ(tuple->operand(0)->index(), 0);
  EXPECT_EQ(tuple->operand(1)->index(), 1);
  const Node* reshape = tuple->operand(0)->operand(0)->operand(0);
  ASSERT_TRUE(reshape->is_call_of(op::reshape));
  const Node* shape = reshape->operand(1);
  ASSERT_EQ(shape->kind(), NodeKind::ShapeLit);
  EXPECT_EQ(shape->shape_value()[0], Dim::fixed(3));
  EXPECT_TRUE(shape->shape_value()[1].is_inferred());
  const Dim dims[] = {Dim::fixed(6), Dim::fixed(2)};
  EXPECT_EQ(c->type(), Type::tensor(DType::Float32, dims));
}

TEST(Reader, AliasBindsTheSameNode) {
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((4,), \"float32\")):\n"
                        "    with R.dataflow():\n"
                        "        lv1 = R.add(x, x)\n"
                        "        gv: R.Tensor((4,), dtype=\"float32\") = lv1\n"
                        "        R.output(gv)\n"
                        "    return gv\n");
  ASSERT_NE(result->module, nullptr);
  const Function& main = only_function(*result);
  EXPECT_EQ(main.output()->name(), "lv1");  // the node keeps its first name
  EXPECT_TRUE(main.output()->is_call_of(op::add));
  EXPECT_EQ(main.num_live_nodes(), 2u);
}

TEST(Reader, LessSpecificAnnotationsAreAccepted) {
  // TVM's rule: only a real conflict is an error. The node keeps the inferred type.
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((4, \"n\"), \"float32\"),\n"
                        "         y: R.Tensor((4, 8), \"float32\")) -> R.Tensor:\n"
                        "    a: R.Tensor((4, 8)) = R.add(y, y)\n"
                        "    b: R.Tensor(ndim=2, dtype=\"float32\") = R.add(a, a)\n"
                        "    c: R.Object = R.add(b, b)\n"
                        "    d: R.Tensor = R.add(c, c)\n"
                        "    return d\n");
  ASSERT_NE(result->module, nullptr);
}

TEST(Reader, TypeForms) {
  auto result = read_ok("@R.function\n"
                        "def main(a: R.Tensor((16, 16), dtype=\"float32\"), b: R.Tensor((1024,)),\n"
                        "         c: R.Tensor(ndim=2, dtype=\"int64\"), d: R.Tensor,\n"
                        "         e: R.Tensor((\"n\", 4), \"float16\"),\n"
                        "         f: R.Tuple(R.Tensor((2,), \"float32\"), R.Shape([1, 2])), g: R.Shape(ndim=4),\n"
                        "         h: R.Shape, i: R.Object, j: R.Tensor(shape=[3], dtype=\"bool\"), k: R.Tuple):\n"
                        "    return a\n");
  ASSERT_NE(result->module, nullptr);
  auto params = only_function(*result).params();
  ASSERT_EQ(params.size(), 11u);
  const Dim square[] = {Dim::fixed(16), Dim::fixed(16)};
  EXPECT_EQ(params[0]->type(), Type::tensor(DType::Float32, square));
  const Dim line[] = {Dim::fixed(1024)};
  EXPECT_EQ(params[1]->type(), Type::tensor(DType::Unknown, line));
  EXPECT_EQ(params[2]->type(), Type::tensor_of_rank(DType::Int64, 2));
  EXPECT_EQ(params[3]->type(), Type::tensor_of_rank(DType::Unknown, -1));
  const Dim symbolic[] = {Dim::symbol("n"), Dim::fixed(4)};
  EXPECT_EQ(params[4]->type(), Type::tensor(DType::Float16, symbolic));
  const Dim two[] = {Dim::fixed(2)};
  const TypeRef fields[] = {Type::tensor(DType::Float32, two), Type::shape(2)};
  EXPECT_EQ(params[5]->type(), Type::tuple(fields));
  EXPECT_EQ(params[6]->type(), Type::shape(4));
  EXPECT_EQ(params[7]->type(), Type::shape(-1));
  EXPECT_EQ(params[8]->type(), Type::object());
  const Dim three[] = {Dim::fixed(3)};
  EXPECT_EQ(params[9]->type(), Type::tensor(DType::Bool, three));
  EXPECT_EQ(params[10]->type(), Type::tuple({}));
}

// A function reads each annotation's spelling once and looks repeats up by their text: the repeats, spelled
// alike, in other spellings of the same type, after a comment or across lines, all read as written.
TEST(Reader, RepeatedAnnotationsReadAsWritten) {
  auto result = read_ok("@R.function\n"
                        "def main(a: R.Tensor((4, 8), \"float32\"), b: R.Tensor((4, 8), \"float32\"),\n"
                        "         c: R.Tensor((4,8), dtype='float32'), d: R.Tensor((\"n\", 8), \"float32\")):\n"
                        "    s: R.Tuple(R.Tensor((4, 8), \"float32\"), R.Shape([4, 8])) = (a, R.shape([4, 8]))\n"
                        "    t: R.Tuple(R.Tensor((4, 8), \"float32\"), R.Shape([4, 8])) = (b, R.shape([4, 8]))\n"
                        "    e: R.Tensor((4, 8), \"float32\") = R.add(a, b)  # R.Tensor((4, 8), \"float32\")\n"
                        "    f: R.Tensor((4, 8), \"float32\") = R.add(e, c)\n"
                        "    g: R.Tensor((\"n\", 8), \"float32\") = R.add(d, d)\n"
                        "    h: R.Tensor((4,\n"
                        "                 8), \"float32\") = R.add(f, f)\n"
                        "    i: R.Tensor((4, 8), \"float32\") = R.add(h, t[0])\n"
                        "    return (i, g, s)\n");
  ASSERT_NE(result->module, nullptr);
  const Function& main = only_function(*result);
  const Dim four_by_eight[] = {Dim::fixed(4), Dim::fixed(8)};
  const TypeRef tensor = Type::tensor(DType::Float32, four_by_eight);
  for (const Node* param : main.params().first(3)) EXPECT_EQ(param->type(), tensor) << param->name();
  const Dim symbolic[] = {Dim::symbol("n"), Dim::fixed(8)};
  EXPECT_EQ(main.params()[3]->type(), Type::tensor(DType::Float32, symbolic));
  const TypeRef fields[] = {tensor, Type::shape(2)};
  const TypeRef outputs[] = {tensor, Type::tensor(DType::Float32, symbolic), Type::tuple(fields)};
  EXPECT_EQ(main.output()->type(), Type::tuple(outputs));
}

TEST(Reader, SymbolicDimensionsDeclaredInTheBody) {
  auto result = read_ok("@R.function\n"
                        "def main(\n"
                        "    x: R.Tensor((\"n\", 4), dtype=\"float32\"),\n"
                        ") -> R.Tensor((\"n\", 4), dtype=\"float32\"):\n"
                        "    n = T.int64()\n"
                        "    with R.dataflow():\n"
                        "        y: R.Tensor((n, 4), dtype=\"float32\") = R.add(x, x)\n"
                        "        R.output(y)\n"
                        "    return y\n");
  ASSERT_NE(result->module, nullptr);
  const Dim dims[] = {Dim::symbol("n"), Dim::fixed(4)};
  EXPECT_EQ(only_function(*result).output()->type(), Type::tensor(DType::Float32, dims));
}

TEST(Reader, FunctionWithoutDataflowBlock) {
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((4,), \"float32\")):\n"
                        "    y = R.add(x, x)\n"
                        "    return y\n");
  ASSERT_NE(result->module, nullptr);
  EXPECT_FALSE(only_function(*result).has_dataflow_block());
}

TEST(Reader, NestedCallsBecomeUnnamedNodes) {
  auto result = read_ok("@R.function\n"
                        "def main(x: R.Tensor((4,), \"float32\")):\n"
                        "    y = R.add(R.multiply(x, x), R.nn.relu(x))\n"
                        "    return y\n");
  ASSERT_NE(result->module, nullptr);
  const Node* y = only_function(*result).output();
  EXPECT_EQ(y->name(), "y");
  EXPECT_TRUE(y->operand(0)->is_call_of(op::multiply));
  EXPECT_TRUE(y->operand(0)->name().empty());
  EXPECT_TRUE(y->operand(1)->is_call_of(op::nn_relu));
}

TEST(Reader, CommentsImportsAndExplicitLineJoins) {
  auto result = read_ok("from tvm.script import relax as R  # the namespace\n"
                        "import tvm\n"
                        "\n"
                        "# a comment before the function\n"
                        "@R.function  # trailing comment\n"
                        "def main(x: R.Tensor((4,), 'float32')):\n"
                        "    # a comment line inside the body\n"
                        "\n"
                        "    y = R.add(x, \\\n"
                        "              x)\n"
                        "    return y\n");
  ASSERT_NE(result->module, nullptr);
}

TEST(Reader, PrivateFunctionAndFunctionAttributes) {
  auto result = read_ok("@R.function(private=True)\n"
                        "def f(x: R.Tensor((4,), \"float32\")):\n"
                        "    R.func_attr({\"Composite\": \"ccompiler.add\", \"Primitive\": True, \"Size\": 3})\n"
                        "    return x\n");
  ASSERT_NE(result->module, nullptr);
  const Function& f = only_function(*result);
  EXPECT_TRUE(f.is_private());
  ASSERT_EQ(f.attrs().size(), 3u);
  EXPECT_EQ(f.attrs()[0], (FuncAttr{"Composite", std::string("ccompiler.add")}));
  EXPECT_EQ(f.attrs()[1], (FuncAttr{"Primitive", true}));
  EXPECT_EQ(f.attrs()[2], (FuncAttr{"Size", int64_t{3}}));
}

TEST(Reader, ModuleCallsAFunctionDefinedLater) {
  auto result = read_file(kDataDir + "/module_composite.relax");
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  const Module& module = *result->module;
  EXPECT_TRUE(module.is_ir_module());
  ASSERT_EQ(module.functions().size(), 2u);
  EXPECT_EQ(module.functions()[0]->name(), "main");  // file order is kept
  const Function& main = *module.functions()[0];
  const Node* call = main.output()->operand(0);
  ASSERT_EQ(call->kind(), NodeKind::FuncCall);
  EXPECT_EQ(call->callee(), "fused_add_subtract_multiply");
  const Dim dims[] = {Dim::fixed(10)};
  EXPECT_EQ(call->type(), Type::tensor(DType::Float32, dims));
  const Function* composite = module.find("fused_add_subtract_multiply");
  ASSERT_NE(composite, nullptr);
  EXPECT_TRUE(composite->is_private());
  ASSERT_NE(composite->find_attr("Composite"), nullptr);
  EXPECT_EQ(std::get<std::string>(*composite->find_attr("Composite")), "ccompiler.add_subtract_multiply");
  EXPECT_EQ(verify(module), "");
}

TEST(Reader, CalleeReturnTypeIsItsDeclaredOne) {
  auto result = read_ok("@I.ir_module\n"
                        "class Mod:\n"
                        "    @R.function\n"
                        "    def main(x: R.Tensor((4,), \"float32\")):\n"
                        "        y = Mod.g(x)\n"
                        "        return y\n"
                        "\n"
                        "    @R.function\n"
                        "    def g(a: R.Tensor((4,), \"float32\")) -> R.Tensor(ndim=1, dtype=\"float32\"):\n"
                        "        return a\n");
  ASSERT_NE(result->module, nullptr);
  EXPECT_EQ(result->module->class_name(), "Mod");
  EXPECT_EQ(result->module->functions()[0]->output()->type(), Type::tensor_of_rank(DType::Float32, 1));
}

TEST(Reader, Seed003MlpWithWeightsAsParameters) {
  auto result = read_file(kDataDir + "/seed003_mlp_params.relax");
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  const Function& main = *result->module->functions()[0];
  EXPECT_EQ(main.params().size(), 5u);
  const Dim dims[] = {Dim::fixed(1), Dim::fixed(10)};
  EXPECT_EQ(main.output()->type(), Type::tensor(DType::Float32, dims));
  EXPECT_TRUE(main.output()->is_call_of(op::add));
}

TEST(Reader, Seed003MlpWithMetadataIsNotSupported) {
  auto result = read_file(kDataDir + "/seed003_mlp_metadata.relax");
  ASSERT_EQ(result->module, nullptr);
  ASSERT_TRUE(result->diags.has_errors());
  const Diagnostic& first = result->diags.diagnostics()[0];
  EXPECT_EQ(first.message, "metadata[...] constants are not supported; pass weights as function parameters");
  EXPECT_EQ(first.loc.line, 6u);
  EXPECT_EQ(first.loc.col, 72u);
}

TEST(Reader, Seed003CallTirModuleIsNotSupported) {
  auto result = read_file(kDataDir + "/seed003_matmul_relu_call_tir.relax");
  ASSERT_EQ(result->module, nullptr);
  std::vector<std::string> messages;
  for (const Diagnostic& diag : result->diags.diagnostics()) {
    messages.push_back(std::to_string(diag.loc.line) + ": " + diag.message);
  }
  const std::vector<std::string> expected = {
      "3: @T.prim_func is not supported: dpl reads Relax functions (@R.function) only",
      "16: @T.prim_func is not supported: dpl reads Relax functions (@R.function) only",
      "31: R.call_tir is not supported: dpl reads graph-level Relax ops only",
      "32: R.call_tir is not supported: dpl reads graph-level Relax ops only",
  };
  EXPECT_EQ(messages, expected) << result->diags.str();
}

}  // namespace
}  // namespace dpl
