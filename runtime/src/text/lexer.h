// Tokens and the indentation-aware lexer for the TVMScript Relax text subset (private to the text reader).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dpl/support/diagnostics.h"

namespace dpl::text {

enum class TokenKind : uint8_t {
  End,
  Newline,  // end of a logical line (never inside brackets)
  Indent,
  Dedent,
  Name,
  Int,
  Float,
  String,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equal,
  Dot,
  Arrow,
  At,
  Minus,
  Operator,  // + * / // %: only dimension expressions use them
  Error,  // a malformed token; the lexer has already reported it
};

// How a token kind is named in "expected X, found Y" messages.
std::string_view token_kind_name(TokenKind kind);

// Character classes by table: the lexer asks about every byte of files of up to a hundred megabytes.
enum CharClass : uint8_t { kNameStart = 1, kDigit = 2, kBlank = 4 };  // kBlank: space, tab, CR, form feed

inline constexpr std::array<uint8_t, 256> kCharClasses = [] {
  std::array<uint8_t, 256> classes{};
  for (int c = 'a'; c <= 'z'; ++c) classes[c] = kNameStart;
  for (int c = 'A'; c <= 'Z'; ++c) classes[c] = kNameStart;
  classes['_'] = kNameStart;
  for (int c = '0'; c <= '9'; ++c) classes[c] = kDigit;
  for (char c : {' ', '\t', '\r', '\f'}) classes[static_cast<unsigned char>(c)] = kBlank;
  return classes;
}();

inline bool in_char_class(char c, uint8_t classes) {
  return (kCharClasses[static_cast<unsigned char>(c)] & classes) != 0;
}
inline bool is_name_char(char c) { return in_char_class(c, kNameStart | kDigit); }  // [A-Za-z0-9_]

// A Python identifier as the lexer reads one: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view name);
// Names a binding or parameter cannot take: the TVMScript namespaces (R, T, I), Python keywords, `metadata`.
bool is_reserved_word(std::string_view name);

// Tokens refer to the source text by offset, so lexing allocates nothing per token.
struct Token {
  TokenKind kind = TokenKind::End;
  uint32_t offset = 0;
  uint32_t length = 0;
  uint32_t line = 1;
  uint32_t col = 1;
};

// Produces tokens one at a time, Python style: INDENT/DEDENT at indentation changes, NEWLINE at the end of each
// non-blank logical line, newlines inside (), [] and {} ignored, `#` comments skipped. The lexer is a small
// value: copying it saves a position to lex from again later (the reader reads function bodies out of order).
class Lexer {
 public:
  Lexer(const SourceFile& file, DiagnosticEngine& diags);

  Token next();

  // Lexical errors are reported once: a lexer that re-reads text it has already lexed runs quietly.
  void set_quiet(bool quiet) { quiet_ = quiet; }
  // Continues at `offset`, further on the current line, past text the caller has read another way: text with
  // balanced brackets and no newline, whose tokens would leave the lexer's state as it is.
  void skip_to(uint32_t offset) { pos_ = offset; }

  const SourceFile& file() const { return *file_; }
  std::string_view text(const Token& token) const {
    return std::string_view(file_->text()).substr(token.offset, token.length);
  }
  SourceLoc loc(const Token& token) const;
  // The value of a String token with its quotes removed and escapes decoded.
  std::string string_value(const Token& token) const;

 private:
  struct OpenBracket {
    uint32_t offset, line, col;
  };

  Token make(TokenKind kind, uint32_t start, uint32_t start_col) const {  // inline: once per token
    return Token{kind, start, pos_ - start, line_, start_col};
  }
  void report(uint32_t line, uint32_t col, uint32_t length, std::string message);
  // Measures the indentation of the line at pos_ and queues INDENT/DEDENT tokens; false for blank lines.
  bool begin_line();
  void skip_line_rest();
  Token lex_number(uint32_t start, uint32_t start_col);
  Token lex_string(uint32_t start, uint32_t start_col);

  const SourceFile* file_;
  DiagnosticEngine* diags_;
  bool quiet_ = false;
  uint32_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t line_start_ = 0;
  bool at_line_start_ = true;
  bool line_has_tokens_ = false;
  uint32_t pending_indents_ = 0;
  uint32_t pending_dedents_ = 0;
  std::vector<uint32_t> indents_{0};
  std::vector<OpenBracket> brackets_;
};

}  // namespace dpl::text
