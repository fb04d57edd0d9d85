// The interpreter around the kernels: arguments and types, symbolic dims, tuples, function calls, user kernels,
// clear errors, random inputs that follow each parameter's use, and comparison of whole values.
#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "interp_test_util.h"

namespace dpl {
namespace {

using interp_test::expect_f32;
using interp_test::f32;
using interp_test::i64;
using interp_test::Ints;
using interp_test::tensor_type;
using interp_test::TestGraph;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Interpreter, EveryBuiltinOpHasAKernel) {
  const Interpreter interpreter;
  for (OpId id = 0; id < op::kNumBuiltinOps; ++id) {
    EXPECT_TRUE(interpreter.has_kernel(id)) << OpRegistry::global().get(id).name;
  }
}

TEST(Interpreter, ChecksTheArguments) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2});
  g.b().output(g.b().call("negative", {x}));
  const Interpreter interpreter;
  const EvalResult none = interpreter.evaluate(g.module(), g.function(), std::vector<Tensor>{});
  EXPECT_EQ(none.error, "in function 'main': 0 argument(s) for 1 parameter(s)");
  const EvalResult wrong_shape =
      interpreter.evaluate(g.module(), g.function(), std::vector<Tensor>{f32({3}, {1, 2, 3})});
  EXPECT_EQ(wrong_shape.error,
            "in function 'main': argument 0 for parameter 'x': expected R.Tensor((2,), dtype=\"float32\"), got "
            "float32(3)");
  const EvalResult wrong_dtype = interpreter.evaluate(g.module(), g.function(), std::vector<Tensor>{i64({2}, {1, 2})});
  EXPECT_FALSE(wrong_dtype.ok());
  EXPECT_TRUE(contains(wrong_dtype.error, "got int64(2)")) << wrong_dtype.error;
}

TEST(Interpreter, ConstantsTuplesAndTupleItems) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2});
  Literal literal;
  literal.dtype = DType::Float32;
  literal.shape = {2};
  literal.values = {10, 20};
  Node* c = g.function().add_constant(literal);
  Node* pair = g.b().tuple({g.b().call("add", {x, c}), x});
  Node* out = g.b().tuple({g.b().item(pair, 0), g.b().call("multiply", {g.b().item(pair, 1), g.b().scalar(3.0)})});
  const Value value = g.eval(out, {f32({2}, {1, 2})});
  ASSERT_TRUE(value.is_tuple());
  ASSERT_EQ(value.fields().size(), 2u);
  expect_f32(value.fields()[0], {2}, {11, 22});
  expect_f32(value.fields()[1], {2}, {3, 6});
  EXPECT_EQ(value.type_str(), "(float32(2), float32(2))");
}

TEST(Interpreter, SymbolicDimsBindFromTheArguments) {
  TestGraph g;
  Node* a = g.param("a", DType::Float32, {});
  g.function().add_param("y", Type::tensor(DType::Float32, std::vector<Dim>{Dim::symbol("n")}));
  Node* y = g.function().params()[1];
  Node* n_shape = g.function().add_shape({Dim::symbol("n")});
  std::string error;
  Node* broadcast = g.function().add_call(op::broadcast_to, std::vector<Node*>{a, n_shape}, {}, error);
  ASSERT_NE(broadcast, nullptr) << error;
  const Value value = g.eval(g.b().call("add", {y, broadcast}), {Tensor::scalar(1.0), f32({3}, {1, 2, 3})});
  expect_f32(value, {3}, {2, 3, 4});
}

