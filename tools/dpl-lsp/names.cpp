// The token scan behind dpl-lsp's references and renames: identifiers, punctuation, declarations and their extents.
#include "names.h"

#include <algorithm>
#include <array>

namespace dpl::lsp {

namespace {

bool is_identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_identifier_char(char c) { return is_identifier_start(c) || is_digit(c); }

// The words that start a declaration whose variables are its own (the grammar's statements other than `pass`,
// `pipeline` and `import`).
constexpr std::array<std::string_view, 6> kScopedDeclarations = {"rule", "pattern", "partition", "extern", "op",
                                                                  "test"};

}  // namespace

bool is_identifier(std::string_view text) {
  return !text.empty() && is_identifier_start(text[0]) && std::all_of(text.begin(), text.end(), is_identifier_char);
}

std::vector<std::string_view> dotted_segments(std::string_view name) {
  std::vector<std::string_view> segments;
  for (size_t start = 0;;) {
    const size_t dot = name.find('.', start);
    segments.push_back(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return segments;
    start = dot + 1;
  }
}

NameIndex::NameIndex(std::string_view text) : text_(text) {
  uint32_t line = 1;
  size_t line_start = 0;
  size_t i = 0;
  const auto push = [&](Kind kind, size_t begin) { tokens_.push_back({kind, begin, i, line, begin - line_start}); };
  const auto at = [&](size_t k) { return k < text.size() ? text[k] : '\0'; };
  while (i < text.size()) {
    const char c = text[i];
    const size_t begin = i;
    if (c == '\n') {
      ++line;
      line_start = ++i;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '/' && at(i + 1) == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && at(i + 1) == '*') {
      for (i += 2; i < text.size() && !(text[i] == '*' && at(i + 1) == '/'); ++i) {
        if (text[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
      }
      i = std::min(i + 2, text.size());
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i) {
        if (text[i] == '\\' && at(i + 1) != '\n') ++i;
      }
      i = std::min(i, text.size());  // an escape at the very end
      if (at(i) == '"') ++i;
      push(Kind::Other, begin);
    } else if (is_digit(c) || (c == '.' && is_digit(at(i + 1)))) {
      // Numbers, floats with exponents included; a `.` goes with them unless it starts `...`.
      while (i < text.size() && (is_identifier_char(text[i]) || (text[i] == '.' && at(i + 1) != '.') ||
                                 ((text[i] == '+' || text[i] == '-') && (at(i - 1) == 'e' || at(i - 1) == 'E')))) {
        ++i;
      }
      push(Kind::Other, begin);
    } else if (is_identifier_start(c)) {
      while (i < text.size() && is_identifier_char(text[i])) ++i;
      push(Kind::Identifier, begin);
    } else {
      static constexpr std::array<std::string_view, 9> kLong = {"...", "==", "!=", "<=", ">=", "=>", "->", "&&", "||"};
      const auto match = std::find_if(kLong.begin(), kLong.end(),
                                      [&](std::string_view op) { return text.substr(i, op.size()) == op; });
      i += match != kLong.end() ? match->size() : 1;
      push(Kind::Punctuation, begin);
    }
  }

  // Declarations start a statement (at the top or inside a pass block) and end at their `;` outside brackets, or
  // at the brace that closes their block (multi-root rules, tests).
  for (size_t t = 0; t < tokens_.size(); ++t) {
    const bool statement_start = t == 0 || is(t - 1, ";") || is(t - 1, "{") || is(t - 1, "}");
    if (!statement_start || tokens_[t].kind != Kind::Identifier) continue;
    const std::string_view word = text_.substr(tokens_[t].begin, tokens_[t].end - tokens_[t].begin);
    if (std::find(kScopedDeclarations.begin(), kScopedDeclarations.end(), word) == kScopedDeclarations.end()) continue;
    int depth = 0;
    size_t last = t;
    for (size_t u = t + 1; u < tokens_.size(); ++u) {
      last = u;
      if (is(u, "(") || is(u, "[")) ++depth;
      if (is(u, ")") || is(u, "]")) --depth;
      if (depth <= 0 && is(u, ";")) break;
      if (depth <= 0 && is(u, "{")) {
        int braces = 0;
        for (; u < tokens_.size(); ++u) {
          last = u;
          braces += is(u, "{") ? 1 : is(u, "}") ? -1 : 0;
          if (braces == 0) break;
        }
        break;
      }
    }
    declarations_.push_back(span(t, last + 1));
    t = last;
  }
}

bool NameIndex::is(size_t token, std::string_view text) const {
  if (token >= tokens_.size() || tokens_[token].kind == Kind::Other) return false;
  return text_.substr(tokens_[token].begin, tokens_[token].end - tokens_[token].begin) == text;
}

size_t NameIndex::dotted_end(size_t first) const {
  size_t end = first + 1;
  while (is(end, ".") && end + 1 < tokens_.size() && tokens_[end + 1].kind == Kind::Identifier) end += 2;
  return end;
}

NameSpan NameIndex::span(size_t first, size_t last) const {
  return {tokens_[first].begin, tokens_[last - 1].end, tokens_[first].line, tokens_[first].column};
}

std::optional<NameIndex::NameAtCursor> NameIndex::name_at(size_t offset) const {
  // The identifier the offset is in or right after (a cursor at the end of a word is on it).
  auto found = std::lower_bound(tokens_.begin(), tokens_.end(), offset,
                                [](const Token& token, size_t value) { return token.end < value; });
  if (found != tokens_.end() && found->kind != Kind::Identifier && found->end == offset) ++found;
  if (found == tokens_.end() || found->kind != Kind::Identifier || found->begin > offset) return std::nullopt;
  const auto cursor = static_cast<size_t>(found - tokens_.begin());
  size_t first = cursor;
  while (first >= 2 && is(first - 1, ".") && tokens_[first - 2].kind == Kind::Identifier) first -= 2;
  NameAtCursor result;
  result.up_to_cursor = span(first, cursor + 1);
  result.whole = span(first, dotted_end(first));
  result.first_segment = first == cursor;
  result.declares_rule = first > 0 && is(first - 1, "rule");
  return result;
}

std::vector<NameSpan> NameIndex::occurrences(std::string_view name, size_t begin, size_t end) const {
  const std::vector<std::string_view> segments = dotted_segments(name);
  std::vector<NameSpan> spans;
  for (size_t t = 0; t < tokens_.size(); ++t) {
    if (tokens_[t].begin < begin || tokens_[t].end > end || tokens_[t].kind != Kind::Identifier) continue;
    if (t > 0 && is(t - 1, ".")) continue;  // a member or the tail of a dotted name
    bool matches = true;
    for (size_t s = 0; s < segments.size() && matches; ++s) {
      matches = (s == 0 || is(t + 2 * s - 1, ".")) && is(t + 2 * s, segments[s]);
    }
    if (!matches) continue;
    const size_t last = t + 2 * segments.size() - 1;  // one past the name's last identifier
    const bool rule_name = t > 0 && is(t - 1, "rule");
    const bool attribute_name = t > 0 && (is(t - 1, "(") || is(t - 1, ",")) && is(last, "=");
    if (!rule_name && !attribute_name) spans.push_back(span(t, last));
  }
  return spans;
}

bool NameIndex::used_as_value(std::string_view name, const NameSpan& within) const {
  const std::vector<NameSpan> spans = occurrences(name, within.begin, within.end);
  return std::any_of(spans.begin(), spans.end(), [&](const NameSpan& span) {
    const auto next = std::lower_bound(tokens_.begin(), tokens_.end(), span.end,
                                       [](const Token& token, size_t value) { return token.begin < value; });
    return !is(static_cast<size_t>(next - tokens_.begin()), "(");
  });
}

bool NameIndex::shadows(std::string_view name, const NameSpan& declaration) const {
  return text_.substr(declaration.begin, 4) != "test" && used_as_value(name, declaration);
}

std::vector<NameSpan> NameIndex::file_level_occurrences(std::string_view name) const {
  std::vector<NameSpan> spans = occurrences(name);
  std::erase_if(spans, [&](const NameSpan& span) {
    const std::optional<NameSpan> declaration = declaration_at(span.begin);
    return declaration && shadows(name, *declaration);
  });
  return spans;
}

std::optional<NameSpan> NameIndex::declaration_at(size_t offset) const {
  for (const NameSpan& declaration : declarations_) {
    if (declaration.begin <= offset && offset <= declaration.end) return declaration;
  }
  return std::nullopt;
}

}  // namespace dpl::lsp
