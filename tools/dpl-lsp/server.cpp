// The language server's requests and notifications: document sync, diagnostics, symbols, hover, completion,
// definitions, references, highlights and renames.
#include "server.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <string_view>
#include <utility>

#include "dpl/compiler/compile.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"
#include "dpl/support/utf8.h"
#include "names.h"

namespace dpl::lsp {

using nlohmann::json;

// JSON-RPC error codes (the protocol's and the Language Server Protocol's).
enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kServerNotInitialized = -32002,
  kRequestFailed = -32803,
};

// A request that cannot be answered: becomes the response's `error`.
struct RequestError {
  int code;
  std::string message;
};

struct LanguageServer::Document {
  std::string uri;
  std::string path;
  std::string canonical_path;  // how imports of it are recognized
  // The text as last analyzed, and the analysis (set together by analyze(), never null once the document is
  // open): the AST's locations point into `source`, which therefore lives as long as `compiled`.
  std::unique_ptr<SourceFile> source;
  std::unique_ptr<compiler::CompileResult> compiled;
  size_t errors = 0;  // of the last analysis: a rename must not add any
};

namespace {

// The protocol's SymbolKind values used here.
enum SymbolKind : int {
  kModule = 2,
  kPackage = 4,
  kInterface = 11,
  kFunction = 12,
  kEvent = 24,
  kOperator = 25,
};

// Positions: the protocol counts lines from 0 and characters in UTF-16 code units; diagnostics count lines from 1
// and columns in bytes from 1 (the caret under the source line).
// A character of four UTF-8 bytes (U+10000 and up) is a surrogate pair in UTF-16.
uint32_t utf16_length(std::string_view text, size_t i) { return static_cast<unsigned char>(text[i]) >= 0xF0 ? 2 : 1; }

uint32_t utf16_units(std::string_view line, size_t bytes) {
  uint32_t units = 0;
  size_t i = 0;
  for (; i < bytes && i < line.size(); i = utf8::next(line, i)) units += utf16_length(line, i);
  return units + static_cast<uint32_t>(bytes > i ? bytes - i : 0);  // past the end of the line: one per byte
}

size_t byte_offset(std::string_view line, uint32_t units) {
  size_t i = 0;
  for (uint32_t seen = 0; i < line.size() && seen < units; i = utf8::next(line, i)) seen += utf16_length(line, i);
  return i;
}

json position(const SourceFile& file, uint32_t line, size_t byte_column) {
  const uint32_t clamped = line == 0 ? 1 : line;
  return {{"line", clamped - 1}, {"character", utf16_units(file.line(clamped), byte_column)}};
}

json range_of(const SourceLoc& loc) {
  if (!loc.valid()) return {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}};
  const size_t start = loc.col > 0 ? loc.col - 1 : 0;
  return {{"start", position(*loc.file, loc.line, start)}, {"end", position(*loc.file, loc.line, start + loc.length)}};
}

json location_of(const SourceLoc& loc) { return {{"uri", uri_of_path(loc.file->path())}, {"range", range_of(loc)}}; }