TEST(Interpreter, SymbolicDimsNeedAValue) {
  TestGraph g;
  Node* a = g.param("a", DType::Float32, {});
  Node* n_shape = g.function().add_shape({Dim::symbol("n")});
  std::string error;
  Node* broadcast = g.function().add_call(op::broadcast_to, std::vector<Node*>{a, n_shape}, {}, error);
  ASSERT_NE(broadcast, nullptr) << error;
  const EvalResult unbound = g.run(broadcast, {Tensor::scalar(1.0)});
  EXPECT_FALSE(unbound.ok());
  EXPECT_TRUE(contains(unbound.error, "symbolic dimension 'n' has no value")) << unbound.error;

  EvalOptions options;
  options.dims["n"] = 4;
  const EvalResult bound =
      Interpreter(options).evaluate(g.module(), g.function(), std::vector<Tensor>{Tensor::scalar(2.0)});
  ASSERT_TRUE(bound.ok()) << bound.error;
  expect_f32(bound.value, {4}, {2, 2, 2, 2});
}

TEST(Interpreter, InconsistentSymbolicDimsAreAnError) {
  Module module;
  Function& f = module.add_function("main");
  const std::vector<Dim> n = {Dim::symbol("n")};
  Node* a = f.add_param("a", Type::tensor(DType::Float32, n));
  Node* b = f.add_param("b", Type::tensor(DType::Float32, n));
  std::string error;
  f.set_output(f.add_call(op::add, std::vector<Node*>{a, b}, {}, error));
  const EvalResult result =
      Interpreter().evaluate(module, f, std::vector<Tensor>{f32({2}, {1, 2}), f32({3}, {1, 2, 3})});
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(contains(result.error, "argument 1 for parameter 'b'")) << result.error;
}

// An extent that is an expression (n * 2, n + 1) takes its value from the symbols': it checks an argument once n is
// bound, sizes a shape literal, and sizes a random input.
TEST(Interpreter, ExpressionDimsComputeFromTheSymbols) {
  Module module;
  Function& f = module.add_function("main");
  const Dim n = Dim::symbol("n");
  Node* a = f.add_param("a", Type::tensor(DType::Float32, std::vector<Dim>{n}));
  Node* b = f.add_param("b", Type::tensor(DType::Float32, std::vector<Dim>{*dim_add(n, Dim::fixed(1))}));
  std::string error;
  Node* doubled = f.add_call(op::concat, std::vector<Node*>{f.add_tuple(std::vector<Node*>{a, a})},
                             {AttrValue(int64_t{0})}, error);
  ASSERT_NE(doubled, nullptr) << error;
  ASSERT_EQ(doubled->type()->str(), "R.Tensor((n * 2,), dtype=\"float32\")");
  Node* column = f.add_shape({*dim_mul(n, Dim::fixed(2)), Dim::fixed(1)});
  Node* reshaped = f.add_call(op::reshape, std::vector<Node*>{doubled, column}, {}, error);
  ASSERT_NE(reshaped, nullptr) << error;
  f.set_output(f.add_tuple(std::vector<Node*>{reshaped, b}));
  const EvalResult good =
      Interpreter().evaluate(module, f, std::vector<Tensor>{f32({2}, {1, 2}), f32({3}, {1, 2, 3})});
  ASSERT_TRUE(good.ok()) << good.error;
  EXPECT_EQ(good.value.fields()[0].tensor().shape(), (std::vector<int64_t>{4, 1}));
  const EvalResult bad = Interpreter().evaluate(module, f, std::vector<Tensor>{f32({2}, {1, 2}), f32({2}, {1, 2})});
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.error, "argument 1 for parameter 'b': expected R.Tensor((n + 1,)")) << bad.error;

  InputOptions options;
  options.dims["n"] = 5;
  const InputsResult inputs = random_inputs(f, 1, options);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  EXPECT_EQ(inputs.tensors[1].shape(), (std::vector<int64_t>{6}));
}

