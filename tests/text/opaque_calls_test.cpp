// Opaque ONNX calls in text: registered from their calls when unknown, printed back byte for byte, and each
// diagnostic. Every test names its own ops (`onnx.text.*`): the registry is one per process.
#include <ostream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "dpl/ir/analysis.h"
#include "dpl/ir/opaque_ops.h"
#include "text_test_util.h"

namespace dpl {
namespace {

using text_test::fails_with;
using text_test::read_ok;
using text_test::read_string;

// `body` as the dataflow block of main(x: 16x16 float32) returning y of type `y_type`; the body starts on line 6.
std::string with_block(const std::string& body, const std::string& y_type = "R.Tensor((16, 16), dtype=\"float32\")") {
  return "# from tvm.script import relax as R\n"
         "\n"
         "@R.function\n"
         "def main(x: R.Tensor((16, 16), dtype=\"float32\")) -> " + y_type + ":\n"
         "    with R.dataflow():\n" +
         body + "        R.output(y)\n    return y\n";
}

// Reads `text`, which must be in printed form, and prints it back unchanged.
const Function* read_and_print_back(const std::string& text, std::unique_ptr<text_test::ReadResult>& result) {
  result = read_ok(text);
  if (result->module == nullptr) return nullptr;
  EXPECT_EQ(print_module(*result->module), text);
  return result->module->functions()[0].get();
}

const OpInfo& registered(std::string_view name) {
  const OpInfo* info = OpRegistry::global().find(name);
  EXPECT_NE(info, nullptr) << name << " is not registered";
  static const OpInfo none;
  return info != nullptr ? *info : none;
}

std::string attr_kinds(const OpInfo& info) {
  std::string kinds;
  for (const AttrSpec& spec : info.attrs) kinds += spec.name + ":" + std::string(attr_kind_name(spec.kind)) + " ";
  return kinds;
}

TEST(OpaqueCalls, SingleOutputRegistersFromTheCallAndPrintsBack) {
  const std::string text = with_block(
      "        y: R.Tensor((16, 32), dtype=\"float32\") = R.onnx.text.Single(x, x, alpha=0.5, axes=[1, 2], count=3, "
      "mode=\"nearest\", result_types=\"float32:16,32\")\n",
      "R.Tensor((16, 32), dtype=\"float32\")");
  ASSERT_EQ(OpRegistry::global().find("onnx.text.Single"), nullptr);
  std::unique_ptr<text_test::ReadResult> result;
  const Function* main = read_and_print_back(text, result);
  ASSERT_NE(main, nullptr);
  const OpInfo& op = registered("onnx.text.Single");
  EXPECT_TRUE(is_onnx_opaque_op(op.id));
  EXPECT_EQ(op.min_operands, 0);
  EXPECT_EQ(op.max_operands, -1);
  EXPECT_EQ(attr_kinds(op), "alpha:float axes:int list count:int mode:string result_types:string ");
  EXPECT_EQ(main->output()->type()->str(), "R.Tensor((16, 32), dtype=\"float32\")");
}

TEST(OpaqueCalls, MultipleOutputsGiveATupleAndItsItems) {
  const std::string text = with_block(
      "        lv: R.Tuple(R.Tensor, R.Tensor(dtype=\"float32\", ndim=2), R.Tensor((), dtype=\"int64\")) = "
      "R.onnx.text.Multi(x, result_types=\":*;float32:?,?;int64:\")\n"
      "        y: R.Tensor((), dtype=\"int64\") = lv[2]\n",
      "R.Tensor((), dtype=\"int64\")");
  std::unique_ptr<text_test::ReadResult> result;
  const Function* main = read_and_print_back(text, result);
  ASSERT_NE(main, nullptr);
  const TypeRef tuple = main->output()->operand(0)->type();
  ASSERT_EQ(tuple->fields().size(), 3u);
  EXPECT_EQ(tuple->fields()[0]->rank(), -1);
  EXPECT_EQ(tuple->fields()[1]->rank(), 2);
  EXPECT_FALSE(tuple->fields()[1]->has_shape());
  EXPECT_EQ(tuple->fields()[2]->rank(), 0);
}

TEST(OpaqueCalls, SymbolicDimsAndUnknownRank) {
  const std::string text =
      "# from tvm.script import relax as R\n"
      "\n"
      "@R.function\n"
      "def main(x: R.Tensor((\"n\", 16), dtype=\"float32\")):\n"
      "    n = T.int64()\n"
      "    m = T.int64()\n"
      "    with R.dataflow():\n"
      "        a: R.Tensor((n, 2, m), dtype=\"float32\") = R.onnx.text.Symbolic(x, result_types=\"float32:n,2,m\")\n"
      "        y: R.Tensor = R.onnx.text.Symbolic(a, result_types=\":*\")\n"
      "        R.output(y)\n"
      "    return y\n";
  std::unique_ptr<text_test::ReadResult> result = read_string(text);
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  const std::string printed = print_module(*result->module);
  // The printer declares every symbol it shows; read back, the print is a fixed point.
  auto again = read_string(printed, "printed.relax");
  ASSERT_NE(again->module, nullptr) << again->diags.str() << printed;
  EXPECT_EQ(print_module(*again->module), printed);
  const Function& main = *again->module->functions()[0];
  const Node* a = main.output()->operand(0);
  ASSERT_TRUE(a->type()->has_shape());
  EXPECT_EQ(a->type()->dims()[0], Dim::symbol("n"));
  EXPECT_EQ(a->type()->dims()[2], Dim::symbol("m"));
  EXPECT_EQ(main.output()->type()->rank(), -1);
}

TEST(OpaqueCalls, KindsHoldTheValuesOfEveryCall) {
  const std::string text = with_block(
      "        a: R.Tensor((16, 16), dtype=\"float32\") = R.onnx.text.Kinds(x, clip=None, pads=None, size=2, "
      "tag=None, result_types=\"float32:16,16\")\n"
      "        y: R.Tensor((16, 16), dtype=\"float32\") = R.onnx.text.Kinds(a, clip=1.5, pads=[1, 1], size=[2, 3], "
      "tag=None, result_types=\"float32:16,16\")\n");
  std::unique_ptr<text_test::ReadResult> result;
  ASSERT_NE(read_and_print_back(text, result), nullptr);
  EXPECT_EQ(attr_kinds(registered("onnx.text.Kinds")),
            "clip:float or None pads:int list or None size:int or int list tag:string or None result_types:string ");
}

TEST(OpaqueCalls, NestedCallsAreRegisteredToo) {
  const std::string text = with_block(
      "        y = R.add(R.onnx.text.Inner(x, k=1, result_types=\"float32:16,16\"), x)\n");
  std::unique_ptr<text_test::ReadResult> result = read_ok(text);
  ASSERT_NE(result->module, nullptr);
  EXPECT_EQ(attr_kinds(registered("onnx.text.Inner")), "k:int result_types:string ");
}

TEST(OpaqueCalls, AnOpRegisteredBeforeIsUsedWithItsDefaults) {
  std::string error;
  ASSERT_TRUE(register_onnx_opaque_op("onnx.text.Known", {AttrSpec{"axis", AttrKind::Int, int64_t{7}}}, error))
      << error;
  std::unique_ptr<text_test::ReadResult> result =
      read_ok(with_block("        y = R.onnx.text.Known(x, result_types=\"float32:16,16\")\n"));
  ASSERT_NE(result->module, nullptr);
  EXPECT_NE(print_module(*result->module).find("R.onnx.text.Known(x, axis=7, result_types="), std::string::npos);
}

TEST(OpaqueCalls, TheImporterNamesAnotherSignatureWithASuffix) {
  std::string error, name;
  ASSERT_TRUE(register_onnx_opaque_op("onnx.text.Twice", {AttrSpec{"a", AttrKind::Int, int64_t{0}}}, error));
  ASSERT_TRUE(register_onnx_opaque_variant("onnx.text.Twice", {AttrSpec{"a", AttrKind::Int, int64_t{0}}}, name,
                                           error));
  EXPECT_EQ(name, "onnx.text.Twice");
  ASSERT_TRUE(register_onnx_opaque_variant("onnx.text.Twice", {AttrSpec{"b", AttrKind::Float, 0.0}}, name, error));
  EXPECT_EQ(name, "onnx.text.Twice_2");
  // Read from text, the second signature is the op its name says.
  std::unique_ptr<text_test::ReadResult> result = read_ok(
      with_block("        y = R.onnx.text.Twice_2(x, b=2.0, result_types=\"float32:16,16\")\n"));
  ASSERT_NE(result->module, nullptr);
  EXPECT_EQ(OpRegistry::global().get(result->module->functions()[0]->output()->op()).name, "onnx.text.Twice_2");
}

TEST(OpaqueCalls, ResultTypesSpellingsParse) {
  std::string error;
  EXPECT_EQ(parse_result_types("float32:1,3,n,n", error)->str(), "R.Tensor((1, 3, n, n), dtype=\"float32\")");
  EXPECT_EQ(parse_result_types("int64:", error)->str(), "R.Tensor((), dtype=\"int64\")");
  EXPECT_EQ(parse_result_types(":*;bool:?", error)->str(),
            "R.Tuple(R.Tensor, R.Tensor(dtype=\"bool\", ndim=1))");
  const TypeRef types[] = {parse_result_types("float32:1,n", error), nullptr};
  EXPECT_EQ(result_types_spelling(types), "float32:1,n;:*");
}

// ---- diagnostics ----

// A result_types spelling and the error reported at its value (line 6, column 42 + the op name's length).
struct BadResultTypes {
  std::string op;
  std::string spelling;
  std::string error;
  friend void PrintTo(const BadResultTypes& bad, std::ostream* out) { *out << bad.op << ": " << bad.spelling; }
};

class OpaqueCallResultTypes : public ::testing::TestWithParam<BadResultTypes> {};

TEST_P(OpaqueCallResultTypes, AreReportedAtTheValue) {
  const BadResultTypes& bad = GetParam();
  EXPECT_TRUE(fails_with(with_block("        y = R.onnx.text." + bad.op + "(x, result_types=\"" + bad.spelling + "\")\n"),
                         6, static_cast<uint32_t>(42 + bad.op.size()), "R.onnx.text." + bad.op + ": " + bad.error));
}

INSTANTIATE_TEST_SUITE_P(
    OpaqueCallDiagnostics, OpaqueCallResultTypes,
    ::testing::Values(
        BadResultTypes{"BadDim", "float32:1,x y", "result type 'float32:1,x y' has a bad dimension 'x y'"},
        BadResultTypes{"BadDtype", "float33:1", "result type 'float33:1' has an unknown dtype 'float33'"},
        BadResultTypes{"NoColon", "float32",
                       "result type 'float32' has no ':' (write dtype:dims, such as float32:1,3,n)"},
        BadResultTypes{"Mixed", "float32:?,3",
                       "result type 'float32:?,3' mixes '?' with known dimensions (the spelling knows a whole shape "
                       "or only the rank)"},
        BadResultTypes{"Empty", "",
                       "no result_types: an opaque op's result type is the one its result_types attribute spells"}),
    [](const ::testing::TestParamInfo<BadResultTypes>& info) { return info.param.op; });

TEST(OpaqueCallDiagnostics, NoResultTypesIsAnUnknownOp) {
  EXPECT_TRUE(fails_with(with_block("        y = R.onnx.text.Untyped(x, k=1)\n"), 6, 13,
                         "unknown op 'R.onnx.text.Untyped': a call in the onnx. namespace is read as an opaque "
                         "ONNX op when it gives the result_types attribute (on its first call)"));
}

TEST(OpaqueCallDiagnostics, OutsideTheOnnxNamespaceAnUnknownOpStaysAnError) {
  EXPECT_TRUE(fails_with(with_block("        y = R.text.Foreign(x, result_types=\"float32:16,16\")\n"), 6, 13,
                         "unknown op 'R.text.Foreign'"));
}

TEST(OpaqueCallDiagnostics, ACallWithoutAnAttributeTheFirstCallGives) {
  auto result = read_string(with_block(
      "        a = R.onnx.text.Gap(x, k=1, mode=\"a\", result_types=\"float32:16,16\")\n"
      "        y = R.onnx.text.Gap(a, result_types=\"float32:16,16\")\n"));
  EXPECT_EQ(result->module, nullptr);
  ASSERT_EQ(result->diags.error_count(), 1u) << result->diags.str();
  const Diagnostic& error = result->diags.diagnostics()[0];
  EXPECT_EQ(error.message, "R.onnx.text.Gap is called without 'k', 'mode', which its call on line 6 gives: the "
                           "calls of an opaque op read from text give the same attributes (its signature is made "
                           "from them)");
  EXPECT_EQ(error.loc.line, 7u);
  EXPECT_EQ(error.loc.col, 13u);
  EXPECT_EQ(error.loc.length, 15u);
}

TEST(OpaqueCallDiagnostics, ValuesOfClashingKindsAreReportedWhereTheyDiffer) {
  EXPECT_TRUE(fails_with(with_block("        a = R.onnx.text.Clash(x, k=1, result_types=\"float32:16,16\")\n"
                                    "        y = R.onnx.text.Clash(a, k=\"one\", result_types=\"float32:16,16\")\n"),
                         7, 36, "attribute 'k' of R.onnx.text.Clash expects int, got string"));
}

TEST(OpaqueCallDiagnostics, AnAttributeTheRegisteredOpLacks) {
  std::string error;
  ASSERT_TRUE(register_onnx_opaque_op("onnx.text.Fixed", {AttrSpec{"a", AttrKind::Int, int64_t{0}}}, error));
  EXPECT_TRUE(fails_with(with_block("        y = R.onnx.text.Fixed(x, b=1, result_types=\"float32:16,16\")\n"), 6,
                         34, "R.onnx.text.Fixed has no attribute 'b'; valid attributes: a, result_types"));
}

// ---- robustness: the scan before reading sees every mutation first ----

TEST(OpaqueCallRobustness, MutatedOpaqueCallsReadOrFailWithLocatedErrors) {
  const std::string model = with_block(
      "        lv: R.Tuple(R.Tensor((16, 16), dtype=\"float32\"), R.Tensor) = R.onnx.text.RobustA(x, "
      "R.onnx.text.RobustB(x, k=[1, -2], result_types=\"float32:16,16\"), a=-1.5, m=None, "
      "result_types=\"float32:16,16;:*\")\n"
      "        y: R.Tensor((16, 16), dtype=\"float32\") = lv[0]\n");
  ASSERT_NE(read_ok(model)->module, nullptr);
  std::mt19937 random(20261126);
  const std::string interesting = "()[],:=.-\"\n Ronx0123456789?*;_";
  for (int round = 0; round < 1500; ++round) {
    std::string mutated = model;
    if (round % 4 == 0) {
      mutated.resize(random() % mutated.size());
    } else {
      for (int i = 0; i <= round % 3; ++i) {
        const size_t at = random() % mutated.size();
        if (random() % 2 == 0)
          mutated[at] = interesting[random() % interesting.size()];
        else
          mutated.erase(at, 1);
      }
    }
    auto result = read_string(mutated, "mutated.relax");
    if (result->module != nullptr) {
      EXPECT_FALSE(result->diags.has_errors()) << mutated;
      EXPECT_EQ(verify(*result->module), "") << mutated;
      EXPECT_NE(read_string(print_module(*result->module))->module, nullptr) << mutated;
      continue;
    }
    ASSERT_TRUE(result->diags.has_errors()) << mutated;
    for (const Diagnostic& diag : result->diags.diagnostics()) EXPECT_TRUE(diag.loc.valid()) << diag.message;
  }
}

}  // namespace
}  // namespace dpl
