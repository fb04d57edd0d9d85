// Rules naming an opaque ONNX op: the compiled pass and the rule interpreter rewrite calls read from text alike, and
// a declaration that disagrees with an op registered from a model is a clear error.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "dpl/compiler/compile.h"
#include "dpl/compiler/rule_interpreter.h"
#include "dpl/ir/opaque_ops.h"
#include "dpl/rewrite/driver.h"
#include "dpl/text/tvmscript.h"
#include "fold_conv_transpose_bias.dpl.h"

namespace dpl {
namespace {

const std::string kRules = DPL_OPAQUE_TEST_DIR "/fold_conv_transpose_bias.dpl";

// main(x, w, b) computing `body`, where `ATTRS` stands for the ConvTranspose's attributes.
std::string with_body(const std::string& body) {
  std::string text =
      "# from tvm.script import relax as R\n"
      "\n"
      "@R.function\n"
      "def main(x: R.Tensor((1, 4, 8, 8), dtype=\"float32\"), w: R.Tensor((4, 2, 2, 2), dtype=\"float32\"), "
      "b: R.Tensor((1, 2, 1, 1), dtype=\"float32\")) -> R.Tensor((1, 2, 16, 16), dtype=\"float32\"):\n"
      "    with R.dataflow():\n" +
      body +
      "        R.output(y)\n"
      "    return y\n";
  const std::string attrs = "auto_pad=\"NOTSET\", dilations=[1, 1], group=1, kernel_shape=[2, 2], "
                            "output_padding=None, output_shape=None, pads=[0, 0, 0, 0], strides=[2, 2], "
                            "result_types=\"float32:1,2,16,16\"";
  return text.replace(text.find("ATTRS"), 5, attrs);
}

// A ConvTranspose kept opaque, then a per-channel bias add, as the ONNX importer prints PP-OCR's detection head.
const std::string kInput = with_body(
    "        t: R.Tensor((1, 2, 16, 16), dtype=\"float32\") = R.onnx.ConvTranspose(x, w, ATTRS)\n"
    "        y: R.Tensor((1, 2, 16, 16), dtype=\"float32\") = R.add(t, b)\n");

const std::string kExpected = with_body(
    "        lv: R.Tensor((2,), dtype=\"float32\") = R.squeeze(b, axis=[0, 2, 3])\n"
    "        y: R.Tensor((1, 2, 16, 16), dtype=\"float32\") = R.onnx.ConvTranspose(x, w, lv, ATTRS)\n");

// Reads `text`, runs `pass` on it and prints the result.
std::string rewrite(const PassDef& pass, const std::string& text, size_t& rewrites) {
  SourceFile source("input.relax", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = read_module(source, diags);
  EXPECT_NE(module, nullptr) << diags.str();
  if (module == nullptr) return "";
  const PassResult result = run_pass(pass, *module);
  EXPECT_TRUE(result.ok()) << result.error;
  rewrites = result.stats.rewrites;
  return print_module(*module);
}

TEST(OpaqueRules, TheDeclaredOpIsAnOpaqueOpRegisteredBeforeMain) {
  const OpInfo* op = OpRegistry::global().find("onnx.ConvTranspose");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(is_onnx_opaque_op(op->id));
  EXPECT_EQ(op->max_operands, -1);
}

TEST(OpaqueRules, TheCompiledPassRewritesAnOpaqueCallReadFromText) {
  size_t rewrites = 0;
  EXPECT_EQ(rewrite(dpl_opaque_test::fold_conv_transpose_bias_pass(), kInput, rewrites), kExpected);
  EXPECT_EQ(rewrites, 1u);
}

TEST(OpaqueRules, TheRuleInterpreterRewritesItTheSameWay) {
  std::ostringstream messages;
  std::string error;
  std::unique_ptr<compiler::LoadedRules> rules = compiler::load_rules(kRules, messages, error);
  ASSERT_NE(rules, nullptr) << error << messages.str();
  const PassDef* pass = rules->interpreter->find_pass("fold_conv_transpose_bias");
  ASSERT_NE(pass, nullptr);
  size_t rewrites = 0;
  EXPECT_EQ(rewrite(*pass, kInput, rewrites), kExpected);
  EXPECT_EQ(rewrites, 1u);
}

TEST(OpaqueRules, ABiasOfAnotherShapeIsLeftAlone) {
  std::string input = kInput;
  input.replace(input.find("b: R.Tensor((1, 2, 1, 1)"), 24, "b: R.Tensor((2, 1, 1)   ");
  size_t rewrites = 1;
  const std::string output = rewrite(dpl_opaque_test::fold_conv_transpose_bias_pass(), input, rewrites);
  EXPECT_EQ(rewrites, 0u);
  EXPECT_NE(output.find("R.add(t, b)"), std::string::npos) << output;
}

// Reads a model with R.onnx.opaque_test.Conflict(x, k=1, ...), registering the op from its call, then checks `rules`.
std::string declaration_errors(const std::string& rules) {
  SourceFile model("model.relax",
                   "@R.function\n"
                   "def main(x: R.Tensor((2,), dtype=\"float32\")):\n"
                   "    y = R.onnx.opaque_test.Conflict(x, k=1, result_types=\"float32:2\")\n"
                   "    return y\n");
  DiagnosticEngine model_diags;
  EXPECT_NE(read_module(model, model_diags), nullptr) << model_diags.str();
  SourceFile source("rules.dpl", rules);
  DiagnosticEngine diags;
  compiler::CompileOptions options;
  options.generate = false;
  compiler::compile(source, diags, options);
  return diags.str();
}

TEST(OpaqueRules, ADeclarationDisagreeingWithAnOpReadFromAModelSaysWhatToDeclare) {
  EXPECT_EQ(declaration_errors("op onnx.opaque_test.Conflict(x, k: float = 0.0, result_types: string = \"\");\n"),
            "rules.dpl:1:4: error: opaque op 'onnx.opaque_test.Conflict' is already registered (by an ONNX import, "
            "a model read or a declaration) as `op onnx.opaque_test.Conflict(xs..., k: int = 0, result_types: "
            "string = \"\")`; declare it so, or load the rules before the model\n"
            "op onnx.opaque_test.Conflict(x, k: float = 0.0, result_types: string = \"\");\n"
            "   ^~~~\n");
  // Declared as the message says, it is the same op.
  EXPECT_EQ(declaration_errors("op onnx.opaque_test.Conflict(xs..., k: int = 0, result_types: string = \"\");\n"), "");
}

}  // namespace
}  // namespace dpl
