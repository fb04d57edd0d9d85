// One test per reader diagnostic: the exact message and its line:col, and that reading fails (nullptr).
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "text_test_util.h"

namespace dpl {
namespace {

using text_test::fails_with;
using text_test::read_string;

// A function `main(x: 16x16 float32)` whose body starts on line 3.
std::string with_body(const std::string& body) {
  return "@R.function\n"
         "def main(x: R.Tensor((16, 16), \"float32\")) -> R.Tensor((16, 16), \"float32\"):\n" +
         body;
}

// ---- names ----

TEST(ReaderDiagnostics, UndefinedName) {
  EXPECT_TRUE(fails_with(with_body("    with R.dataflow():\n"
                                   "        y = R.add(x, z)\n"
                                   "        R.output(y)\n"
                                   "    return y\n"),
                         4, 22, "undefined name 'z'"));
}

TEST(ReaderDiagnostics, RedefinitionHasANoteAtTheFirstDefinition) {
  auto result = read_string(with_body("    with R.dataflow():\n"
                                      "        y = R.add(x, x)\n"
                                      "        y = R.multiply(x, x)\n"
                                      "        R.output(y)\n"
                                      "    return y\n"));
  ASSERT_EQ(result->module, nullptr);
  ASSERT_EQ(result->diags.error_count(), 1u) << result->diags.str();
  const Diagnostic& error = result->diags.diagnostics()[0];
  EXPECT_EQ(error.message, "'y' is already defined");
  EXPECT_EQ(error.loc.line, 5u);
  EXPECT_EQ(error.loc.col, 9u);
  ASSERT_EQ(error.notes.size(), 1u);
  EXPECT_EQ(error.notes[0].message, "previous definition here");
  EXPECT_EQ(error.notes[0].loc.line, 4u);
}

TEST(ReaderDiagnostics, ParameterRedefinition) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def main(x: R.Tensor((2,), \"float32\"), x: R.Tensor((2,), \"float32\")):\n"
                         "    return x\n",
                         2, 40, "'x' is already defined"));
}

TEST(ReaderDiagnostics, ReservedName) {
  EXPECT_TRUE(fails_with(with_body("    R = R.add(x, x)\n"
                                   "    return R\n"),
                         3, 5, "'R' is reserved and cannot be bound"));
}

TEST(ReaderDiagnostics, DataflowLocalUsedAfterTheBlock) {
  // Seed 003's printed MLP returns `lv6`, a dataflow-block local, instead of its output `gv`.
  EXPECT_TRUE(fails_with(with_body("    with R.dataflow():\n"
                                   "        lv6 = R.add(x, x)\n"
                                   "        gv = lv6\n"
                                   "        R.output(gv)\n"
                                   "    return lv6\n"),
                         7, 12,
                         "'lv6' is local to the dataflow block; list it in R.output(...) to use it after the block"));
}

TEST(ReaderDiagnostics, OutputOfANameFromOutsideTheBlock) {
  EXPECT_TRUE(fails_with(with_body("    with R.dataflow():\n"
                                   "        y = R.add(x, x)\n"
                                   "        R.output(x)\n"
                                   "    return y\n"),
                         5, 18, "R.output: 'x' is not bound in this dataflow block"));
}

TEST(ReaderDiagnostics, SymbolicDimensionMustBeDeclared) {
  EXPECT_TRUE(fails_with(with_body("    y: R.Tensor((n, 16), \"float32\") = R.add(x, x)\n"
                                   "    return y\n"),
                         3, 18,
                         "undefined symbolic dimension 'n' (declare it with `n = T.int64()` or write it as a string)"));
}

TEST(ReaderDiagnostics, SymbolicDimensionIsNotAValue) {
  EXPECT_TRUE(fails_with(with_body("    n = T.int64()\n"
                                   "    y = R.add(x, n)\n"
                                   "    return y\n"),
                         4, 18, "'n' is a symbolic dimension, not a value"));
}

// ---- dimension expressions: each error points into the expression, bare or quoted ----

// A function with a symbolic dimension `n` whose body starts on line 4.
std::string with_symbolic_body(const std::string& body) {
  return "@R.function\n"
         "def main(x: R.Tensor((\"n\", 16), \"float32\")):\n"
         "    n = T.int64()\n" +
         body;
}

TEST(ReaderDiagnostics, DimensionTrueDivision) {
  EXPECT_TRUE(fails_with(with_symbolic_body("    y: R.Tensor((n / 2, 32), \"float32\") = "
                                            "R.reshape(x, R.shape([n // 2, 32]))\n"
                                            "    return y\n"),
                         4, 20, "'/' is true division; a dimension divides with '//'"));
}

TEST(ReaderDiagnostics, DimensionUnsupportedOperator) {
  EXPECT_TRUE(fails_with(with_symbolic_body("    y = R.reshape(x, R.shape([n ** 2, 16]))\n"
                                            "    return y\n"),
                         4, 33,
                         "unsupported '*' after a dimension (a dimension is integers, symbols, + - * // % and "
                         "parentheses)"));
}

TEST(ReaderDiagnostics, DimensionUnsupportedCall) {
  EXPECT_TRUE(fails_with(with_symbolic_body("    y = R.reshape(x, R.shape([T.max(n, 1), 16]))\n"
                                            "    return y\n"),
                         4, 31,
                         "unsupported call 'T.max' in a dimension (a dimension is integers, symbols, + - * // % and "
                         "parentheses)"));
}

TEST(ReaderDiagnostics, DimensionUndefinedSymbolInAnExpression) {
  EXPECT_TRUE(fails_with(with_symbolic_body("    y = R.reshape(x, R.shape([n * k, 16]))\n"
                                            "    return y\n"),
                         4, 35,
                         "undefined symbolic dimension 'k' (declare it with `k = T.int64()` or write it as a string)"));
}

TEST(ReaderDiagnostics, DimensionDivisionByZeroInASignatureString) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def main(x: R.Tensor((\"n // 0\", 16), \"float32\")):\n"
                         "    return x\n",
                         2, 29, "division by zero in a dimension"));
}

TEST(ReaderDiagnostics, DimensionMissingParenthesis) {
  EXPECT_TRUE(fails_with(with_symbolic_body("    y = R.reshape(x, R.shape([(n + 1, 16]))\n"
                                            "    return y\n"),
                         4, 41, "missing ')' in a dimension"));
}

TEST(ReaderDiagnostics, DimensionNegativeExpression) {
  EXPECT_TRUE(fails_with(with_symbolic_body("    y = R.reshape(x, R.shape([n - n - 2, 16]))\n"
                                            "    return y\n"),
                         4, 31, "negative dimension -2 (only -1, an inferred extent, is allowed)"));
}

// ---- ops, attributes and types ----

TEST(ReaderDiagnostics, UnknownOp) {
  EXPECT_TRUE(fails_with(with_body("    y = R.frobnicate(x)\n"
                                   "    return y\n"),
                         3, 9, "unknown op 'R.frobnicate'"));
}

TEST(ReaderDiagnostics, WrongArity) {
  EXPECT_TRUE(fails_with(with_body("    y = R.add(x)\n"
                                   "    return y\n"),
                         3, 9, "R.add expects 2 operands, got 1"));
}

TEST(ReaderDiagnostics, UnknownAttributeListsTheValidOnes) {
  EXPECT_TRUE(fails_with(with_body("    y = R.nn.softmax(x, axes=[1])\n"
                                   "    return y\n"),
                         3, 25, "R.nn.softmax has no attribute 'axes'; valid attributes: axis"));
}

TEST(ReaderDiagnostics, AttributeOfAnOpWithoutAttributes) {
  EXPECT_TRUE(fails_with(with_body("    y = R.add(x, x, axis=1)\n"
                                   "    return y\n"),
                         3, 21, "R.add has no attribute 'axis'; it takes no attributes"));
}

TEST(ReaderDiagnostics, AttributeOfTheWrongKind) {
  EXPECT_TRUE(fails_with(with_body("    y = R.nn.softmax(x, axis=\"last\")\n"
                                   "    return y\n"),
                         3, 30, "attribute 'axis' of R.nn.softmax expects int, got string"));
}

TEST(ReaderDiagnostics, AttributeGivenTwice) {
  EXPECT_TRUE(fails_with(with_body("    y = R.nn.softmax(x, axis=0, axis=1)\n"
                                   "    return y\n"),
                         3, 33, "attribute 'axis' given twice"));
}

TEST(ReaderDiagnostics, UnknownDTypeAttribute) {
  EXPECT_TRUE(fails_with(with_body("    y = R.astype(x, dtype=\"float33\")\n"
                                   "    return y\n"),
                         3, 27, "attribute 'dtype' of R.astype: unknown dtype \"float33\""));
}

TEST(ReaderDiagnostics, LiteralOperand) {
  EXPECT_TRUE(fails_with(with_body("    y = R.add(x, 1)\n"
                                   "    return y\n"),
                         3, 18,
                         "a literal is not an operand of R.add: pass attributes by keyword (attr=value) and constants "
                         "as R.const(value, \"dtype\")"));
}

TEST(ReaderDiagnostics, TypeInferenceErrorAtTheCall) {
  auto result = read_string("@R.function\n"
                            "def main(a: R.Tensor((4, 8), \"float32\"), b: R.Tensor((4, 8), \"float32\")):\n"
                            "    y = R.matmul(a, b)\n"
                            "    return y\n");
  ASSERT_EQ(result->module, nullptr);
  ASSERT_EQ(result->diags.error_count(), 1u) << result->diags.str();
  const Diagnostic& error = result->diags.diagnostics()[0];
  EXPECT_EQ(error.loc.line, 3u);
  EXPECT_EQ(error.loc.col, 9u);
  EXPECT_EQ(error.loc.length, 8u);  // the caret spans `R.matmul`
  // The message is the op registry's: it names the op and the clashing extents.
  EXPECT_NE(error.message.find("matmul"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("8"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("4"), std::string::npos) << error.message;
}

TEST(ReaderDiagnostics, AnnotationConflictNamesBothTypes) {
  EXPECT_TRUE(fails_with(with_body("    y: R.Tensor((16, 8), dtype=\"float32\") = R.add(x, x)\n"
                                   "    return y\n"),
                         3, 8,
                         "type annotation R.Tensor((16, 8), dtype=\"float32\") does not match the inferred type "
                         "R.Tensor((16, 16), dtype=\"float32\")"));
}

// A repeated annotation is looked up by its text (Reader::parse_type): its conflict is reported as the first
// one's, the caret spanning the whole annotation.
TEST(ReaderDiagnostics, RepeatedAnnotationConflictSpansTheAnnotation) {
  auto result = read_string(with_body("    y: R.Tensor((16, 8), dtype=\"float32\") = R.add(x, x)\n"
                                      "    z: R.Tensor((16, 8), dtype=\"float32\") = R.multiply(x, x)\n"
                                      "    return z\n"));
  ASSERT_EQ(result->module, nullptr);
  ASSERT_EQ(result->diags.error_count(), 2u) << result->diags.str();
  for (uint32_t i = 0; i < 2; ++i) {
    const Diagnostic& error = result->diags.diagnostics()[i];
    EXPECT_EQ(error.loc.line, 3u + i);
    EXPECT_EQ(error.loc.col, 8u);
    EXPECT_EQ(error.loc.length, std::string_view("R.Tensor((16, 8), dtype=\"float32\")").size());
    EXPECT_EQ(error.message, "type annotation R.Tensor((16, 8), dtype=\"float32\") does not match the inferred type "
                             "R.Tensor((16, 16), dtype=\"float32\")");
  }
}

// An annotation that failed to read is read again when repeated: here its symbol has been declared since.
TEST(ReaderDiagnostics, FailedAnnotationIsReadAgainWhenRepeated) {
  auto result = read_string(with_body("    y: R.Tensor((k, 16), dtype=\"float32\") = R.add(x, x)\n"
                                      "    k = T.int64()\n"
                                      "    z: R.Tensor((k, 16), dtype=\"float32\") = R.add(x, x)\n"
                                      "    return z\n"));
  ASSERT_EQ(result->module, nullptr);
  ASSERT_EQ(result->diags.error_count(), 1u) << result->diags.str();
  EXPECT_EQ(result->diags.diagnostics()[0].loc.line, 3u);
  EXPECT_EQ(result->diags.diagnostics()[0].message,
            "undefined symbolic dimension 'k' (declare it with `k = T.int64()` or write it as a string)");
}

TEST(ReaderDiagnostics, AnnotationDTypeConflict) {
  EXPECT_TRUE(fails_with(with_body("    y: R.Tensor((16, 16), dtype=\"float16\") = R.add(x, x)\n"
                                   "    return y\n"),
                         3, 8,
                         "type annotation R.Tensor((16, 16), dtype=\"float16\") does not match the inferred type "
                         "R.Tensor((16, 16), dtype=\"float32\")"));
}

TEST(ReaderDiagnostics, ReturnAnnotationConflict) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((5,), \"float32\"):\n"
                         "    return x\n",
                         2, 43,
                         "return type annotation R.Tensor((5,), dtype=\"float32\") does not match the type of the "
                         "returned value R.Tensor((4,), dtype=\"float32\")"));
}

TEST(ReaderDiagnostics, UnknownDType) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def main(x: R.Tensor((4,), \"f32\")):\n"
                         "    return x\n",
                         2, 28, "unknown dtype \"f32\""));
}