std::string location_text(const SourceLoc& loc) {
  return loc.file->path() + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

// One diagnostic of the run as the protocol's Diagnostic, its notes as related information. A diagnostic located
// in another file (an imported .dpl file, a test's IR file) is shown at the top of this one, saying where it is.
json to_protocol(const Diagnostic& diag, const SourceFile& document) {
  const bool here = diag.loc.file == &document;
  json result = {
      {"range", here ? range_of(diag.loc) : range_of(SourceLoc{})},
      {"severity", diag.severity == Severity::Error ? 1 : diag.severity == Severity::Warning ? 2 : 3},
      {"source", "dplc"},
      {"message", here || !diag.loc.valid() ? diag.message : location_text(diag.loc) + ": " + diag.message},
  };
  json related = json::array();
  if (!here && diag.loc.valid()) related.push_back({{"location", location_of(diag.loc)}, {"message", diag.message}});
  for (const Diagnostic& note : diag.notes) {
    if (note.loc.valid()) related.push_back({{"location", location_of(note.loc)}, {"message", note.message}});
  }
  if (!related.empty()) result["relatedInformation"] = std::move(related);
  return result;
}

json symbol(const std::string& name, std::string detail, int kind, const SourceLoc& loc,
            json children = json::array()) {
  json result = {{"name", name}, {"detail", std::move(detail)}, {"kind", kind}, {"range", range_of(loc)},
                 {"selectionRange", range_of(loc)}};
  if (!children.empty()) {
    // The pass's range runs from its name to its last rule, so that editors nest the rules inside it.
    result["range"]["end"] = children.back()["range"]["end"];
    result["children"] = std::move(children);
  }
  return result;
}

std::string rule_detail(const compiler::Rule& rule) {
  switch (rule.kind) {
    case compiler::Rule::Kind::Rewrite: return "rule";
    case compiler::Rule::Kind::MultiRoot: return "multi-root rule";
    case compiler::Rule::Kind::Partition: return "partition";
  }
  return "rule";
}

json document_symbols(const compiler::AstFile& ast) {
  const auto here = [&](const SourceLoc& loc) { return loc.valid() && loc.file == ast.source; };
  json symbols = json::array();
  for (const compiler::Pass& pass : ast.passes) {
    json rules = json::array();
    for (const compiler::Rule& rule : pass.rules) {
      if (here(rule.name_loc)) rules.push_back(symbol(rule.name, rule_detail(rule), kFunction, rule.name_loc));
    }
    if (!here(pass.name_loc)) {  // the rules written outside any pass block
      for (json& rule : rules) symbols.push_back(std::move(rule));
      continue;
    }
    symbols.push_back(symbol(pass.name, pass.description.empty() ? "pass" : pass.description, kModule,
                             pass.name_loc, std::move(rules)));
  }
  for (const compiler::PatternMacro& macro : ast.macros) {
    if (here(macro.name_loc)) symbols.push_back(symbol(macro.name, "pattern", kInterface, macro.name_loc));
  }
  for (const compiler::PipelineDecl& pipeline : ast.pipelines) {
    if (here(pipeline.name_loc)) symbols.push_back(symbol(pipeline.name, "pipeline", kPackage, pipeline.name_loc));
  }
  for (const compiler::ExternDecl& declared : ast.externs) {
    if (!here(declared.name_loc)) continue;
    const bool predicate = declared.kind == compiler::ExternDecl::Kind::Predicate;
    symbols.push_back(symbol(declared.name, predicate ? "extern predicate" : "extern rewriter", kFunction,
                             declared.name_loc));
  }
  for (const compiler::OpDecl& op : ast.ops) {
    if (here(op.name_loc)) symbols.push_back(symbol(op.name, "op", kOperator, op.name_loc));
  }
  for (const compiler::RuleTest& test : ast.tests) {
    if (here(test.name_loc)) symbols.push_back(symbol(test.name, "test of " + test.target, kEvent, test.name_loc));
  }
  return symbols;
}

// The ops a file can name: its registry (built-in ops and its `op` declarations), or the built-in ops when it did
// not parse.
const OpRegistry& registry_of(const compiler::AstFile* ast) {
  return ast != nullptr && ast->op_registry != nullptr ? *ast->op_registry : OpRegistry::global();
}

namespace fs = std::filesystem;

std::string canonical(const std::string& path) {
  std::error_code code;
  const fs::path resolved = fs::weakly_canonical(path, code);
  return code ? path : resolved.string();
}

// What a check reads instead of the disk: the open documents' texts (and a rename's renamed ones) by canonical path,
// viewed where they are kept (checking a document does not copy every open document's text).
using Texts = std::map<std::string, std::string_view>;

// Checks a .dpl text as dplc --check does (no code generated), its imports read from `texts` where they are there.
compiler::CompileResult check(const SourceFile& source, DiagnosticEngine& diags, const Texts& texts) {
  compiler::CompileOptions options;
  options.generate = false;
  options.read_import = [&texts](const std::string& path, std::string& error) -> std::unique_ptr<SourceFile> {
    const auto found = texts.find(canonical(path));
    if (found == texts.end()) return compiler::read_source_from_disk(path, error);
    return std::make_unique<SourceFile>(path, std::string(found->second));
  };
  return compiler::compile(source, diags, options);
}

// Whether `compiled` read the file at `canonical_path` through its imports (directly or not).
bool imports_file(const compiler::CompileResult& compiled, const std::string& canonical_path) {
  return std::any_of(compiled.imports.begin(), compiled.imports.end(), [&](const auto& imported) {
    return canonical(imported->source->path()) == canonical_path;
  });
}

std::string first_error(const DiagnosticEngine& diags) {
  const auto first = std::find_if(diags.diagnostics().begin(), diags.diagnostics().end(),
                                  [](const Diagnostic& diag) { return diag.severity == Severity::Error; });
  return first == diags.diagnostics().end() ? std::string() : first->message;
}

// What a pattern's references and renames look at beyond the document: the open documents' texts, and the .dpl
// files that might import the pattern's file (listed only when asked for).
struct Workspace {
  Texts texts;
  std::function<std::vector<std::string>()> list_files;
};

// A file that sees a pattern, as currently edited: the file declaring it, or one importing that file.
struct SeeingFile {
  std::string path;
  std::unique_ptr<SourceFile> source;
  compiler::CompileResult compiled;  // points into `source`
  size_t errors = 0;
};

// The files of the workspace that see the pattern declared in `declaring_path`: the declaring file first, then
// those importing it (directly or not), each checked with the open documents' texts.
std::vector<SeeingFile> files_seeing(const std::string& declaring_path, const Workspace& workspace) {
  const std::string declaring = canonical(declaring_path);
  std::vector<std::string> candidates = workspace.list_files();
  candidates.insert(candidates.begin(), declaring_path);
  std::vector<std::string> seen;
  std::vector<SeeingFile> files;
  for (const std::string& path : candidates) {
    const std::string key = canonical(path);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    SeeingFile file;
    file.path = path;
    const auto open = workspace.texts.find(key);
    std::string error;
    file.source = open != workspace.texts.end() ? std::make_unique<SourceFile>(path, std::string(open->second))
                                                : compiler::read_source_from_disk(path, error);
    if (file.source == nullptr) continue;
    DiagnosticEngine diags;
    file.compiled = check(*file.source, diags, workspace.texts);
    file.errors = diags.error_count();
    if (key == declaring || imports_file(file.compiled, declaring)) files.push_back(std::move(file));
  }
  return files;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// Where the name that ends at byte `end` of `text` starts (`end` when no name ends there).
size_t name_start(std::string_view text, size_t end) {
  while (end > 0 && is_name_char(text[end - 1])) --end;
  return end;
}

// The name under the cursor (letters, digits, `_` and `.`, as in `my.scale`), or "".
std::string name_at(std::string_view line, size_t byte) {
  const size_t begin = name_start(line, std::min(byte, line.size()));
  size_t end = begin;
  while (end < line.size() && is_name_char(line[end])) ++end;
  return std::string(line.substr(begin, end - begin));
}

bool contains(const SourceLoc& loc, uint32_t line, size_t byte) {
  return loc.valid() && loc.line == line && byte + 1 >= loc.col && byte + 1 < loc.col + loc.length;
}

// Where `name` is declared in `ast` (patterns also in the files it imports); null when nowhere.
const SourceLoc* declaration_of(const compiler::CompileResult& compiled, const std::string& name) {
  const compiler::AstFile& ast = *compiled.ast;
  for (const compiler::PatternMacro& macro : ast.macros) {
    if (macro.name == name) return &macro.name_loc;
  }
  for (const auto& imported : compiled.imports) {
    if (imported->ast == nullptr) continue;
    for (const compiler::PatternMacro& macro : imported->ast->macros) {
      if (macro.name == name) return &macro.name_loc;
    }
  }
  for (const compiler::Pass& pass : ast.passes) {
    if (pass.name == name && pass.name_loc.valid()) return &pass.name_loc;
  }
  for (const compiler::PipelineDecl& pipeline : ast.pipelines) {
    if (pipeline.name == name) return &pipeline.name_loc;
  }
  for (const compiler::ExternDecl& declared : ast.externs) {
    if (declared.name == name) return &declared.name_loc;
  }
  for (const compiler::OpDecl& op : ast.ops) {
    if (op.name == name) return &op.name_loc;
  }
  return nullptr;
}

// Whether `declared` (from declaration_of) is a pattern's name: the only declarations other files import.
bool declares_pattern(const compiler::CompileResult& compiled, const SourceLoc* declared) {
  const auto in = [declared](const compiler::AstFile& ast) {
    return std::any_of(ast.macros.begin(), ast.macros.end(),
                       [declared](const compiler::PatternMacro& macro) { return &macro.name_loc == declared; });
  };
  return in(*compiled.ast) || std::any_of(compiled.imports.begin(), compiled.imports.end(), [&](const auto& file) {
           return file->ast != nullptr && in(*file->ast);
         });
}

// A protocol position in a document: its line (from 1), the line's text, and the byte offset in it.
struct Cursor {
  uint32_t line;
  std::string_view text;
  size_t byte;
};

std::optional<Cursor> cursor_at(const SourceFile& source, const json& position) {
  const uint32_t line = position.at("line").get<uint32_t>() + 1;
  if (line > source.line_count()) return std::nullopt;
  const std::string_view text = source.line(line);
  return Cursor{line, text, byte_offset(text, position.at("character").get<uint32_t>())};
}

json definition(const compiler::CompileResult& compiled, const SourceFile& source, const json& position) {
  const std::optional<Cursor> cursor = cursor_at(source, position);
  if (!cursor) return nullptr;
  // A test's input or expected file: the file itself.
  for (const compiler::RuleTest& test : compiled.ast->tests) {
    for (const auto& [loc, path] : {std::pair{&test.input_loc, &test.input_path},
                                    std::pair{&test.expect_loc, &test.expect_path}}) {
      if (contains(*loc, cursor->line, cursor->byte) && !path->empty()) {
        return {{"uri", uri_of_path(*path)},
                {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}}}};
      }
    }
  }
  const std::string name = name_at(cursor->text, cursor->byte);
  if (name.empty()) return nullptr;
  const SourceLoc* declared = declaration_of(compiled, name);
  return declared != nullptr && declared->valid() ? location_of(*declared) : json(nullptr);
}