TEST(Interpreter, KernelErrorsNameTheBinding) {
  // With symbolic dims the registry cannot see that (2,) and (3,) do not broadcast; the kernel reports it.
  Module module;
  Function& f = module.add_function("main");
  Node* a = f.add_param("a", Type::tensor(DType::Float32, std::vector<Dim>{Dim::symbol("n")}));
  Node* b = f.add_param("b", Type::tensor(DType::Float32, std::vector<Dim>{Dim::symbol("m")}));
  std::string error;
  Node* sum = f.add_call(op::add, std::vector<Node*>{a, b}, {}, error);
  ASSERT_NE(sum, nullptr) << error;
  sum->set_name("lv0");
  f.set_output(sum);
  const EvalResult result =
      Interpreter().evaluate(module, f, std::vector<Tensor>{f32({2}, {1, 2}), f32({3}, {1, 2, 3})});
  EXPECT_EQ(result.error, "in function 'main': binding 'lv0' (add): shapes (2) and (3) do not broadcast");
}

TEST(Interpreter, RefusesHugeResults) {
  TestGraph g;
  Node* a = g.param("a", DType::Float32, {});
  Node* out = g.b().call("broadcast_to", {a, g.b().shape({100000, 100000})});
  EvalOptions options;
  options.max_elements = 1000000;
  const EvalResult result = g.run(out, {Tensor::scalar(1.0)}, options);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(contains(result.error, "more than the limit of 1000000")) << result.error;
}

TEST(Interpreter, CallsOtherFunctionsOfTheModule) {
  Module module;
  Function& helper = module.add_function("double_it");
  Builder h(helper);
  Node* hx = h.param("x", tensor_type(DType::Float32, {2}));
  h.output(h.call("multiply", {hx, h.scalar(2.0)}));

  Function& main = module.add_function("main");
  Builder m(main);
  Node* x = m.param("x", tensor_type(DType::Float32, {2}));
  Node* call = main.add_func_call("double_it", std::vector<Node*>{x}, tensor_type(DType::Float32, {2}));
  m.output(m.call("add", {call, x}));

  const std::vector<Tensor> args = {f32({2}, {1, 2})};
  const EvalResult result = Interpreter().evaluate(module, main, args);
  ASSERT_TRUE(result.ok()) << result.error;
  expect_f32(result.value, {2}, {3, 6});

  const EvalResult without_module = Interpreter().evaluate(main, args);
  EXPECT_FALSE(without_module.ok());
  EXPECT_TRUE(contains(without_module.error, "need the module")) << without_module.error;

  Function& broken = module.add_function("broken");
  Builder bb(broken);
  Node* bx = bb.param("x", tensor_type(DType::Float32, {2}));
  bb.output(broken.add_func_call("missing", std::vector<Node*>{bx}, tensor_type(DType::Float32, {2})));
  const EvalResult missing = Interpreter().evaluate(module, broken, args);
  EXPECT_TRUE(contains(missing.error, "the module has no function 'missing'")) << missing.error;
}

TEST(Interpreter, RecursionIsBounded) {
  Module module;
  Function& f = module.add_function("forever");
  Builder b(f);
  Node* x = b.param("x", tensor_type(DType::Float32, {1}));
  b.output(f.add_func_call("forever", std::vector<Node*>{x}, tensor_type(DType::Float32, {1})));
  const EvalResult result = Interpreter().evaluate(module, f, std::vector<Tensor>{f32({1}, {1})});
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(contains(result.error, "calls nest deeper than 64")) << result.error;
}

OpId user_op() {
  OpInfo info;
  info.name = "interp_test.twice";
  info.min_operands = 1;
  info.max_operands = 1;
  info.traits = kElementwise;
  info.infer = [](const InferInput& input, std::string&) { return input.operands[0]->type(); };
  return OpRegistry::global().add(std::move(info));
}