TEST(ReaderDiagnostics, NdimContradictsShape) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def main(x: R.Tensor((4,), \"float32\", ndim=2)):\n"
                         "    return x\n",
                         2, 44, "ndim=2 contradicts the shape's 1 dimensions"));
}

TEST(ReaderDiagnostics, NegativeDimension) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def main(x: R.Tensor((-4,), \"float32\")):\n"
                         "    return x\n",
                         2, 23, "negative dimension -4"));
}

TEST(ReaderDiagnostics, ParameterWithoutType) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def main(x):\n"
                         "    return x\n",
                         2, 10, "parameter 'x' needs a type annotation"));
}

TEST(ReaderDiagnostics, TupleIndexOutOfRange) {
  auto result = read_string(with_body("    t = (x, x)\n"
                                      "    y = t[2]\n"
                                      "    return y\n"));
  ASSERT_EQ(result->module, nullptr);
  ASSERT_EQ(result->diags.error_count(), 1u) << result->diags.str();
  const Diagnostic& error = result->diags.diagnostics()[0];
  EXPECT_EQ(error.loc.line, 4u);
  EXPECT_EQ(error.loc.col, 11u);
  EXPECT_NE(error.message.find("out of range"), std::string::npos) << error.message;
}

TEST(ReaderDiagnostics, ConstantOutOfRangeForItsDType) {
  EXPECT_TRUE(fails_with(with_body("    c = R.const(300, \"int8\")\n"
                                   "    return x\n"),
                         3, 9, "R.const: value 300 is out of range for dtype int8"));
}