std::string operand_count(const OpInfo& op) {
  const auto operands = [](int n) { return std::to_string(n) + (n == 1 ? " operand" : " operands"); };
  if (op.max_operands < 0) return std::to_string(op.min_operands) + " or more operands";
  if (op.min_operands == op.max_operands) return operands(op.max_operands);
  return std::to_string(op.min_operands) + " to " + operands(op.max_operands);
}

// What an op takes, in Markdown: operands, traits, attributes with their kinds and defaults.
std::string describe_op(const OpInfo& op) {
  static constexpr std::pair<OpTrait, const char*> kTraits[] = {
      {kCommutative, "commutative"}, {kElementwise, "elementwise"}, {kBroadcast, "broadcast"},
      {kInjective, "injective"},     {kReduction, "reduction"},     {kOpaque, "opaque"}};
  std::string text = "**" + op.name + "**: " + operand_count(op);
  for (const auto& [trait, name] : kTraits) {
    if (op.has(trait)) text += std::string(", ") + name;
  }
  if (op.attrs.empty()) return text + "; no attributes";
  text += "\n";
  for (const AttrSpec& attr : op.attrs) {
    text += "\n- `" + attr.name + "`: " + std::string(attr_kind_name(attr.kind)) + " = `" +
            attr_value_str(attr.default_value) + "`";
  }
  return text;
}