TEST(Interpreter, UserOpsNeedARegisteredKernel) {
  const OpId twice = user_op();
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2});
  Node* out = g.b().call("interp_test.twice", {x});
  out->set_name("lv7");
  g.b().output(out);
  const std::vector<Tensor> args = {f32({2}, {1, 2})};

  Interpreter interpreter;
  EXPECT_FALSE(interpreter.has_kernel(twice));
  const EvalResult unsupported = interpreter.evaluate(g.module(), g.function(), args);
  EXPECT_EQ(unsupported.error,
            "in function 'main': binding 'lv7' (interp_test.twice): op 'interp_test.twice' has no interpreter kernel "
            "(register one with Interpreter::register_kernel)");

  interpreter.register_kernel(twice, [](const Node&, std::span<const Value> operands) {
    std::vector<double> values = operands[0].tensor().values();
    for (double& v : values) v *= 2;
    return Value(Tensor::from_values(operands[0].tensor().dtype(), operands[0].tensor().shape(), values));
  });
  EXPECT_TRUE(interpreter.has_kernel(twice));
  const EvalResult supported = interpreter.evaluate(g.module(), g.function(), args);
  ASSERT_TRUE(supported.ok()) << supported.error;
  expect_f32(supported.value, {2}, {2, 4});
}

TEST(Interpreter, ChecksKernelResultsAgainstTheDeclaredType) {
  const OpId twice = user_op();
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2});
  Node* out = g.b().call("interp_test.twice", {x});
  g.b().output(out);
  Interpreter interpreter;
  interpreter.register_kernel(twice, [](const Node&, std::span<const Value>) { return Value(f32({3}, {1, 2, 3})); });
  const EvalResult result = interpreter.evaluate(g.module(), g.function(), std::vector<Tensor>{f32({2}, {1, 2})});
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(contains(result.error,
                       "the computed value differs from the declared type: expected "
                       "R.Tensor((2,), dtype=\"float32\"), got float32(3)"))
      << result.error;

  interpreter.register_kernel(
      twice, [](const Node&, std::span<const Value>) -> Value { throw EvalError("twice: not today"); });
  const EvalResult thrown = interpreter.evaluate(g.module(), g.function(), std::vector<Tensor>{f32({2}, {1, 2})});
  EXPECT_TRUE(contains(thrown.error, "twice: not today")) << thrown.error;
}

// --- random inputs --------------------------------------------------------------------------------------------

TEST(RandomInputs, MatchTheParameterTypesAndTheSeed) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2, 3});
  Node* n = g.param("n", DType::Int32, {4});
  g.b().output(g.b().tuple({x, n}));
  const InputsResult a = random_inputs(g.function(), 5);
  const InputsResult b = random_inputs(g.function(), 5);
  const InputsResult c = random_inputs(g.function(), 6);
  ASSERT_TRUE(a.ok()) << a.error;
  ASSERT_EQ(a.tensors.size(), 2u);
  EXPECT_EQ(a.tensors[0].type_str(), "float32(2, 3)");
  EXPECT_EQ(a.tensors[1].type_str(), "int32(4)");
  EXPECT_EQ(a.tensors[0].values(), b.tensors[0].values());
  EXPECT_EQ(a.tensors[1].values(), b.tensors[1].values());
  EXPECT_NE(a.tensors[0].values(), c.tensors[0].values());
  EXPECT_NE(a.tensors[0].values(), a.tensors[1].values());

  // The first parameter's values do not depend on the second one.
  TestGraph other;
  Node* x2 = other.param("x", DType::Float32, {2, 3});
  Node* m = other.param("m", DType::Float32, {9});
  other.b().output(other.b().tuple({x2, m}));
  EXPECT_EQ(random_inputs(other.function(), 5).tensors[0].values(), a.tensors[0].values());
}

TEST(RandomInputs, RefuseAbsurdShapes) {
  Function f("main");
  f.add_param("x", tensor_type(DType::Float32, {1 << 20, 1 << 20}));
  f.set_output(f.params()[0]);
  const InputsResult result = random_inputs(f, 1);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(contains(result.error, "too large")) << result.error;
}