TEST(ReaderDiagnostics, ConstantNotAnInteger) {
  EXPECT_TRUE(fails_with(with_body("    c = R.const(2.5, \"int32\")\n"
                                   "    return x\n"),
                         3, 9, "R.const: value 2.5 is not an integer for dtype int32"));
}

TEST(ReaderDiagnostics, RaggedConstant) {
  EXPECT_TRUE(fails_with(with_body("    c = R.const([[1.0, 2.0], [3.0]], \"float32\")\n"
                                   "    return x\n"),
                         3, 30, "R.const: nested lists must be rectangular"));
}

TEST(ReaderDiagnostics, ListAttributeHoldsIntegersOnly) {
  EXPECT_TRUE(fails_with(with_body("    y = R.permute_dims(x, axes=[1.0, 0])\n"
                                   "    return y\n"),
                         3, 33, "list attributes hold integers only, found '1.0'"));
}

// ---- module functions ----

TEST(ReaderDiagnostics, UnknownModuleFunction) {
  EXPECT_TRUE(fails_with("@I.ir_module\n"
                         "class Module:\n"
                         "    @R.function\n"
                         "    def main(x: R.Tensor((2,), \"float32\")):\n"
                         "        cls = Module\n"
                         "        y = cls.nothing(x)\n"
                         "        return y\n",
                         6, 17, "the module has no function 'nothing'"));
}

