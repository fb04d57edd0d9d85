// The indentation-aware lexer for the TVMScript Relax text subset.
#include "lexer.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "dpl/support/utf8.h"

namespace dpl::text {
namespace {

bool is_name_start(char c) { return in_char_class(c, kNameStart); }
bool is_digit(char c) { return in_char_class(c, kDigit); }
bool is_blank(char c) { return in_char_class(c, kBlank); }

// A printable spelling of one source byte for "unexpected character" messages.
std::string describe_byte(unsigned char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "0x%02x", c);
  return std::string("byte ") + buffer;
}

}  // namespace

std::string_view token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::End: return "end of file";
    case TokenKind::Newline: return "end of line";
    case TokenKind::Indent: return "indentation";
    case TokenKind::Dedent: return "end of block";
    case TokenKind::Name: return "name";
    case TokenKind::Int: return "integer";
    case TokenKind::Float: return "number";
    case TokenKind::String: return "string";
    case TokenKind::LParen: return "'('";
    case TokenKind::RParen: return "')'";
    case TokenKind::LBracket: return "'['";
    case TokenKind::RBracket: return "']'";
    case TokenKind::LBrace: return "'{'";
    case TokenKind::RBrace: return "'}'";
    case TokenKind::Comma: return "','";
    case TokenKind::Colon: return "':'";
    case TokenKind::Equal: return "'='";
    case TokenKind::Dot: return "'.'";
    case TokenKind::Arrow: return "'->'";
    case TokenKind::At: return "'@'";
    case TokenKind::Minus: return "'-'";
    case TokenKind::Operator: return "operator";
    case TokenKind::Error: return "invalid token";
  }
  return "token";
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !is_name_start(name.front())) return false;
  for (char c : name)
    if (!is_name_char(c)) return false;
  return true;
}

bool is_reserved_word(std::string_view name) {
  // Sorted by first character, which indexes them below: a name is compared with the few words sharing it.
  static constexpr std::string_view kReserved[] = {
      "False",  "I",     "None",   "R",      "T",        "True",     "and",    "as",     "assert", "async",
      "await",  "break", "class",  "continue", "def",    "del",      "elif",   "else",   "except", "finally",
      "for",    "from",  "global", "if",     "import",   "in",       "is",     "lambda", "metadata", "nonlocal",
      "not",    "or",    "pass",   "raise",  "return",   "try",      "while",  "with",   "yield"};
  static constexpr auto kFirstWith = [] {  // kFirstWith[c]: the first word starting at or after character c
    std::array<uint8_t, 129> first{};
    uint8_t word = 0;
    for (size_t c = 0; c < first.size(); ++c) {
      while (word < std::size(kReserved) && static_cast<unsigned char>(kReserved[word][0]) < c) ++word;
      first[c] = word;
    }
    return first;
  }();
  static_assert(std::ranges::is_sorted(kReserved, {}, [](std::string_view word) { return word[0]; }));
  if (name.empty() || static_cast<unsigned char>(name[0]) >= 128) return false;
  const auto c = static_cast<unsigned char>(name[0]);
  for (size_t word = kFirstWith[c]; word < kFirstWith[c + 1u]; ++word)
    if (kReserved[word] == name) return true;
  return false;
}

Lexer::Lexer(const SourceFile& file, DiagnosticEngine& diags) : file_(&file), diags_(&diags) {}

SourceLoc Lexer::loc(const Token& token) const {
  SourceLoc loc;
  loc.file = file_;
  loc.line = token.line;
  loc.col = token.col;
  loc.length = token.length > 0 ? token.length : 1;
  return loc;
}

void Lexer::report(uint32_t line, uint32_t col, uint32_t length, std::string message) {
  if (quiet_) return;
  SourceLoc loc;
  loc.file = file_;
  loc.line = line;
  loc.col = col;
  loc.length = length > 0 ? length : 1;
  diags_->error(loc, std::move(message));
}

void Lexer::skip_line_rest() {
  const std::string& text = file_->text();
  while (pos_ < text.size() && text[pos_] != '\n') ++pos_;
}

