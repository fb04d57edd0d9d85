// Where names occur in a .dpl text, from a token scan that needs no parse: the occurrences behind dpl-lsp's
// references, highlights and renames, and the declarations (rules, patterns, partitions, ...) that scope a name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dpl::lsp {

// A name as written: its first byte and its end in the text, and where it starts (line from 1, byte column from 0).
struct NameSpan {
  size_t begin = 0;
  size_t end = 0;
  uint32_t line = 1;
  size_t column = 0;
};

// Whether `text` is one identifier of the grammar (`[a-zA-Z_][a-zA-Z_0-9]*`).
bool is_identifier(std::string_view text);
// `nn.relu` -> {`nn`, `relu`}; an empty segment where two dots meet or the name ends with one.
std::vector<std::string_view> dotted_segments(std::string_view name);

// The names of one text: identifiers joined by dots (`nn.relu`, `x.shape`) and the declarations around them.
class NameIndex {
 public:
  explicit NameIndex(std::string_view text);

  // The dotted name the byte `offset` falls in, up to and including the identifier under it (`nn` or `nn.relu`
  // in `nn.relu(x)`), with the whole dotted name in `whole`; nothing when no identifier is there.
  struct NameAtCursor {
    NameSpan up_to_cursor;
    NameSpan whole;
    bool first_segment = false;  // the cursor is on the first identifier (a variable, not a member)
    bool declares_rule = false;  // the name right after `rule`
  };
  std::optional<NameAtCursor> name_at(size_t offset) const;

  // Where `name` (possibly dotted) occurs within [begin, end): every dotted name starting with it, except the
  // names of rules, attribute names in calls (`axis=`) and members (`shape` in `x.shape`).
  std::vector<NameSpan> occurrences(std::string_view name, size_t begin = 0, size_t end = SIZE_MAX) const;

  // Whether some occurrence of `name` in `within` is not called (no `(` after it): a variable spelled like an op.
  bool used_as_value(std::string_view name, const NameSpan& within) const;
  // Whether `declaration` has a variable spelled `name`, which hides the file-level name of that spelling there
  // (`add(p, p) => p` in a file declaring pattern `p`). A test's `pass p;` names the file's pass.
  bool shadows(std::string_view name, const NameSpan& declaration) const;
  // occurrences() of a file-level name (pattern, pass, op, ...) outside the declarations shadowing it.
  std::vector<NameSpan> file_level_occurrences(std::string_view name) const;

  // The declaration statement (rule, pattern, partition, extern, op, test) holding `offset`: from its keyword to
  // its `;` or closing brace. Its variables are local to it.
  std::optional<NameSpan> declaration_at(size_t offset) const;

  std::string_view text(const NameSpan& span) const { return text_.substr(span.begin, span.end - span.begin); }

 private:
  enum class Kind : uint8_t { Identifier, Punctuation, Other };
  struct Token {
    Kind kind;
    size_t begin;
    size_t end;
    uint32_t line;
    size_t column;
  };

  bool is(size_t token, std::string_view text) const;
  // The token index at which the dotted name starting at identifier `first` ends (one past its last identifier).
  size_t dotted_end(size_t first) const;
  NameSpan span(size_t first, size_t last) const;  // tokens [first, last)

  std::string_view text_;
  std::vector<Token> tokens_;
  std::vector<NameSpan> declarations_;
};

}  // namespace dpl::lsp