TEST(ReaderDiagnostics, ModuleFunctionArity) {
  EXPECT_TRUE(fails_with("@I.ir_module\n"
                         "class Module:\n"
                         "    @R.function\n"
                         "    def main(x: R.Tensor((2,), \"float32\")):\n"
                         "        cls = Module\n"
                         "        y = cls.double(x, x)\n"
                         "        return y\n"
                         "\n"
                         "    @R.function\n"
                         "    def double(a: R.Tensor((2,), \"float32\")):\n"
                         "        b = R.add(a, a)\n"
                         "        return b\n",
                         6, 13, "cls.double expects 1 argument, got 2"));
}

TEST(ReaderDiagnostics, ModuleFunctionArgumentType) {
  EXPECT_TRUE(fails_with("@I.ir_module\n"
                         "class Module:\n"
                         "    @R.function\n"
                         "    def main(x: R.Tensor((3,), \"float32\")):\n"
                         "        y = Module.double(x)\n"
                         "        return y\n"
                         "\n"
                         "    @R.function\n"
                         "    def double(a: R.Tensor((2,), \"float32\")):\n"
                         "        b = R.add(a, a)\n"
                         "        return b\n",
                         5, 13,
                         "argument 1 of Module.double has type R.Tensor((3,), dtype=\"float32\"), but parameter 'a' "
                         "is R.Tensor((2,), dtype=\"float32\")"));
}

TEST(ReaderDiagnostics, RecursiveCall) {
  EXPECT_TRUE(fails_with("@I.ir_module\n"
                         "class Module:\n"
                         "    @R.function\n"
                         "    def main(x: R.Tensor((2,), \"float32\")):\n"
                         "        cls = Module\n"
                         "        y = cls.main(x)\n"
                         "        return y\n",
                         6, 13, "recursive call of 'main': recursive functions are not supported"));
}

TEST(ReaderDiagnostics, DuplicateFunction) {
  EXPECT_TRUE(fails_with("@I.ir_module\n"
                         "class Module:\n"
                         "    @R.function\n"
                         "    def f(x: R.Tensor((2,), \"float32\")):\n"
                         "        return x\n"
                         "\n"
                         "    @R.function\n"
                         "    def f(x: R.Tensor((2,), \"float32\")):\n"
                         "        return x\n",
                         8, 9, "function 'f' is already defined"));
}

TEST(ReaderDiagnostics, ClsWithoutAlias) {
  EXPECT_TRUE(fails_with("@I.ir_module\n"
                         "class Module:\n"
                         "    @R.function\n"
                         "    def main(x: R.Tensor((2,), \"float32\")):\n"
                         "        y = cls.g(x)\n"
                         "        return y\n"
                         "\n"
                         "    @R.function\n"
                         "    def g(a: R.Tensor((2,), \"float32\")):\n"
                         "        return a\n",
                         5, 13, "undefined name 'cls'"));
}