bool Lexer::begin_line() {
  const std::string& text = file_->text();
  uint32_t width = 0;
  while (pos_ < text.size() && (text[pos_] == ' ' || text[pos_] == '\t' || text[pos_] == '\r' ||
                                text[pos_] == '\f')) {
    if (text[pos_] == '\t') {
      report(line_, pos_ - line_start_ + 1, 1, "tab character in indentation; indent with spaces");
    }
    if (text[pos_] == ' ' || text[pos_] == '\t') ++width;
    ++pos_;
  }
  if (pos_ >= text.size() || text[pos_] == '\n' || text[pos_] == '#') {
    skip_line_rest();  // blank or comment-only lines do not affect indentation
    return false;
  }
  if (width > indents_.back()) {
    indents_.push_back(width);
    pending_indents_ = 1;
    return true;
  }
  while (width < indents_.back()) {
    indents_.pop_back();
    ++pending_dedents_;
  }
  if (width != indents_.back()) {
    report(line_, 1, width, "unindent does not match any outer indentation level");
    indents_.push_back(width);  // continue as if this level had been opened, so later lines line up
  }
  return true;
}

Token Lexer::next() {
  const std::string& text = file_->text();
  const auto size = static_cast<uint32_t>(text.size());
  for (;;) {
    const uint32_t col = pos_ - line_start_ + 1;
    if (pending_dedents_ > 0) {
      --pending_dedents_;
      return make(TokenKind::Dedent, pos_, col);
    }
    if (pending_indents_ > 0) {
      --pending_indents_;
      return make(TokenKind::Indent, pos_, col);
    }
    if (at_line_start_ && brackets_.empty()) {
      at_line_start_ = false;
      begin_line();
      continue;
    }
    while (is_blank(text[pos_])) ++pos_;  // text[size] is '\0', not blank: no bound check per byte
    const uint32_t start = pos_;
    const uint32_t start_col = pos_ - line_start_ + 1;
    if (pos_ >= size) {
      if (!brackets_.empty()) {
        const OpenBracket& open = brackets_.front();
        report(open.line, open.col, 1,
               std::string("'") + text[open.offset] + "' was never closed");
        brackets_.clear();
      }
      if (line_has_tokens_) {
        line_has_tokens_ = false;
        return make(TokenKind::Newline, start, start_col);
      }
      if (indents_.size() > 1) {
        indents_.pop_back();
        return make(TokenKind::Dedent, start, start_col);
      }
      return make(TokenKind::End, start, start_col);
    }
    const char c = text[pos_];
    if (is_name_start(c)) {  // most tokens; '\0' ends the name as any other byte that is not a name character
      line_has_tokens_ = true;
      while (is_name_char(text[pos_])) ++pos_;
      return make(TokenKind::Name, start, start_col);
    }
    if (c == '#') {
      skip_line_rest();
      continue;
    }
    if (c == '\n') {
      ++pos_;
      const Token newline = make(TokenKind::Newline, start, start_col);
      ++line_;
      line_start_ = pos_;
      if (!brackets_.empty()) continue;
      at_line_start_ = true;
      if (!line_has_tokens_) continue;
      line_has_tokens_ = false;
      return newline;
    }
    if (c == '\\' && pos_ + 1 < size && (text[pos_ + 1] == '\n' || text[pos_ + 1] == '\r')) {
      // Explicit line joining, as in Python.
      pos_ += text[pos_ + 1] == '\r' && pos_ + 2 < size && text[pos_ + 2] == '\n' ? 3 : 2;
      ++line_;
      line_start_ = pos_;
      continue;
    }
    line_has_tokens_ = true;
    if (is_digit(c) || (c == '.' && pos_ + 1 < size && is_digit(text[pos_ + 1]))) {
      return lex_number(start, start_col);
    }
    if (c == '"' || c == '\'') return lex_string(start, start_col);
    ++pos_;
    switch (c) {
      case '(':
      case '[':
      case '{':
        brackets_.push_back({start, line_, start_col});
        return make(c == '(' ? TokenKind::LParen : c == '[' ? TokenKind::LBracket : TokenKind::LBrace, start,
                    start_col);
      case ')':
      case ']':
      case '}':
        if (!brackets_.empty()) brackets_.pop_back();
        return make(c == ')' ? TokenKind::RParen : c == ']' ? TokenKind::RBracket : TokenKind::RBrace, start,
                    start_col);
      case ',': return make(TokenKind::Comma, start, start_col);
      case ':': return make(TokenKind::Colon, start, start_col);
      case '=': return make(TokenKind::Equal, start, start_col);
      case '.': return make(TokenKind::Dot, start, start_col);
      case '@': return make(TokenKind::At, start, start_col);
      case '+':
      case '*':
      case '%': return make(TokenKind::Operator, start, start_col);
      case '/':
        if (pos_ < size && text[pos_] == '/') ++pos_;
        return make(TokenKind::Operator, start, start_col);
      case '-':
        if (pos_ < size && text[pos_] == '>') {
          ++pos_;
          return make(TokenKind::Arrow, start, start_col);
        }
        return make(TokenKind::Minus, start, start_col);
      default: break;
    }
    // Consume a whole UTF-8 sequence so one stray character gives one error.
    while (pos_ < size && utf8::is_continuation(text[pos_])) ++pos_;
    report(line_, start_col, 1, "unexpected character " + describe_byte(static_cast<unsigned char>(c)));
    return make(TokenKind::Error, start, start_col);
  }
}