TEST(RandomInputs, IndicesStayInsideTheirTable) {
  TestGraph g;
  Node* table = g.param("table", DType::Float32, {7, 4});
  Node* ids = g.param("ids", DType::Int64, {50, 8});
  Node* positions = g.param("positions", DType::Int64, {1, 512});
  Node* pos_table = g.param("pos_table", DType::Float32, {512, 4});
  Node* words = g.b().call("take", {table, ids}, {{"axis", int64_t{0}}});
  Node* sliced = g.b().call("strided_slice", {positions},
                            {{"axes", Ints{1}}, {"begin", Ints{0}}, {"end", Ints{8}}, {"strides", Ints{1}}});
  Node* pos = g.b().call("take", {pos_table, sliced}, {{"axis", int64_t{0}}});
  g.b().output(g.b().call("add", {words, pos}));
  const InputsResult inputs = random_inputs(g.function(), 1);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  std::set<double> seen;
  for (double id : inputs.tensors[1].values()) seen.insert(id);
  EXPECT_EQ(*seen.begin(), 0.0);
  EXPECT_EQ(*seen.rbegin(), 6.0);
  for (double position : inputs.tensors[2].values()) {
    EXPECT_GE(position, 0.0);
    EXPECT_LT(position, 512.0);
  }
  const EvalResult result = Interpreter().evaluate(g.module(), g.function(), inputs.tensors);
  EXPECT_TRUE(result.ok()) << result.error;
}

TEST(RandomInputs, MasksAreZeroOrOne) {
  // BERT's padding mask: expand_dims, astype float, 1 - mask, astype bool.
  TestGraph g;
  Node* mask = g.param("attention_mask", DType::Int64, {1, 64});
  Node* expanded = g.b().call("expand_dims", {mask}, {{"axis", Ints{1, 2}}});
  Node* as_float = g.b().call("astype", {expanded}, {{"dtype", std::string("float32")}});
  Node* inverted = g.b().call("subtract", {g.b().scalar(1.0), as_float});
  Node* as_bool = g.b().call("astype", {inverted}, {{"dtype", std::string("bool")}});
  Node* other = g.param("count", DType::Int64, {64});
  g.b().output(g.b().tuple({as_bool, other}));
  const InputsResult inputs = random_inputs(g.function(), 3);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  std::set<double> mask_values;
  for (double value : inputs.tensors[0].values()) mask_values.insert(value);
  EXPECT_EQ(mask_values, (std::set<double>{0.0, 1.0}));
  std::set<double> other_values;
  for (double value : inputs.tensors[1].values()) other_values.insert(value);
  EXPECT_GT(other_values.size(), 2u);  // not a mask: the default small range
}

TEST(RandomInputs, VariancesArePositiveAndWeightsScaled) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {1, 2, 4, 4});
  Node* w = g.param("w", DType::Float32, {2, 2, 3, 3});
  Node* gamma = g.param("gamma", DType::Float32, {2});
  Node* beta = g.param("beta", DType::Float32, {2});
  Node* mean = g.param("mean", DType::Float32, {2});
  Node* var = g.param("var", DType::Float32, {2});
  Node* fc = g.param("fc", DType::Float32, {100, 2});
  Node* conv = g.b().call("nn.conv2d", {x, w});
  Node* bn = g.b().item(g.b().call("nn.batch_norm", {conv, gamma, beta, mean, var}, {{"training", false}}), 0);
  Node* flat = g.b().call("reshape", {bn, g.b().shape({1, 8})});
  Node* fc_t = g.b().call("permute_dims", {fc});  // (2, 100)
  Node* fc_w = g.b().call("reshape", {fc_t, g.b().shape({8, 25})});
  g.b().output(g.b().call("matmul", {flat, fc_w}));
  const InputsResult inputs = random_inputs(g.function(), 9);
  ASSERT_TRUE(inputs.ok()) << inputs.error;
  auto max_abs = [](const Tensor& t) {
    double result = 0;
    for (double v : t.values()) result = std::max(result, std::fabs(v));
    return result;
  };
  for (double v : inputs.tensors[5].values()) {  // var
    EXPECT_GE(v, 0.5);
    EXPECT_LT(v, 1.5);
  }
  EXPECT_LE(max_abs(inputs.tensors[1]), 1.0 / std::sqrt(18.0));  // conv fan-in: 2 x 3 x 3
  EXPECT_GT(max_abs(inputs.tensors[1]), 0.5 / std::sqrt(18.0));
  EXPECT_LE(max_abs(inputs.tensors[6]), 1.0 / std::sqrt(8.0));  // matmul inner dim, seen through layout ops
  EXPECT_GT(max_abs(inputs.tensors[0]), 0.9);                   // activations keep [-1, 1)

  InputOptions unscaled;
  unscaled.scale_weights = false;
  unscaled.ranges["gamma"] = ValueRange{2.0, 3.0};
  const InputsResult plain = random_inputs(g.function(), 9, unscaled);
  ASSERT_TRUE(plain.ok()) << plain.error;
  EXPECT_GT(max_abs(plain.tensors[1]), 0.9);
  for (double v : plain.tensors[2].values()) {
    EXPECT_GE(v, 2.0);
    EXPECT_LT(v, 3.0);
  }
}