// ---- structure ----

TEST(ReaderDiagnostics, MissingReturn) {
  EXPECT_TRUE(fails_with(with_body("    with R.dataflow():\n"
                                   "        y = R.add(x, x)\n"
                                   "        R.output(y)\n"),
                         2, 5, "function 'main' has no return statement"));
}

TEST(ReaderDiagnostics, StatementAfterReturn) {
  EXPECT_TRUE(fails_with(with_body("    return x\n"
                                   "    y = R.add(x, x)\n"),
                         4, 5, "statements after 'return' are not supported"));
}

TEST(ReaderDiagnostics, ReturnInsideTheBlock) {
  EXPECT_TRUE(fails_with(with_body("    with R.dataflow():\n"
                                   "        return x\n"),
                         4, 9, "'return' inside a dataflow block; return after the block ends"));
}

TEST(ReaderDiagnostics, StatementAfterOutput) {
  EXPECT_TRUE(fails_with(with_body("    with R.dataflow():\n"
                                   "        y = R.add(x, x)\n"
                                   "        R.output(y)\n"
                                   "        z = R.add(y, y)\n"
                                   "    return y\n"),
                         6, 9, "R.output(...) must be the last statement of the dataflow block"));
}

TEST(ReaderDiagnostics, OutputOutsideABlock) {
  EXPECT_TRUE(fails_with(with_body("    R.output(x)\n"
                                   "    return x\n"),
                         3, 5, "R.output(...) is only allowed at the end of a dataflow block"));
}

TEST(ReaderDiagnostics, UnboundExpressionStatement) {
  EXPECT_TRUE(fails_with(with_body("    R.add(x, x)\n"
                                   "    return x\n"),
                         3, 5, "a value must be bound to a name: write `lv = R.add(...)`"));
}

TEST(ReaderDiagnostics, ControlFlow) {
  EXPECT_TRUE(fails_with(with_body("    if x:\n"
                                   "        y = R.add(x, x)\n"
                                   "    return x\n"),
                         3, 5, "control flow ('if') is not supported: dpl reads dataflow graphs"));
}

TEST(ReaderDiagnostics, MissingDecorator) {
  EXPECT_TRUE(fails_with("def main(x: R.Tensor((2,), \"float32\")):\n"
                         "    return x\n",
                         1, 1, "missing @R.function decorator before 'def'"));
}

TEST(ReaderDiagnostics, UnknownDecorator) {
  EXPECT_TRUE(fails_with("@R.funktion\n"
                         "def main(x: R.Tensor((2,), \"float32\")):\n"
                         "    return x\n",
                         1, 1, "unknown decorator @R.funktion; expected @R.function or @I.ir_module"));
}

TEST(ReaderDiagnostics, TwoTopLevelFunctions) {
  EXPECT_TRUE(fails_with("@R.function\n"
                         "def f(x: R.Tensor((2,), \"float32\")):\n"
                         "    return x\n"
                         "\n"
                         "@R.function\n"
                         "def g(x: R.Tensor((2,), \"float32\")):\n"
                         "    return x\n",
                         5, 1,
                         "a file holds one @R.function or one @I.ir_module; put several functions in an @I.ir_module "
                         "class"));
}

TEST(ReaderDiagnostics, EmptyFile) {
  EXPECT_TRUE(fails_with("# nothing but a comment\n", 2, 1, "no @R.function or @I.ir_module found"));
}

TEST(ReaderDiagnostics, ExpectedToken) {
  EXPECT_TRUE(fails_with(with_body("    y = R.add(x x)\n"
                                   "    return y\n"),
                         3, 17, "expected ',' or ')', found 'x'"));
}

// ---- lexical errors ----

TEST(ReaderDiagnostics, BadCharacter) {
  EXPECT_TRUE(fails_with(with_body("    y = R.add(x, x) $\n"
                                   "    return y\n"),
                         3, 21, "unexpected character '$'"));
}

// Operators are tokens (dimensions use them) but no other expression does.
TEST(ReaderDiagnostics, PythonOperatorOutsideADimension) {
  EXPECT_TRUE(fails_with(with_body("    y = x + x\n"
                                   "    return y\n"),
                         3, 11, "expected end of line, found '+'"));
}

TEST(ReaderDiagnostics, BadNumber) {
  EXPECT_TRUE(fails_with(with_body("    y = R.nn.softmax(x, axis=1x)\n"
                                   "    return y\n"),
                         3, 30, "invalid number literal '1x'"));
}

TEST(ReaderDiagnostics, UnterminatedString) {
  EXPECT_TRUE(fails_with(with_body("    y = R.astype(x, dtype=\"float32)\n"
                                   "    return y\n"),
                         3, 27, "unterminated string literal"));
}