// Hover text for the name under the cursor: an op's signature (the file's declared ops included), a pattern
// declaration's parameters, a pass's description; null for anything else.
json hover(const compiler::CompileResult& compiled, const SourceFile& source, const json& position) {
  const std::optional<Cursor> cursor = cursor_at(source, position);
  const std::string name = cursor ? name_at(cursor->text, cursor->byte) : "";
  if (name.empty()) return nullptr;
  const compiler::AstFile& ast = *compiled.ast;
  std::string markdown;
  for (const compiler::PatternMacro& macro : ast.macros) {
    if (macro.name != name) continue;
    markdown = "pattern **" + name + "**(";
    for (size_t i = 0; i < macro.params.size(); ++i) markdown += (i > 0 ? ", " : "") + macro.params[i];
    markdown += ")";
  }
  for (const compiler::Pass& pass : ast.passes) {
    if (pass.name == name && !pass.implicit) {
      markdown = "pass **" + name + "**: " + std::to_string(pass.rules.size()) + " rules" +
                 (pass.description.empty() ? "" : "\n\n" + pass.description);
    }
  }
  if (markdown.empty()) {
    const OpRegistry& registry = registry_of(&ast);
    if (const OpInfo* op = registry.find(name)) markdown = describe_op(*op);
  }
  if (markdown.empty()) return nullptr;
  return {{"contents", {{"kind", "markdown"}, {"value", markdown}}}};
}

// The protocol's CompletionItemKind values used here.
enum CompletionKind : int {
  kCompletionFunction = 3,
  kCompletionProperty = 10,
  kCompletionModule = 9,
  kCompletionInterface = 8,
  kCompletionKeyword = 14,
};

// The words of the language: the grammar's keywords and the names sema gives a meaning in patterns.
constexpr const char* kKeywords[] = {
    "pass",  "rule",      "pattern", "partition", "pipeline", "group",  "where",     "let",      "priority",
    "once",  "import",    "extern",  "from",      "op",       "test",   "input",     "expect",   "unchanged",
    "seed",  "tolerance", "numbers", "differ",    "dims",     "const",    "var",    "composite", "dominates", "Tensor"};

// The op whose call's parentheses enclose byte `offset` of `text` (searched back a few thousand bytes), or null.
const OpInfo* enclosing_call(const OpRegistry& registry, std::string_view text, size_t offset) {
  int depth = 0;
  const size_t stop = offset > 4096 ? offset - 4096 : 0;
  for (size_t i = offset; i > stop; --i) {
    const char c = text[i - 1];
    if (c == ')') ++depth;
    if (c != '(') continue;
    if (depth-- > 0) continue;
    const size_t begin = name_start(text, i - 1);
    return begin < i - 1 ? registry.find(text.substr(begin, i - 1 - begin)) : nullptr;
  }
  return nullptr;
}

// Completions for the name being typed: the enclosing op call's attributes (`axis=`), ops, the file's patterns
// and passes, keywords; all starting with what is typed so far.
json completion(const SourceFile& source, const compiler::AstFile* ast, const json& position) {
  const std::optional<Cursor> cursor = cursor_at(source, position);
  if (!cursor) return json::array();
  const size_t begin = name_start(cursor->text, cursor->byte);
  const std::string_view prefix = cursor->text.substr(begin, cursor->byte - begin);
  const OpRegistry& registry = registry_of(ast);
  json items = json::array();
  const auto offer = [&](const std::string& label, int kind, const std::string& detail, const std::string& insert) {
    if (label.compare(0, prefix.size(), prefix) != 0) return;
    json item = {{"label", label}, {"kind", kind}, {"detail", detail}};
    if (!insert.empty()) item["insertText"] = insert;
    items.push_back(std::move(item));
  };
  // The cursor's offset in the whole text (the line is a view into it), for the enclosing call.
  const std::string_view text = source.text();
  const auto offset = static_cast<size_t>(cursor->text.data() - text.data()) + begin;
  if (const OpInfo* op = enclosing_call(registry, text, offset)) {
    for (const AttrSpec& attr : op->attrs) {
      offer(attr.name, kCompletionProperty,
            std::string(attr_kind_name(attr.kind)) + " = " + attr_value_str(attr.default_value), attr.name + "=");
    }
  }
  for (size_t id = 0; id < registry.size(); ++id) {
    const OpInfo& op = registry.get(static_cast<OpId>(id));
    if (!op.name.empty()) offer(op.name, kCompletionFunction, operand_count(op), "");
  }
  if (ast != nullptr) {
    for (const compiler::PatternMacro& macro : ast->macros) offer(macro.name, kCompletionInterface, "pattern", "");
    for (const compiler::Pass& pass : ast->passes) {
      if (!pass.implicit) offer(pass.name, kCompletionModule, "pass", "");
    }
  }
  for (const char* keyword : kKeywords) offer(keyword, kCompletionKeyword, "keyword", "");
  return items;
}

// What the name under the cursor stands for, and where it occurs in the document.
struct NameTarget {
  std::string name;
  std::vector<NameSpan> spans;          // in the document, the declaration included when it is there
  const SourceLoc* declared = nullptr;  // a file-level name's declaration (maybe in an imported file)
  bool file_level = false;
  bool pattern = false;  // a pattern's name: seen by the files importing its file too
  std::string not_renamable;  // why a rename is refused; empty when it is not
};

bool is_keyword(std::string_view name) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

// The byte offset in the whole text of a protocol position.
std::optional<size_t> offset_of(const SourceFile& source, const json& position) {
  const std::optional<Cursor> cursor = cursor_at(source, position);
  if (!cursor) return std::nullopt;
  return static_cast<size_t>(cursor->text.data() - source.text().data()) + cursor->byte;
}