Token Lexer::lex_number(uint32_t start, uint32_t start_col) {
  const std::string& text = file_->text();
  const auto size = static_cast<uint32_t>(text.size());
  bool is_float = false;
  while (pos_ < size && is_digit(text[pos_])) ++pos_;
  if (pos_ < size && text[pos_] == '.') {
    is_float = true;
    ++pos_;
    while (pos_ < size && is_digit(text[pos_])) ++pos_;
  }
  bool bad = false;
  if (pos_ < size && (text[pos_] == 'e' || text[pos_] == 'E')) {
    is_float = true;
    ++pos_;
    if (pos_ < size && (text[pos_] == '+' || text[pos_] == '-')) ++pos_;
    if (pos_ >= size || !is_digit(text[pos_])) bad = true;
    while (pos_ < size && is_digit(text[pos_])) ++pos_;
  }
  if (pos_ < size && (is_name_char(text[pos_]) || text[pos_] == '.')) bad = true;
  if (bad) {
    while (pos_ < size && (is_name_char(text[pos_]) || text[pos_] == '.')) ++pos_;
    report(line_, start_col, pos_ - start, "invalid number literal '" + text.substr(start, pos_ - start) + "'");
    return make(TokenKind::Error, start, start_col);
  }
  return make(is_float ? TokenKind::Float : TokenKind::Int, start, start_col);
}

Token Lexer::lex_string(uint32_t start, uint32_t start_col) {
  const std::string& text = file_->text();
  const auto size = static_cast<uint32_t>(text.size());
  const char quote = text[pos_++];
  while (pos_ < size && text[pos_] != quote && text[pos_] != '\n') {
    if (text[pos_] == '\\' && pos_ + 1 < size && text[pos_ + 1] != '\n') ++pos_;
    ++pos_;
  }
  if (pos_ >= size || text[pos_] != quote) {
    report(line_, start_col, pos_ - start, "unterminated string literal");
    return make(TokenKind::Error, start, start_col);
  }
  ++pos_;
  return make(TokenKind::String, start, start_col);
}

std::string Lexer::string_value(const Token& token) const {
  const std::string_view quoted = text(token);
  std::string value;
  value.reserve(quoted.size());
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    char c = quoted[i];
    if (c == '\\' && i + 2 < quoted.size()) {
      const char escaped = quoted[++i];
      switch (escaped) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case '0': c = '\0'; break;
        case '\\':
        case '"':
        case '\'': c = escaped; break;
        default:
          value.push_back('\\');
          c = escaped;
          break;
      }
    }
    value.push_back(c);
  }
  return value;
}

}  // namespace dpl::text
