// Tests of symbolic extent expressions: canonical forms, equality, arithmetic, spelling, evaluation and parsing.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <random>

#include "dpl/ir/types.h"

namespace dpl {
namespace {

Dim n() { return Dim::symbol("n"); }
Dim m() { return Dim::symbol("m"); }
Dim c(int64_t extent) { return Dim::fixed(extent); }

// The value of an arithmetic result that must exist.
Dim must(std::optional<Dim> dim) {
  EXPECT_TRUE(dim.has_value());
  return dim.value_or(Dim::inferred());
}

// Parses a dimension, any name a symbol; on error the message.
std::string parse_error(std::string_view text, bool allow_inferred = false) {
  DimSyntaxError error;
  std::optional<Dim> dim = parse_dim(text, allow_inferred, {}, error);
  if (dim) return "parsed as " + dim->str();
  return std::to_string(error.offset) + "+" + std::to_string(error.length) + ": " + error.message;
}

Dim parse(std::string_view text) {
  DimSyntaxError error;
  std::optional<Dim> dim = parse_dim(text, false, {}, error);
  EXPECT_TRUE(dim.has_value()) << text << ": " << error.message;
  return dim.value_or(Dim::inferred());
}

TEST(DimExpression, StaysEightBytes) { static_assert(sizeof(Dim) == 8); }

TEST(DimExpression, EqualExpressionsAreTheSameDim) {
  EXPECT_EQ(must(dim_mul(c(48), n())), must(dim_mul(n(), c(48))));
  EXPECT_EQ(must(dim_add(n(), n())), must(dim_mul(n(), c(2))));
  EXPECT_EQ(must(dim_add(n(), m())), must(dim_add(m(), n())));
  EXPECT_EQ(must(dim_mul(must(dim_add(n(), c(1))), c(2))), must(dim_add(must(dim_mul(n(), c(2))), c(2))));
  EXPECT_NE(must(dim_mul(n(), c(48))), must(dim_mul(n(), c(47))));
  EXPECT_NE(must(dim_add(n(), c(1))), n());
}

TEST(DimExpression, KindsOfDims) {
  const Dim product = must(dim_mul(n(), c(48)));
  EXPECT_TRUE(product.is_expression());
  EXPECT_FALSE(product.is_symbol());
  EXPECT_FALSE(product.is_static());
  EXPECT_FALSE(product.is_inferred());
  EXPECT_TRUE(n().is_symbol());
  EXPECT_FALSE(n().is_expression());
  EXPECT_FALSE(Dim::inferred().is_symbol());
  EXPECT_FALSE(Dim::inferred().is_expression());
  // The symbol_name of an expression is its spelling, so dims_str and every printer of dims show it.
  EXPECT_EQ(product.symbol_name(), "n * 48");
  EXPECT_EQ(dims_str(std::vector<Dim>{product, c(3)}), "(n * 48, 3)");
}

TEST(DimExpression, WithoutSymbolsFoldsToAStaticExtent) {
  EXPECT_EQ(must(dim_sub(must(dim_add(n(), c(3))), n())), c(3));
  EXPECT_EQ(must(dim_mul(n(), c(0))), c(0));
  EXPECT_EQ(must(dim_add(c(2), c(3))), c(5));
  EXPECT_EQ(must(dim_sub(c(5), c(3))), c(2));
  EXPECT_EQ(must(dim_mul(c(3), c(5))), c(15));
  EXPECT_EQ(must(dim_sub(must(dim_mul(n(), c(2))), n())), n());  // a plain symbol stays what it is
  EXPECT_FALSE(dim_sub(c(2), c(3)).has_value());                   // no negative extent
  EXPECT_FALSE(dim_add(Dim::inferred(), c(1)).has_value());
}

TEST(DimExpression, SpellsAsTvmPrints) {
  EXPECT_EQ(must(dim_mul(n(), c(48))).str(), "n * 48");
  EXPECT_EQ(must(dim_add(n(), c(1))).str(), "n + 1");
  EXPECT_EQ(must(dim_sub(n(), c(1))).str(), "n - 1");
  EXPECT_EQ(must(dim_sub(c(8), n())).str(), "8 - n");
  EXPECT_EQ(must(dim_add(n(), m())).str(), "m + n");
  EXPECT_EQ(must(dim_mul(n(), m())).str(), "m * n");
  EXPECT_EQ(must(dim_floor_div(n(), c(2))).str(), "n // 2");
  EXPECT_EQ(must(dim_floor_mod(n(), c(2))).str(), "n % 2");
  EXPECT_EQ(parse("(n + 1) // 2").str(), "(n + 1) // 2");
  EXPECT_EQ(parse("n * 3 // 2").str(), "n * 3 // 2");
  EXPECT_EQ(parse("(n - 1) // 2 * 2 + 2").str(), "(n - 1) // 2 * 2 + 2");
  EXPECT_EQ(parse("m * (n // 2)").str(), "m * (n // 2)");
  EXPECT_EQ(parse("n // (m * 2)").str(), "n // (m * 2)");
  EXPECT_EQ(parse("n * n + n * 2 + 1").str(), "n * n + n * 2 + 1");
}

TEST(DimExpression, FloorDivisionFoldsItsExactParts) {
  EXPECT_EQ(must(dim_floor_div(must(dim_mul(n(), c(4))), c(2))), must(dim_mul(n(), c(2))));
  EXPECT_EQ(parse("(n * 4 + m) // 2"), parse("n * 2 + m // 2"));
  EXPECT_EQ(parse("(n * 4 + 5) // 2"), parse("n * 2 + 5 // 2"));
  EXPECT_EQ(parse("(n * 4 + 1) // 2"), parse("n * 2"));
  EXPECT_EQ(parse("(n * 4 + 1) % 2"), c(1));
  EXPECT_EQ(parse("n // 2 // 4"), parse("n // 8"));  // two strides of 2 and 4 make one of 8
  EXPECT_EQ(parse("(n * m) // m"), n());
  EXPECT_EQ(parse("(n + 1) // (n + 1)"), c(1));
  EXPECT_FALSE(dim_floor_div(n(), c(0)).has_value());
}

TEST(DimExpression, ExactDivisionOnlyWhenItIsExact) {
  EXPECT_EQ(must(dim_exact_div(parse("n * 96"), c(48))), parse("n * 2"));
  EXPECT_EQ(must(dim_exact_div(parse("b * n * 48"), parse("b * 48"))), n());
  EXPECT_EQ(must(dim_exact_div(parse("n * 2 + 2"), parse("n + 1"))), c(2));
  EXPECT_EQ(must(dim_exact_div(parse("(n + 1) * m"), m())), parse("n + 1"));
  EXPECT_FALSE(dim_exact_div(parse("n * 3"), c(2)).has_value());
  EXPECT_FALSE(dim_exact_div(parse("n + 1"), n()).has_value());
  EXPECT_FALSE(dim_exact_div(n(), c(0)).has_value());
}

TEST(DimExpression, OverflowIsNoDim) {
  const Dim big = must(dim_mul(n(), c(int64_t{1} << 62)));
  EXPECT_FALSE(dim_mul(big, c(4)).has_value());
  EXPECT_FALSE(dim_add(big, big).has_value());
  const Dim largest = c(std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(dim_add(largest, c(1)).has_value());  // static extents too
  EXPECT_FALSE(dim_mul(c(int64_t{1} << 62), c(4)).has_value());
  EXPECT_EQ(must(dim_sub(largest, largest)), c(0));
  std::optional<Dim> power = n();
  for (int i = 0; i < 9 && power; ++i) power = dim_mul(*power, n());
  EXPECT_FALSE(power.has_value());  // beyond the degree an expression may have
}

TEST(DimExpression, EvaluatesWithTheSymbolsValues) {
  const std::map<std::string, int64_t, std::less<>> values = {{"n", 7}, {"m", 3}};
  auto value_of = [&values](Dim symbol) -> std::optional<int64_t> {
    auto it = values.find(symbol.symbol_name());
    return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  EXPECT_EQ(parse("n * 48").evaluate(value_of), 336);
  EXPECT_EQ(parse("(n - 1) // 2 + 1").evaluate(value_of), 4);
  EXPECT_EQ(parse("n % m + m * n").evaluate(value_of), 22);
  EXPECT_EQ(parse("8 - n").evaluate(value_of), 1);
  EXPECT_EQ(c(5).evaluate(value_of), 5);
  EXPECT_EQ(parse("k + 1").evaluate(value_of), std::nullopt);
}

TEST(DimExpression, SymbolsInSpellingOrder) {
  EXPECT_EQ(parse("(n + 1) // m * k").symbols(), (std::vector<Dim>{Dim::symbol("k"), n(), m()}));
  EXPECT_EQ(parse("n * n + n").symbols(), (std::vector<Dim>{n()}));
  EXPECT_TRUE(c(3).symbols().empty());
}

// A random expression over n and m as text, with its value computed directly (Python's floor semantics).
struct RandomExpression {
  std::string text;
  std::function<std::optional<int64_t>(int64_t n, int64_t m)> value;
};

int64_t floor_divide(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

RandomExpression random_expression(std::mt19937& random, int depth) {
  const int kind = depth <= 0 ? static_cast<int>(random() % 3) : static_cast<int>(random() % 9);
  if (kind == 0) {
    const int64_t constant = static_cast<int64_t>(random() % 7);
    return {std::to_string(constant), [constant](int64_t, int64_t) { return constant; }};
  }
  if (kind == 1) return {"n", [](int64_t n, int64_t) { return n; }};
  if (kind == 2) return {"m", [](int64_t, int64_t m) { return m; }};
  RandomExpression left = random_expression(random, depth - 1);
  RandomExpression right = random_expression(random, depth - 1);
  static const char* const kOps[] = {"+", "-", "*", "//", "%"};
  const std::string op = kOps[static_cast<size_t>(kind - 3) % 5];
  if ((op == "//" || op == "%") && random() % 2 == 0) {  // mostly positive constant divisors, as shapes have
    const int64_t divisor = 1 + static_cast<int64_t>(random() % 6);
    right = {std::to_string(divisor), [divisor](int64_t, int64_t) { return divisor; }};
  }
  auto value = [op, l = left.value, r = right.value](int64_t n, int64_t m) -> std::optional<int64_t> {
    const std::optional<int64_t> a = l(n, m), b = r(n, m);
    if (!a || !b) return std::nullopt;
    if (op == "+") return *a + *b;
    if (op == "-") return *a - *b;
    if (op == "*") return *a * *b;
    if (*b <= 0) return std::nullopt;
    return op == "//" ? floor_divide(*a, *b) : *a - floor_divide(*a, *b) * *b;
  };
  return {"(" + left.text + " " + op + " " + right.text + ")", value};
}

// Canonical forms keep the value: every parsed random expression evaluates as written for many values of its
// symbols, and its spelling parses back to the same Dim.
TEST(DimExpression, CanonicalFormsKeepTheValue) {
  std::mt19937 random(20261126);
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    const RandomExpression expression = random_expression(random, 4);
    DimSyntaxError error;
    const std::optional<Dim> dim =
        parse_dim(expression.text, false, {}, error);
    if (!dim) continue;  // a negative constant, a division by a non-positive number, or too large
    EXPECT_EQ(parse(dim->str()), *dim) << expression.text << " spelled " << dim->str();
    for (int64_t n = 1; n <= 9; n += 2) {
      for (int64_t m = 1; m <= 12; m += 5) {
        const std::optional<int64_t> expected = expression.value(n, m);
        if (!expected) continue;
        const std::optional<int64_t> got = dim->evaluate([&](Dim symbol) -> std::optional<int64_t> {
          return symbol.symbol_name() == "n" ? n : m;
        });
        ASSERT_EQ(got, expected) << expression.text << " as " << dim->str() << " at n=" << n << ", m=" << m;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(DimValue, GuardArithmeticIsExactOnIntegersAndSymbolicOtherwise) {
  using V = DimValue;
  // Static operands compute as integers, negative intermediates included: 3 - 5 + 2 == 0.
  EXPECT_EQ(dims_equal(V(c(3)) - V(c(5)) + V(int64_t{2}), V(c(0))), true);
  EXPECT_EQ(dims_equal(V(c(2)) * V(c(4)), V(c(8))), true);
  EXPECT_EQ(dims_equal(V(c(2)) * V(c(4)), V(c(9))), false);
  // Symbolic operands compare as polynomials: n * 2 == n + n, b * 12 == 12 * b.
  EXPECT_EQ(dims_equal(V(n()) * V(int64_t{2}), V(n()) + V(n())), true);
  EXPECT_EQ(dims_equal(V(n()) * V(c(12)), V(c(12)) * V(n())), true);
  // A constant difference decides inequality either way round.
  EXPECT_EQ(dims_equal(V(n()) + V(int64_t{1}), V(n())), false);
  EXPECT_EQ(dims_equal(V(n()), V(n()) + V(int64_t{1})), false);
  // What the symbols' values would decide is undecided.
  EXPECT_EQ(dims_equal(V(n()), V(m())), std::nullopt);
  EXPECT_EQ(dims_equal(V(n()), V(c(4))), std::nullopt);
  EXPECT_EQ(dims_equal(V(n()) * V(int64_t{2}), V(n()) + V(int64_t{3})), std::nullopt);
  // Nothing: overflow, a negative integer meeting a symbol, the inferred extent.
  const V huge = V(int64_t{1} << 62);
  EXPECT_EQ(dims_equal(huge * V(int64_t{4}), V(c(0))), std::nullopt);
  EXPECT_EQ(dims_equal(V(n()) + V(int64_t{-1}), V(n())), std::nullopt);
  EXPECT_EQ(dims_equal(V(Dim::inferred()), V(Dim::inferred())), std::nullopt);
}

TEST(DimParse, Values) {
  EXPECT_EQ(parse("16"), c(16));
  EXPECT_EQ(parse("n"), n());
  EXPECT_EQ(parse(" 48*n "), parse("n * 48"));
  EXPECT_EQ(parse("-(-n)"), n());
  EXPECT_EQ(parse("2 * (n + 1) - 2"), parse("n * 2"));
  DimSyntaxError error;
  EXPECT_EQ(parse_dim("-1", true, {}, error), Dim::inferred());
}

TEST(DimParse, Errors) {
  EXPECT_EQ(parse_error("n / 2"), "2+1: '/' is true division; a dimension divides with '//'");
  EXPECT_EQ(parse_error("n ** 2"),
            "2+1: unsupported '*' after a dimension (a dimension is integers, symbols, + - * // % and parentheses)");
  EXPECT_EQ(parse_error("T.max(n, 1)"),
            "0+1: unsupported call 'T.max' in a dimension (a dimension is integers, symbols, + - * // % and "
            "parentheses)");
  EXPECT_EQ(parse_error("n // 0"), "5+1: division by zero in a dimension");
  EXPECT_EQ(parse_error("(n + 1"), "6+1: missing ')' in a dimension");
  EXPECT_EQ(parse_error("n +"), "3+1: a dimension ends early");
  EXPECT_EQ(parse_error("2 - 5"), "0+5: negative dimension -3");
  EXPECT_EQ(parse_error("-2", true), "0+2: negative dimension -2 (only -1, an inferred extent, is allowed)");
  EXPECT_EQ(parse_error("99999999999999999999"), "0+20: integer out of range in a dimension");
  DimSyntaxError error;
  auto only_n = [](std::string_view name) { return name == "n" ? std::string() : "no " + std::string(name); };
  EXPECT_FALSE(parse_dim("n * k", false, only_n, error).has_value());
  EXPECT_EQ(error.offset, 4u);
  EXPECT_EQ(error.message, "no k");
}

}  // namespace
}  // namespace dpl