// Rule names stand alone; patterns, passes, pipelines, externs and declared ops are the file's (their uses
// anywhere in it); built-in ops too, though they cannot be renamed; any other name is a variable of the
// declaration around it (rule, pattern, partition, ...).
std::optional<NameTarget> target_at(const compiler::CompileResult& compiled, const NameIndex& names,
                                    size_t offset) {
  const std::optional<NameIndex::NameAtCursor> at = names.name_at(offset);
  if (!at) return std::nullopt;
  NameTarget target;
  if (at->declares_rule) {
    target.name = names.text(at->whole);
    target.spans = {at->whole};
    return target;
  }
  const OpRegistry& registry = registry_of(compiled.ast.get());
  const std::optional<NameSpan> declaration = names.declaration_at(offset);
  for (const NameSpan& candidate : {at->whole, at->up_to_cursor}) {
    const std::string name(names.text(candidate));
    target.declared = declaration_of(compiled, name);
    if (target.declared == nullptr && registry.find(name) == nullptr) continue;
    if (at->first_segment && declaration && names.shadows(name, *declaration)) {
      break;  // a variable spelled like an op or pattern (`exp` in `add(exp, exp)`)
    }
    target.name = name;
    target.file_level = true;
    target.spans = names.file_level_occurrences(name);
    target.pattern = target.declared != nullptr && declares_pattern(compiled, target.declared);
    if (target.declared == nullptr) target.not_renamable = "'" + name + "' is a built-in op";
    return target;
  }
  const std::string name(names.text(at->up_to_cursor));
  if (!at->first_segment || is_keyword(name) || !declaration) return std::nullopt;
  target.name = name;
  target.spans = names.occurrences(name, declaration->begin, declaration->end);
  return target;
}

struct ResolvedName {
  size_t offset;  // of the position, in bytes
  NameTarget target;
};

std::optional<ResolvedName> resolve_name(const compiler::CompileResult& compiled, const SourceFile& source,
                                         const NameIndex& names, const json& position) {
  const std::optional<size_t> offset = offset_of(source, position);
  if (!offset) return std::nullopt;
  std::optional<NameTarget> target = target_at(compiled, names, *offset);
  if (!target) return std::nullopt;
  return ResolvedName{*offset, std::move(*target)};
}

json range_of(const SourceFile& source, const NameSpan& span) {
  return {{"start", position(source, span.line, span.column)},
          {"end", position(source, span.line, span.column + (span.end - span.begin))}};
}

bool same_place(const NameSpan& span, const SourceLoc& loc) {
  return span.line == loc.line && span.column + 1 == loc.col;
}

// Where a pattern declared in `declared` occurs in the files that see it; its declaration only when asked for.
json pattern_references(const NameTarget& target, const std::vector<SeeingFile>& files, bool with_declaration) {
  const std::string declaring = canonical(target.declared->file->path());
  json locations = json::array();
  for (const SeeingFile& file : files) {
    const bool declaring_file = canonical(file.path) == declaring;
    for (const NameSpan& span : NameIndex(file.source->text()).file_level_occurrences(target.name)) {
      if (!with_declaration && declaring_file && same_place(span, *target.declared)) continue;
      locations.push_back({{"uri", uri_of_path(file.path)}, {"range", range_of(*file.source, span)}});
    }
  }
  return locations;
}

json references(const compiler::CompileResult& compiled, const SourceFile& source, const std::string& uri,
                const json& params, const Workspace& workspace) {
  const NameIndex names(source.text());
  const std::optional<ResolvedName> resolved = resolve_name(compiled, source, names, params.at("position"));
  json locations = json::array();
  if (!resolved) return locations;
  const NameTarget* target = &resolved->target;
  const bool with_declaration = params.contains("context") && params["context"].value("includeDeclaration", false);
  if (target->pattern) {
    return pattern_references(*target, files_seeing(target->declared->file->path(), workspace), with_declaration);
  }
  const bool declared_here = target->declared != nullptr && target->declared->file == &source;
  if (with_declaration && target->declared != nullptr && !declared_here) {
    locations.push_back(location_of(*target->declared));
  }
  for (const NameSpan& span : target->spans) {
    if (!with_declaration && declared_here && same_place(span, *target->declared)) continue;
    locations.push_back({{"uri", uri}, {"range", range_of(source, span)}});
  }
  return locations;
}

json highlights(const compiler::CompileResult& compiled, const SourceFile& source, const json& position) {
  const NameIndex names(source.text());
  const std::optional<ResolvedName> resolved = resolve_name(compiled, source, names, position);
  json result = json::array();
  if (!resolved) return result;
  const NameTarget* target = &resolved->target;
  for (const NameSpan& span : target->spans) result.push_back({{"range", range_of(source, span)}, {"kind", 1}});
  return result;
}

// A name a rename may give: an identifier (dotted for ops: `my.scale`) that is not a word of the language.
bool is_valid_name(std::string_view name, bool dotted) {
  const std::vector<std::string_view> segments = dotted_segments(name);
  if (!dotted && segments.size() > 1) return false;
  return std::all_of(segments.begin(), segments.end(),
                     [](std::string_view segment) { return is_identifier(segment) && !is_keyword(segment); });
}