TEST(ReaderDiagnostics, NeverClosedParenthesis) {
  auto result = read_string(with_body("    y = R.add(x, x\n"
                                      "    return y\n"));
  ASSERT_EQ(result->module, nullptr);
  bool found = false;
  for (const Diagnostic& error : result->diags.diagnostics()) {
    if (error.message == "'(' was never closed") {
      found = true;
      EXPECT_EQ(error.loc.line, 3u);
      EXPECT_EQ(error.loc.col, 14u);
    }
  }
  EXPECT_TRUE(found) << result->diags.str();
}

TEST(ReaderDiagnostics, InconsistentDedent) {
  EXPECT_TRUE(fails_with(with_body("    with R.dataflow():\n"
                                   "        y = R.add(x, x)\n"
                                   "      R.output(y)\n"
                                   "    return y\n"),
                         5, 1, "unindent does not match any outer indentation level"));
}

TEST(ReaderDiagnostics, UnexpectedIndentation) {
  EXPECT_TRUE(fails_with(with_body("    y = R.add(x, x)\n"
                                   "        z = R.add(y, y)\n"
                                   "    return y\n"),
                         4, 9, "unexpected indentation"));
}

TEST(ReaderDiagnostics, TabIndentation) {
  EXPECT_TRUE(fails_with(with_body("\ty = R.add(x, x)\n"
                                   "\treturn y\n"),
                         3, 1, "tab character in indentation; indent with spaces"));
}

// ---- TVMScript outside the subset ----

TEST(ReaderDiagnostics, CallTirIsNotSupported) {
  EXPECT_TRUE(fails_with(with_body("    y = R.call_tir(cls.f, (x,), out_sinfo=R.Tensor((16, 16), \"float32\"))\n"
                                   "    return y\n"),
                         3, 9, "R.call_tir is not supported: dpl reads graph-level Relax ops only"));
}

TEST(ReaderDiagnostics, PrimValueIsNotSupported) {
  EXPECT_TRUE(fails_with(with_body("    y = R.strided_slice(x, R.prim_value(0))\n"
                                   "    return y\n"),
                         3, 28, "R.prim_value is not supported: dpl reads graph-level Relax ops only"));
}

TEST(ReaderDiagnostics, MetadataIsNotSupported) {
  EXPECT_TRUE(fails_with(with_body("    y = R.add(x, metadata[\"relax.expr.Constant\"][0])\n"
                                   "    return y\n"),
                         3, 18, "metadata[...] constants are not supported; pass weights as function parameters"));
}

TEST(ReaderDiagnostics, PrimFuncIsNotSupported) {
  EXPECT_TRUE(fails_with("@T.prim_func\n"
                         "def f(A: T.Buffer((4,), \"float32\")):\n"
                         "    T.evaluate(0)\n",
                         1, 1, "@T.prim_func is not supported: dpl reads Relax functions (@R.function) only"));
}

TEST(ReaderDiagnostics, NestedFunctionIsNotSupported) {
  EXPECT_TRUE(fails_with(with_body("    @R.function\n"
                                   "    def inner(y: R.Tensor((2,), \"float32\")):\n"
                                   "        return y\n"
                                   "    return x\n"),
                         3, 5, "nested functions are not supported"));
}

// ---- the remaining messages, one case each ----

struct DiagnosticCase {
  const char* name;
  std::string text;
  uint32_t line;
  uint32_t col;
  std::string message;
};

void PrintTo(const DiagnosticCase& c, std::ostream* out) { *out << c.name; }

class EachDiagnostic : public ::testing::TestWithParam<DiagnosticCase> {};

TEST_P(EachDiagnostic, HasItsMessageAndLocation) {
  const DiagnosticCase& c = GetParam();
  EXPECT_TRUE(fails_with(c.text, c.line, c.col, c.message));
}

// A module whose single function has the given body (starting on line 5, indented by 8).
std::string module_with_body(const std::string& body) {
  return "@I.ir_module\n"
         "class Module:\n"
         "    @R.function\n"
         "    def main(x: R.Tensor((16, 16), \"float32\")):\n" +
         body;
}

