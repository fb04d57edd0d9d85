// dpl-lsp's token scan: dotted names, what counts as an occurrence, and the declarations that scope variables.
#include "names.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace dpl::lsp {
namespace {

std::vector<std::string> texts(const NameIndex& names, const std::vector<NameSpan>& spans) {
  std::vector<std::string> result;
  for (const NameSpan& span : spans) result.emplace_back(names.text(span));
  return result;
}

TEST(NameIndex, OccurrencesSkipMembersAttributeNamesRuleNamesCommentsAndStrings) {
  const std::string text =
      "// axes in a comment\n"
      "rule axes: permute_dims(axes, axes=[0, 1]) where axes.shape[0] == 2 => axes; /* axes */\n"
      "test t { pass axes; input \"axes.relax\"; expect unchanged; }\n";
  const NameIndex names(text);
  const std::vector<NameSpan> spans = names.occurrences("axes");
  ASSERT_EQ(spans.size(), 4u);  // the operand, the guard's `axes` (not `.shape`), the result, the test's pass
  EXPECT_EQ(spans[0].line, 2u);
  EXPECT_EQ(spans[0].column, 24u);
  EXPECT_EQ(spans[1].column, 49u);
  EXPECT_EQ(spans[2].column, 71u);
  EXPECT_EQ(spans[3].line, 3u);
  EXPECT_EQ(spans[3].column, 14u);
  EXPECT_TRUE(names.occurrences("shape").empty());
}

TEST(NameIndex, DottedNamesMatchWhole) {
  const NameIndex names("rule r: nn.relu(nn.relu(x)) => nn . relu(x.nn);\n");
  EXPECT_EQ(texts(names, names.occurrences("nn.relu")), (std::vector<std::string>{"nn.relu", "nn.relu", "nn . relu"}));
  EXPECT_EQ(names.occurrences("nn").size(), 3u);  // the prefix of each, not the member `x.nn`
  EXPECT_TRUE(names.occurrences("nn.relu6").empty());
  const auto at = names.name_at(12);  // on `relu` of the first `nn.relu`
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(names.text(at->up_to_cursor), "nn.relu");
  EXPECT_FALSE(at->first_segment);
  const auto first = names.name_at(8);  // on `nn`
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(names.text(first->up_to_cursor), "nn");
  EXPECT_EQ(names.text(first->whole), "nn.relu");
  EXPECT_TRUE(first->first_segment);
  EXPECT_FALSE(names.name_at(7).has_value());  // the blank before it
}

TEST(NameIndex, ACursorAtTheEndOfANameIsOnIt) {
  const NameIndex names("rule r: exp(x) => x;");
  const auto at = names.name_at(13);  // right after `x`, before `)`
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(names.text(at->whole), "x");
  EXPECT_FALSE(names.name_at(15).has_value());  // on `=>`
  EXPECT_TRUE(names.name_at(5)->declares_rule);
}

TEST(NameIndex, DeclarationsEndAtTheirSemicolonOrClosingBrace) {
  const std::string text =
      "pass p {\n"
      "  rule a: f(g(x; y)) => x;\n"  // a `;` inside brackets does not end the rule
      "  rule m { r: matmul(x, w); => r => x; }\n"
      "}\n"
      "pattern q(x) = exp(x);\n";
  const NameIndex names(text);
  const auto a = names.declaration_at(text.find("g(x"));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(names.text(*a), "rule a: f(g(x; y)) => x;");
  const auto m = names.declaration_at(text.find("=> x; }"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(names.text(*m), "rule m { r: matmul(x, w); => r => x; }");
  EXPECT_FALSE(names.declaration_at(text.find("pass")).has_value());
  EXPECT_EQ(names.occurrences("x", a->begin, a->end).size(), 2u);
  EXPECT_EQ(names.occurrences("x", m->begin, m->end).size(), 2u);
  EXPECT_EQ(names.occurrences("x").size(), 6u);
}

TEST(NameIndex, AVariableSpelledLikeAnOpIsUsedAsAValue) {
  const std::string text = "rule r: add(exp, exp) => exp(exp);";
  const NameIndex names(text);
  const auto rule = names.declaration_at(0);
  ASSERT_TRUE(rule.has_value());
  EXPECT_TRUE(names.used_as_value("exp", *rule));
  EXPECT_FALSE(names.used_as_value("add", *rule));
}

TEST(NameIndex, IdentifiersAndDottedSegments) {
  EXPECT_TRUE(is_identifier("_x2"));
  EXPECT_FALSE(is_identifier("2x"));
  EXPECT_FALSE(is_identifier("a-b"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_EQ(dotted_segments("nn.relu"), (std::vector<std::string_view>{"nn", "relu"}));
  EXPECT_EQ(dotted_segments("a..b."), (std::vector<std::string_view>{"a", "", "b", ""}));
}

TEST(NameIndex, UnterminatedCommentsAndStringsEndTheScan) {
  for (const char* text : {"rule r: x /* open", "rule r: \"open", "\"\\", "/*", "1e+", ".", "..."}) {
    const NameIndex names(text);
    EXPECT_TRUE(names.occurrences("open").empty()) << text;
  }
}

}  // namespace
}  // namespace dpl::lsp