// `text` with each of `spans` (in order) replaced by `new_name`, and the protocol's edits saying so.
std::pair<std::string, json> renamed(const SourceFile& source, const std::vector<NameSpan>& spans,
                                     const std::string& new_name) {
  std::string text = source.text();
  json edits = json::array();
  for (auto span = spans.rbegin(); span != spans.rend(); ++span) {
    text.replace(span->begin, span->end - span->begin, new_name);
    edits.insert(edits.begin(), json{{"range", range_of(source, *span)}, {"newText", new_name}});
  }
  return {std::move(text), std::move(edits)};
}

RequestError breaks(const std::string& name, const std::string& new_name, const std::string& what,
                    const DiagnosticEngine& diags) {
  return RequestError{kRequestFailed,
                      "renaming '" + name + "' to '" + new_name + "' would break " + what + ": " + first_error(diags)};
}

// A pattern's rename: in the file declaring it and in every file importing that one (open documents and .dpl
// files under the workspace folders), checked as a rename within one file is, in each of them.
json rename_pattern(const NameTarget& target, const std::string& new_name, const std::string& document_path,
                    const Workspace& workspace) {
  const std::vector<SeeingFile> files = files_seeing(target.declared->file->path(), workspace);
  Texts renamed_texts = workspace.texts;
  std::deque<std::string> renamed_storage;  // what renamed_texts views (a deque's elements do not move)
  json changes = json::object();
  for (const SeeingFile& file : files) {
    const NameIndex names(file.source->text());
    if (declaration_of(file.compiled, new_name) != nullptr || !names.occurrences(new_name).empty()) {
      throw RequestError{kRequestFailed, "'" + new_name + "' is already used " +
                                             (file.path == document_path ? "here" : "in " + file.path)};
    }
    auto [text, edits] = renamed(*file.source, names.file_level_occurrences(target.name), new_name);
    renamed_texts[canonical(file.path)] = renamed_storage.emplace_back(std::move(text));
    if (!edits.empty()) changes[uri_of_path(file.path)] = std::move(edits);
  }
  for (const SeeingFile& file : files) {
    const SourceFile renamed_file(file.path, std::string(renamed_texts.at(canonical(file.path))));
    DiagnosticEngine diags;
    check(renamed_file, diags, renamed_texts);
    if (diags.error_count() > file.errors) {
      throw breaks(target.name, new_name, file.path == document_path ? "the file" : file.path, diags);
    }
  }
  return {{"changes", std::move(changes)}};
}

// The edits renaming the name under the cursor, checked: the new name must be free where the old one is used,
// and the renamed text must compile with no more errors than before (a rename never breaks a file).
json rename(const compiler::CompileResult& compiled, const SourceFile& source, size_t errors_before,
            const std::string& uri, const json& params, const Workspace& workspace) {
  const NameIndex names(source.text());
  const std::optional<ResolvedName> resolved = resolve_name(compiled, source, names, params.at("position"));
  if (!resolved) throw RequestError{kRequestFailed, "there is no name to rename here"};
  const NameTarget* target = &resolved->target;
  if (!target->not_renamable.empty()) throw RequestError{kRequestFailed, target->not_renamable};
  const std::string new_name = params.at("newName").get<std::string>();
  if (!is_valid_name(new_name, target->name.find('.') != std::string::npos)) {
    throw RequestError{kRequestFailed, "'" + new_name + "' is not a name dpl accepts here"};
  }
  if (new_name == target->name) return {{"changes", {{uri, json::array()}}}};
  if (target->pattern) return rename_pattern(*target, new_name, source.path(), workspace);
  const std::optional<NameSpan> scope = target->file_level ? std::nullopt : names.declaration_at(resolved->offset);
  const bool taken = declaration_of(compiled, new_name) != nullptr ||
                     !names.occurrences(new_name, scope ? scope->begin : 0, scope ? scope->end : SIZE_MAX).empty();
  if (taken) throw RequestError{kRequestFailed, "'" + new_name + "' is already used here"};
  auto [text, edits] = renamed(source, target->spans, new_name);
  const SourceFile renamed_file(source.path(), std::move(text));
  DiagnosticEngine diags;
  check(renamed_file, diags, workspace.texts);
  if (diags.error_count() > errors_before) throw breaks(target->name, new_name, "the file", diags);
  return {{"changes", {{uri, std::move(edits)}}}};
}

json prepare_rename(const compiler::CompileResult& compiled, const SourceFile& source, const json& position) {
  const NameIndex names(source.text());
  const std::optional<ResolvedName> resolved = resolve_name(compiled, source, names, position);
  if (!resolved) return nullptr;
  const NameTarget* target = &resolved->target;
  if (!target->not_renamable.empty()) throw RequestError{kRequestFailed, target->not_renamable};
  const auto here = std::find_if(target->spans.begin(), target->spans.end(), [&](const NameSpan& span) {
    return span.begin <= resolved->offset && resolved->offset <= span.end;
  });
  if (here == target->spans.end()) return nullptr;  // a member or attribute name of the same spelling
  return {{"range", range_of(source, *here)}, {"placeholder", target->name}};
}