TEST(RandomInputs, SymbolicDimsNeedValues) {
  Function f("main");
  f.add_param("x", Type::tensor(DType::Float32, std::vector<Dim>{Dim::symbol("n"), Dim::fixed(2)}));
  f.set_output(f.params()[0]);
  const InputsResult missing = random_inputs(f, 1);
  EXPECT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.error, "symbolic dimension 'n' without a value")) << missing.error;
  InputOptions options;
  options.dims["n"] = 3;
  const InputsResult given = random_inputs(f, 1, options);
  ASSERT_TRUE(given.ok()) << given.error;
  EXPECT_EQ(given.tensors[0].type_str(), "float32(3, 2)");
}

TEST(RandomInputs, NeedADtypeAndAShape) {
  Function f("main");
  f.add_param("x", Type::tensor_of_rank(DType::Float32, 2));
  f.set_output(f.params()[0]);
  const InputsResult result = random_inputs(f, 1);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(contains(result.error, "parameter 'x' of 'main'")) << result.error;
}

// --- comparing values -----------------------------------------------------------------------------------------

TEST(CompareValues, ReportsTheWorstField) {
  const Value expected = Value::tuple({f32({2}, {1, 2}), Value::tuple({f32({1}, {5})})});
  const Value close = Value::tuple({f32({2}, {1, 2.00001}), Value::tuple({f32({1}, {5})})});
  const Value far = Value::tuple({f32({2}, {1, 2.00001}), Value::tuple({f32({1}, {6})})});
  EXPECT_TRUE(compare(close, expected));
  const ValueComparison result = compare(far, expected);
  EXPECT_FALSE(result);
  EXPECT_EQ(result.path, "output[1][0]");
  EXPECT_EQ(result.worst.max_abs_error, 1.0);
  EXPECT_TRUE(contains(result.str(), "output[1][0]: max abs error 1 at [0] (6 vs 5)")) << result.str();
}

TEST(CompareValues, StructuralDifferences) {
  const Value pair = Value::tuple({f32({1}, {1}), f32({1}, {2})});
  const ValueComparison fewer = compare(Value::tuple({f32({1}, {1})}), pair);
  EXPECT_FALSE(fewer);
  EXPECT_EQ(fewer.str(), "output: got (float32(1)), expected (float32(1), float32(1))");
  const ValueComparison kind = compare(Value(f32({1}, {1})), pair);
  EXPECT_FALSE(kind);
  EXPECT_EQ(compare(Value::shape({1, 2}), Value::shape({1, 2})).within_tolerance, true);
  EXPECT_FALSE(compare(Value::shape({1, 2}), Value::shape({2, 1})));
}

}  // namespace
}  // namespace dpl