const DiagnosticCase kCases[] = {
    {"ExpectedLineEnd", with_body("    y = R.add(x, x) x\n    return y\n"), 3, 21, "expected end of line, found 'x'"},
    {"IntegerOutOfRange", with_body("    y = R.nn.softmax(x, axis=99999999999999999999)\n    return y\n"), 3, 30,
     "integer literal 99999999999999999999 is out of range"},
    {"FloatOutOfRange", with_body("    c = R.const(1e999, \"float64\")\n    return x\n"), 3, 17,
     "number 1e999 is out of range"},
    {"BadFloatCall", with_body("    c = R.const(float(\"big\"), \"float32\")\n    return x\n"), 3, 23,
     "float(...) takes \"inf\", \"-inf\" or \"nan\""},
    {"UnsupportedFunctionArgument",
     "@R.function(pure=False)\ndef main(x: R.Tensor((2,), \"float32\")):\n    return x\n", 1, 13,
     "@R.function(pure=...) is not supported; only private=True/False is"},
    {"PrivateNeedsABool", "@R.function(private=1)\ndef main(x: R.Tensor((2,), \"float32\")):\n    return x\n", 1, 21,
     "expected True or False, found '1'"},
    {"ClassWithoutDecorator", "class Module:\n    pass\n", 1, 1, "missing @I.ir_module decorator before 'class'"},
    {"StrayTopLevelCode", "x = 1\n", 1, 1, "expected @R.function or @I.ir_module, found 'x'"},
    {"ClassBases", "@I.ir_module\nclass Module(object):\n    pass\n", 2, 13, "class bases are not supported"},
    {"ClassWithoutBody", "@I.ir_module\nclass Module:\npass\n", 3, 1, "expected an indented class body"},
    {"NestedIrModule", "@I.ir_module\nclass Module:\n    @I.ir_module\n    class Inner:\n        pass\n", 3, 5,
     "nested @I.ir_module"},
    {"CodeInTheClassBody", "@I.ir_module\nclass Module:\n    x = 1\n", 3, 5,
     "expected an @R.function in the class body, found 'x'"},
    {"DecoratorWithoutDef", "@R.function\nclass Module:\n    pass\n", 2, 1,
     "expected 'def' after @R.function, found 'class'"},
    {"FunctionWithoutBody", "@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\nreturn x\n", 3, 1,
     "expected an indented function body"},
    {"NestedDataflowBlock",
     with_body("    with R.dataflow():\n        with R.dataflow():\n            y = R.add(x, x)\n    return x\n"), 4, 9,
     "nested dataflow blocks are not supported"},
    {"OtherWithBlock", with_body("    with R.other():\n        y = R.add(x, x)\n    return x\n"), 3, 5,
     "only `with R.dataflow():` blocks are supported"},
    {"EmptyDataflowBlock", with_body("    with R.dataflow():\n    return x\n"), 4, 5,
     "expected an indented dataflow block"},
    {"ReturnWithoutValue", with_body("    return\n"), 3, 11, "'return' needs a value"},
    {"FuncAttrInsideTheBlock",
     with_body("    with R.dataflow():\n        R.func_attr({\"Primitive\": True})\n        y = R.add(x, x)\n"
               "        R.output(y)\n    return y\n"),
     4, 9, "R.func_attr(...) belongs at function level, before the dataflow block"},
    {"FuncAttrTwice", with_body("    R.func_attr({\"A\": 1})\n    R.func_attr({\"B\": 2})\n    return x\n"), 4, 5,
     "R.func_attr(...) given twice"},
    {"FuncAttrNestedDict", with_body("    R.func_attr({\"bounds\": {\"n\": 4}})\n    return x\n"), 3, 28,
     "nested dictionaries in R.func_attr are not supported"},
    {"FuncAttrKeyTwice", with_body("    R.func_attr({\"A\": 1, \"A\": 2})\n    return x\n"), 3, 26,
     "function attribute \"A\" given twice"},
    {"OtherTirDeclaration", with_body("    n = T.float32()\n    return x\n"), 3, 9,
     "T.float32 is not supported; symbolic dimensions are declared as `n = T.int64()`"},
    {"AnnotatedSymbol", with_body("    n: R.Object = T.int64()\n    return x\n"), 3, 5,
     "a symbolic dimension takes no type annotation"},
    {"FunctionNameAsValue",
     "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((2,), \"float32\")):\n"
     "        y = helper\n        return y\n\n    @R.function\n    def helper(a: R.Tensor((2,), \"float32\")):\n"
     "        return a\n",
     5, 13, "undefined name 'helper'; call a function of the module as cls.helper(...)"},
    {"LiteralAsAValue", with_body("    y = 3\n    return y\n"), 3, 9,
     "a literal is not a value here: write constants as R.const(value, \"dtype\")"},
    {"TirExpression", with_body("    y = T.int64(3)\n    return y\n"), 3, 9,
     "TIR expressions (T.xxx) are not supported in Relax values"},
    {"NotAValue", with_body("    y = ,\n    return y\n"), 3, 9, "expected a value, found ','"},
    {"PositionalAfterKeyword", with_body("    y = R.nn.softmax(axis=0, x)\n    return y\n"), 3, 30,
     "positional argument after keyword arguments in R.nn.softmax(...)"},
    {"StatementAsValue", with_body("    y = R.output(x)\n    return y\n"), 3, 9,
     "R.output(...) is a statement, not a value"},
    {"TypeAsValue", with_body("    y = R.Tensor((2,), \"float32\")\n    return y\n"), 3, 9,
     "R.Tensor is a type, not a value"},
    {"KeywordInModuleFunctionCall",
     module_with_body("        cls = Module\n        y = cls.g(a=x)\n        return y\n\n    @R.function\n"
                      "    def g(a: R.Tensor((16, 16), \"float32\")):\n        return a\n"),
     6, 19, "keyword arguments are not supported in calls of module functions"},
    {"ConstWithoutANumber", with_body("    c = R.const(x, \"float32\")\n    return x\n"), 3, 17,
     "expected a number for R.const, found 'x'"},
    {"ConstWithUnknownDType", with_body("    c = R.const(1.0, \"float31\")\n    return x\n"), 3, 22,
     "unknown dtype \"float31\""},
    {"MinusWithoutANumber", with_body("    y = R.nn.softmax(x, axis=-x)\n    return y\n"), 3, 31,
     "expected a number after '-', found 'x'"},
    {"NotAnAttributeValue", with_body("    y = R.nn.softmax(x, axis=x)\n    return y\n"), 3, 30,
     "expected an attribute value (number, string, True/False/None or a list of integers), found 'x'"},
    {"NotAShape", with_body("    y: R.Tensor(16, \"float32\") = R.add(x, x)\n    return y\n"), 3, 17,
     "expected a shape such as (16, 16), found '16'"},
    {"EmptySymbolName", "@R.function\ndef main(x: R.Tensor((\"\", 4), \"float32\")):\n    return x\n", 2, 23,
     "invalid symbolic dimension \"\""},
    {"ValueAsADimension", with_body("    y: R.Tensor((x, 16), \"float32\") = R.add(x, x)\n    return y\n"), 3, 18,
     "'x' is a value, not a symbolic dimension"},
    {"NotAType", "@R.function\ndef main(x: Tensor):\n    return x\n", 2, 13,
     "expected a type such as R.Tensor((16, 16), dtype=\"float32\"), found 'Tensor'"},
    {"UnsupportedType", "@R.function\ndef main(x: R.Prim(\"int64\")):\n    return x\n", 2, 13,
     "type R.Prim is not supported"},
    {"NdimOutOfRange", "@R.function\ndef main(x: R.Tensor(ndim=99)):\n    return x\n", 2, 27,
     "ndim must be between -1 and 64"},
    {"TooManyTensorArguments", "@R.function\ndef main(x: R.Tensor((2,), \"float32\", 3)):\n    return x\n", 2, 39,
     "R.Tensor takes a shape and a dtype; found '3'"},
    {"UnknownTensorArgument", "@R.function\ndef main(x: R.Tensor(layout=\"NCHW\")):\n    return x\n", 2, 22,
     "R.Tensor has no argument 'layout'"},
};