// The workspace folders the client names (`workspaceFolders`, else the older `rootUri` or `rootPath`).
std::vector<std::string> workspace_roots(const json& params) {
  std::vector<std::string> roots;
  const auto add = [&roots](const json& uri) {
    if (!uri.is_string()) return;
    if (std::optional<std::string> path = path_of_uri(uri.get<std::string>())) roots.push_back(std::move(*path));
  };
  if (params.contains("workspaceFolders") && params["workspaceFolders"].is_array()) {
    for (const json& folder : params["workspaceFolders"]) {
      if (folder.is_object() && folder.contains("uri")) add(folder["uri"]);
    }
  }
  if (roots.empty() && params.contains("rootUri")) add(params["rootUri"]);
  if (roots.empty() && params.contains("rootPath") && params["rootPath"].is_string()) {
    roots.push_back(params["rootPath"].get<std::string>());
  }
  return roots;
}

json initialize_result() {
  return {{"capabilities",
           {{"textDocumentSync", {{"openClose", true}, {"change", 1}, {"save", {{"includeText", false}}}}},
            {"documentSymbolProvider", true},
            {"definitionProvider", true},
            {"hoverProvider", true},
            {"referencesProvider", true},
            {"documentHighlightProvider", true},
            {"renameProvider", {{"prepareProvider", true}}},
            {"completionProvider", {{"triggerCharacters", {"."}}}}}},
          {"serverInfo", {{"name", "dpl-lsp"}}}};
}

json error_response(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

}  // namespace

LanguageServer::LanguageServer() = default;
LanguageServer::~LanguageServer() = default;

std::vector<json> LanguageServer::handle(const std::string& body) {
  json message = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) return {error_response(nullptr, kParseError, "the message is not JSON")};
  return handle(message);
}

std::vector<json> LanguageServer::handle(const json& message) {
  std::vector<json> out;
  if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
    // Responses to requests the server never sends are ignored; anything else is not a request.
    if (message.is_object() && (message.contains("result") || message.contains("error"))) return out;
    out.push_back(error_response(message.is_object() && message.contains("id") ? message["id"] : json(nullptr),
                                 kInvalidRequest, "not a JSON-RPC request or notification"));
    return out;
  }
  const std::string method = message["method"].get<std::string>();
  const bool is_request = message.contains("id");
  const json params = message.contains("params") ? message["params"] : json::object();
  try {
    if (shutdown_ && method != "exit") throw RequestError{kInvalidRequest, "the server is shutting down"};
    // Before `initialize` only `exit` counts; requests are refused and notifications dropped (the protocol's rule).
    if (!initialized_ && method != "initialize" && method != "exit") {
      throw RequestError{kServerNotInitialized, "the server is not initialized"};
    }
    json result = dispatch(method, params, out);
    if (is_request) out.insert(out.begin(), json{{"jsonrpc", "2.0"}, {"id", message["id"]}, {"result", result}});
  } catch (const RequestError& error) {
    if (is_request) out.insert(out.begin(), error_response(message["id"], error.code, error.message));
  } catch (const json::exception& error) {
    if (is_request) out.insert(out.begin(), error_response(message["id"], kInvalidParams, error.what()));
  } catch (const std::exception& error) {
    // Not expected (the checks report problems as diagnostics); the server answers and stays up.
    if (is_request) out.insert(out.begin(), error_response(message["id"], kInternalError, error.what()));
  }
  return out;
}

json LanguageServer::dispatch(const std::string& method, const json& params, std::vector<json>& notifications) {
  if (method == "initialize") {
    initialized_ = true;
    workspace_roots_ = workspace_roots(params);
    return initialize_result();
  }
  if (method == "initialized" || method == "$/cancelRequest" || method == "$/setTrace") return nullptr;
  if (method == "shutdown") {
    shutdown_ = true;
    return nullptr;
  }
  if (method == "exit") {
    exited_ = true;
    return nullptr;
  }
  if (method == "textDocument/didOpen") {
    const json& item = params.at("textDocument");
    const std::string uri = item.at("uri").get<std::string>();
    const std::optional<std::string> path = path_of_uri(uri);
    if (!path) throw RequestError{kInvalidParams, "only file: URIs are supported: " + uri};
    std::string text = item.at("text").get<std::string>();  // before storing: a document always has a source
    auto document = std::make_unique<Document>();
    document->uri = uri;
    document->path = *path;
    document->canonical_path = canonical(*path);
    Document& stored = *(documents_[uri] = std::move(document));
    notifications.push_back(analyze(stored, std::move(text)));
    reanalyze_importers_of(stored.canonical_path, notifications);
    return nullptr;
  }
  if (method == "textDocument/didChange") {
    Document& document = document_of(params);
    const json& changes = params.at("contentChanges");
    if (!changes.is_array() || changes.empty()) return nullptr;
    // Full synchronization (the capability announced): the last change holds the whole text.
    notifications.push_back(analyze(document, changes.back().at("text").get<std::string>()));
    reanalyze_importers_of(document.canonical_path, notifications);
    return nullptr;
  }
  if (method == "textDocument/didSave") {
    // The files a test names or the file imports may have changed on disk: check again.
    Document& document = document_of(params);
    notifications.push_back(analyze(document, document.source->text()));
    reanalyze_importers_of(document.canonical_path, notifications);
    return nullptr;
  }
  if (method == "textDocument/didClose") {
    Document& document = document_of(params);
    notifications.push_back({{"jsonrpc", "2.0"},
                             {"method", "textDocument/publishDiagnostics"},
                             {"params", {{"uri", document.uri}, {"diagnostics", json::array()}}}});
    const std::string closed = document.canonical_path;
    documents_.erase(document.uri);
    reanalyze_importers_of(closed, notifications);  // they read the file from disk again
    return nullptr;
  }
  if (method == "textDocument/documentSymbol") {
    const Document& document = document_of(params);
    if (document.compiled->ast == nullptr) return json::array();  // it did not parse
    return document_symbols(*document.compiled->ast);
  }
  if (method == "textDocument/definition") {
    const Document& document = document_of(params);
    if (document.compiled->ast == nullptr) return nullptr;
    return definition(*document.compiled, *document.source, params.at("position"));
  }
  if (method == "textDocument/hover") {
    const Document& document = document_of(params);
    if (document.compiled->ast == nullptr) return nullptr;
    return hover(*document.compiled, *document.source, params.at("position"));
  }
  if (method == "textDocument/references" || method == "textDocument/documentHighlight" ||
      method == "textDocument/rename" || method == "textDocument/prepareRename") {
    const Document& document = document_of(params);
    const bool listing = method == "textDocument/references" || method == "textDocument/documentHighlight";
    if (document.compiled->ast == nullptr) {  // it did not parse: names cannot be told apart
      if (listing) return json::array();
      throw RequestError{kRequestFailed, "the file does not parse; fix its syntax errors first"};
    }
    const compiler::CompileResult& compiled = *document.compiled;
    const Workspace workspace{open_texts(), [this] { return workspace_files(); }};
    if (method == "textDocument/references") {
      return references(compiled, *document.source, document.uri, params, workspace);
    }
    if (method == "textDocument/documentHighlight") {
      return highlights(compiled, *document.source, params.at("position"));
    }
    if (method == "textDocument/rename") {
      return rename(compiled, *document.source, document.errors, document.uri, params, workspace);
    }
    return prepare_rename(compiled, *document.source, params.at("position"));
  }
  if (method == "textDocument/completion") {
    const Document& document = document_of(params);
    return completion(*document.source, document.compiled->ast.get(), params.at("position"));
  }
  throw RequestError{kMethodNotFound, "dpl-lsp does not handle " + method};
}

LanguageServer::Document& LanguageServer::document_of(const json& params) {
  const std::string uri = params.at("textDocument").at("uri").get<std::string>();
  const auto found = documents_.find(uri);
  if (found == documents_.end()) throw RequestError{kInvalidParams, "the document is not open: " + uri};
  return *found->second;
}

json LanguageServer::analyze(Document& document, std::string text) {
  document.compiled.reset();
  document.source = std::make_unique<SourceFile>(document.path, std::move(text));
  DiagnosticEngine diags;
  document.compiled = std::make_unique<compiler::CompileResult>(check(*document.source, diags, open_texts()));
  document.errors = diags.error_count();
  json diagnostics = json::array();
  for (const Diagnostic& diag : diags.diagnostics()) diagnostics.push_back(to_protocol(diag, *document.source));
  return {{"jsonrpc", "2.0"},
          {"method", "textDocument/publishDiagnostics"},
          {"params", {{"uri", document.uri}, {"diagnostics", std::move(diagnostics)}}}};
}

void LanguageServer::reanalyze_importers_of(const std::string& canonical_path, std::vector<json>& notifications) {
  for (auto& [uri, document] : documents_) {
    if (document->canonical_path != canonical_path && imports_file(*document->compiled, canonical_path)) {
      notifications.push_back(analyze(*document, document->source->text()));
    }
  }
}

std::map<std::string, std::string_view> LanguageServer::open_texts() const {
  Texts texts;
  for (const auto& [uri, document] : documents_) {
    if (document->source != nullptr) texts[document->canonical_path] = document->source->text();
  }
  return texts;
}

std::vector<std::string> LanguageServer::workspace_files() const {
  std::vector<std::string> files;
  for (const auto& [uri, document] : documents_) files.push_back(document->path);
  for (const std::string& root : workspace_roots_) {
    std::error_code code;
    fs::recursive_directory_iterator walk(root, fs::directory_options::skip_permission_denied, code);
    for (; !code && walk != fs::recursive_directory_iterator() && files.size() < kMaxWorkspaceFiles;
         walk.increment(code)) {
      const std::string name = walk->path().filename().string();
      if (walk->is_directory(code)) {
        if (name.starts_with('.') || name.starts_with("build")) walk.disable_recursion_pending();
      } else if (walk->path().extension() == ".dpl") {
        files.push_back(walk->path().string());
      }
    }
  }
  return files;
}

std::optional<std::string> path_of_uri(const std::string& uri) {
  static constexpr std::string_view kScheme = "file://";
  if (uri.rfind(kScheme, 0) != 0) return std::nullopt;
  std::string path;
  for (size_t i = kScheme.size(); i < uri.size(); ++i) {
    const auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (uri[i] == '%' && i + 2 < uri.size() && hex(uri[i + 1]) >= 0 && hex(uri[i + 2]) >= 0) {
      path.push_back(static_cast<char>(hex(uri[i + 1]) * 16 + hex(uri[i + 2])));
      i += 2;
    } else {
      path.push_back(uri[i]);
    }
  }
  if (path.empty() || path.front() != '/') return std::nullopt;  // `file://host/...` is not a local path
  return path;
}

std::string uri_of_path(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file://";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                       c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      uri.push_back(c);
    } else {
      uri.push_back('%');
      uri.push_back(kHex[byte >> 4]);
      uri.push_back(kHex[byte & 15]);
    }
  }
  return uri;
}

}  // namespace dpl::lsp