INSTANTIATE_TEST_SUITE_P(Messages, EachDiagnostic, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- collection ----

TEST(ReaderDiagnostics, IndependentErrorsAreAllReported) {
  auto result = read_string(with_body("    with R.dataflow():\n"
                                      "        a = R.add(x, nope)\n"
                                      "        b = R.frobnicate(x)\n"
                                      "        c = R.add(x, x)\n"
                                      "        d = R.add(c, also_nope)\n"
                                      "        R.output(c)\n"
                                      "    return c\n"));
  ASSERT_EQ(result->module, nullptr);
  ASSERT_EQ(result->diags.error_count(), 3u) << result->diags.str();
  EXPECT_EQ(result->diags.diagnostics()[0].loc.line, 4u);
  EXPECT_EQ(result->diags.diagnostics()[1].loc.line, 5u);
  EXPECT_EQ(result->diags.diagnostics()[2].loc.line, 7u);
}

TEST(ReaderDiagnostics, StopsAfterAHundredErrors) {
  std::string body = "    with R.dataflow():\n";
  for (int i = 0; i < 300; ++i) body += "        v" + std::to_string(i) + " = R.add(x, undefined)\n";
  body += "        R.output(v0)\n    return v0\n";
  auto result = read_string(with_body(body));
  ASSERT_EQ(result->module, nullptr);
  EXPECT_EQ(result->diags.error_count(), 101u);
  EXPECT_EQ(result->diags.diagnostics().back().message, "too many errors; stopping here");
}

TEST(ReaderDiagnostics, PrintedDiagnosticQuotesTheLineWithACaret) {
  auto result = read_string(with_body("    y = R.frobnicate(x)\n"
                                      "    return y\n"),
                            "model.relax");
  ASSERT_EQ(result->module, nullptr);
  const std::string printed = result->diags.str();
  EXPECT_NE(printed.find("model.relax:3:9: error: unknown op 'R.frobnicate'"), std::string::npos) << printed;
  EXPECT_NE(printed.find("    y = R.frobnicate(x)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("^~~~~~~~~~~"), std::string::npos) << printed;
}

}  // namespace
}  // namespace dpl
