// Parser stage: runs the ANTLR lexer and parser on a .dpl file, reports syntax errors as located diagnostics, and
// turns the parse tree into the AST (patterns for left-hand sides, expressions for right-hand sides).
#include "dpl/compiler/parse.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "DplLexer.h"
#include "DplParser.h"
#include "antlr4-runtime.h"
#include "dpl/support/utf8.h"

namespace dpl::compiler {

namespace {

using dpl_grammar::DplLexer;
using dpl_grammar::DplParser;

// Deeper nesting is rejected before parsing: the parser and the AST passes recurse once per level.
constexpr int kMaxNesting = 256;

// The largest value a rule test gives a symbolic dimension (`dims n = 4;`): tests evaluate graphs in the
// reference interpreter, which has to hold every tensor.
constexpr int64_t kMaxTestDim = 1 << 16;

// ANTLR counts a line's characters (code points); diagnostics count its bytes, as the caret under the source line
// and the IR reader do.
// The location of `characters` characters from character `column` (0-based) of `line_number`.
SourceLoc char_span_loc(const SourceFile& source, size_t line_number, size_t column, size_t characters) {
  const std::string_view line = source.line(static_cast<uint32_t>(line_number));
  const size_t begin = utf8::byte_offset(line, column);
  const size_t end = utf8::byte_offset(line, column + characters);
  return SourceLoc{&source, static_cast<uint32_t>(line_number), static_cast<uint32_t>(begin + 1),
                   static_cast<uint32_t>(end - begin)};
}

SourceLoc token_loc(const SourceFile& source, const antlr4::Token* token) {
  size_t characters = 1;
  if (token->getType() != antlr4::Token::EOF && token->getStopIndex() >= token->getStartIndex()) {
    characters = token->getStopIndex() - token->getStartIndex() + 1;
  }
  SourceLoc loc = char_span_loc(source, token->getLine(), token->getCharPositionInLine(), characters);
  // A token spanning lines (a block comment, say) is underlined to the end of its first line.
  std::string_view line = source.line(loc.line);
  if (loc.col <= line.size() && loc.col + loc.length - 1 > line.size()) {
    loc.length = static_cast<uint32_t>(line.size() - loc.col + 1);
  }
  if (loc.length == 0) loc.length = 1;
  return loc;
}

SourceLoc context_loc(const SourceFile& source, antlr4::ParserRuleContext* context) {
  const antlr4::Token* start = context->getStart();
  const antlr4::Token* stop = context->getStop();
  if (stop != nullptr && stop->getLine() == start->getLine() && stop->getStopIndex() >= start->getStartIndex()) {
    return char_span_loc(source, start->getLine(), start->getCharPositionInLine(),
                         stop->getStopIndex() - start->getStartIndex() + 1);
  }
  return token_loc(source, start);
}

// `'x'`, or `end of file`.
std::string describe_token(const antlr4::Token* token) {
  if (token == nullptr || token->getType() == antlr4::Token::EOF) return "end of file";
  return "'" + token->getText() + "'";
}

// `';'`, `';' or ')'`, `a name`: what the parser expected, in words.
std::string describe_expected(const antlr4::misc::IntervalSet& expected, const antlr4::dfa::Vocabulary& vocabulary) {
  std::set<std::string> names;
  for (ssize_t type : expected.toList()) {
    if (type == static_cast<ssize_t>(antlr4::Token::EOF)) {
      names.insert("end of file");
      continue;
    }
    switch (type) {
      case DplParser::IDENT:
        names.insert("a name");
        break;
      case DplParser::INT:
      case DplParser::FLOAT:
        names.insert("a number");
        break;
      case DplParser::STRING:
        names.insert("a string");
        break;
      default:
        names.insert(vocabulary.getDisplayName(type));
        break;
    }
  }
  std::string text;
  size_t i = 0;
  for (const std::string& name : names) {
    if (i > 0) text += (i + 1 == names.size()) ? " or " : ", ";
    text += name;
    ++i;
  }
  return text;
}

// ANTLR's recovery strategy with messages in dplc's words: "expected ';'", "unexpected 'x'; expected a name".
class DplErrorStrategy : public antlr4::DefaultErrorStrategy {
 protected:
  void reportNoViableAlternative(antlr4::Parser* parser, const antlr4::NoViableAltException& e) override {
    parser->notifyErrorListeners(e.getOffendingToken(), "unexpected " + describe_token(e.getOffendingToken()), nullptr);
  }

  void reportInputMismatch(antlr4::Parser* parser, const antlr4::InputMismatchException& e) override {
    parser->notifyErrorListeners(e.getOffendingToken(),
                                 "unexpected " + describe_token(e.getOffendingToken()) + "; expected " +
                                     describe_expected(e.getExpectedTokens(), parser->getVocabulary()),
                                 nullptr);
  }

  void reportUnwantedToken(antlr4::Parser* parser) override {
    if (inErrorRecoveryMode(parser)) return;
    beginErrorCondition(parser);
    antlr4::Token* token = parser->getCurrentToken();
    parser->notifyErrorListeners(token,
                                 "unexpected " + describe_token(token) + "; expected " +
                                     describe_expected(getExpectedTokens(parser), parser->getVocabulary()),
                                 nullptr);
  }

  void reportMissingToken(antlr4::Parser* parser) override {
    if (inErrorRecoveryMode(parser)) return;
    beginErrorCondition(parser);
    // Point just past the previous token: that is where the missing one belongs.
    antlr4::Token* previous = parser->getTokenStream()->LT(-1);
    antlr4::Token* token = previous != nullptr ? previous : parser->getCurrentToken();
    missing_after_ = previous != nullptr;
    parser->notifyErrorListeners(
        token, "expected " + describe_expected(getExpectedTokens(parser), parser->getVocabulary()), nullptr);
    missing_after_ = false;
  }

 public:
  bool missing_after() const { return missing_after_; }

 private:
  bool missing_after_ = false;
};

class DiagnosticListener : public antlr4::BaseErrorListener {
 public:
  DiagnosticListener(const SourceFile& source, DiagnosticEngine& diags, const DplErrorStrategy& strategy)
      : source_(source), diags_(diags), strategy_(strategy) {}

  void syntaxError(antlr4::Recognizer*, antlr4::Token* offending, size_t line, size_t column,
                   const std::string& message, std::exception_ptr) override {
    SourceLoc loc;
    if (offending != nullptr) {
      loc = token_loc(source_, offending);
      if (strategy_.missing_after()) {
        loc.col += loc.length;
        loc.length = 1;
      }
    } else {
      loc = char_span_loc(source_, line, column, 1);
    }
    diags_.error(loc, message);
  }

 private:
  const SourceFile& source_;
  DiagnosticEngine& diags_;
  const DplErrorStrategy& strategy_;
};

// Reports tokens the lexer could not make sense of and nesting too deep to parse safely; true when clean.
bool check_tokens(const SourceFile& source, const std::vector<antlr4::Token*>& tokens, DiagnosticEngine& diags) {
  bool clean = true;
  // Per open bracket: operators seen since the last separator; each may add one level to the parse tree.
  std::vector<int> operators_per_level{0};
  int operators = 0;  // the sum of operators_per_level
  bool reported_depth = false;
  for (const antlr4::Token* token : tokens) {
    switch (token->getType()) {
      case DplLexer::UNTERMINATED_COMMENT:
        diags.error(token_loc(source, token), "unterminated comment: '/*' without '*/'");
        clean = false;
        continue;
      case DplLexer::UNTERMINATED_STRING:
        diags.error(token_loc(source, token), "unterminated string");
        clean = false;
        continue;
      case DplLexer::UNKNOWN_CHAR:
        diags.error(token_loc(source, token), "unexpected character '" + token->getText() + "'");
        clean = false;
        continue;
      case DplLexer::IDENT:
      case DplLexer::INT:
      case DplLexer::FLOAT:
      case DplLexer::STRING:
      case antlr4::Token::EOF:
        continue;
      default:
        break;
    }
    const std::string text = token->getText();
    if (text == "(" || text == "[" || text == "{") {
      operators_per_level.push_back(0);
    } else if (text == ")" || text == "]" || text == "}") {
      if (operators_per_level.size() > 1) {
        operators -= operators_per_level.back();
        operators_per_level.pop_back();
      }
    } else if (text == "," || text == ";" || text == "=>" || text == "=" || text == "where") {
      operators -= operators_per_level.back();
      operators_per_level.back() = 0;
    } else {
      ++operators_per_level.back();
      ++operators;
    }
    int nesting = static_cast<int>(operators_per_level.size()) - 1 + operators;
    if (nesting > kMaxNesting && !reported_depth) {
      diags.error(token_loc(source, token),
                  "expression nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
      reported_depth = true;
      clean = false;
    }
  }
  return clean;
}

// Builds the AST from a parse tree that had no syntax errors.
class AstBuilder {
 public:
  AstBuilder(const SourceFile& source, DiagnosticEngine& diags, antlr4::TokenStream& tokens)
      : source_(source), diags_(diags), parser_tokens_(&tokens) {}

  std::unique_ptr<AstFile> build(DplParser::FileContext* file) {
    auto ast = std::make_unique<AstFile>();
    ast->source = &source_;
    ast->basename = path_basename(source_.path());
    ast->stem = identifier_stem(source_.path());
    int implicit_pass = -1;
    for (DplParser::ItemContext* item : file->item()) {
      if (auto* pass = item->passDecl()) {
        ast->passes.push_back(build_pass(pass));
      } else if (auto* rule = item->ruleDecl()) {
        if (auto built = build_rule(rule)) implicit_rules(*ast, implicit_pass, rule).push_back(std::move(*built));
      } else if (auto* multi = item->multiRuleDecl()) {
        if (auto built = build_multi_rule(multi)) {
          implicit_rules(*ast, implicit_pass, multi).push_back(std::move(*built));
        }
      } else if (auto* partition = item->partitionDecl()) {
        if (auto built = build_partition(partition)) {
          implicit_rules(*ast, implicit_pass, partition).push_back(std::move(*built));
        }
      } else if (auto* pipeline = item->pipelineDecl()) {
        ast->pipelines.push_back(build_pipeline(pipeline));
      } else if (auto* macro = item->patternDecl()) {
        if (auto built = build_macro(macro)) ast->macros.push_back(std::move(*built));
      } else if (auto* import = item->importDecl()) {
        ast->imports.push_back(Import{unquote(import->STRING()->getSymbol()), loc(import)});
      } else if (auto* declaration = item->externDecl()) {
        if (auto built = build_extern(declaration)) ast->externs.push_back(std::move(*built));
      } else if (auto* op = item->opDecl()) {
        if (auto built = build_op_decl(op)) ast->ops.push_back(std::move(*built));
      } else if (auto* test = item->testDecl()) {
        if (auto built = build_test(test, nullptr)) tests_.push_back(std::move(*built));
      }
    }
    ast->tests = std::move(tests_);
    for (PatternMacro& macro : pass_macros_) ast->macros.push_back(std::move(macro));
    return ast;
  }

 private:
  SourceLoc loc(antlr4::ParserRuleContext* context) const { return context_loc(source_, context); }

  // The rules of the pass formed by the rules written outside any pass block (created at the first such rule).
  std::vector<Rule>& implicit_rules(AstFile& ast, int& implicit_pass, antlr4::ParserRuleContext* first_rule) {
    if (implicit_pass < 0) {
      implicit_pass = static_cast<int>(ast.passes.size());
      Pass implicit;
      implicit.name = ast.stem;
      implicit.name_loc = token_loc(source_, first_rule->getStart());
      implicit.implicit = true;
      ast.passes.push_back(std::move(implicit));
    }
    return ast.passes[static_cast<size_t>(implicit_pass)].rules;
  }
  SourceLoc loc(const antlr4::Token* token) const { return token_loc(source_, token); }

  std::optional<PatternMacro> build_macro(DplParser::PatternDeclContext* context) {
    std::vector<DplParser::IdentContext*> names = context->ident();
    PatternMacro macro;
    macro.name = names[0]->getText();
    macro.name_loc = loc(names[0]);
    for (size_t i = 1; i < names.size(); ++i) {
      if (!check_variable_name(names[i]->getText(), loc(names[i]))) return std::nullopt;
      macro.params.push_back(names[i]->getText());
      macro.param_locs.push_back(loc(names[i]));
    }
    macro.body = pattern(context->body, 0);
    if (macro.body == nullptr) return std::nullopt;
    return macro;
  }

  std::optional<ExternDecl> build_extern(DplParser::ExternDeclContext* context) {
    ExternDecl decl;
    std::string kind = context->kind->getText();
    if (kind == "predicate") {
      decl.kind = ExternDecl::Kind::Predicate;
    } else if (kind == "rewriter") {
      decl.kind = ExternDecl::Kind::Rewriter;
    } else {
      diags_.error(loc(context->kind), "expected 'predicate' or 'rewriter' after 'extern', got '" + kind + "'");
      return std::nullopt;
    }
    decl.name = context->ident(1)->getText();
    decl.name_loc = loc(context->ident(1));
    for (DplParser::ExternParamContext* param : context->externParam()) {
      std::vector<DplParser::IdentContext*> parts = param->ident();
      if (!check_variable_name(parts[0]->getText(), loc(parts[0]))) return std::nullopt;
      if (parts[1]->getText() != "Tensor") {
        diags_.error(loc(parts[1]), "an extern parameter is a graph value: write '" + parts[0]->getText() +
                                        ": Tensor', not '" + parts[1]->getText() + "'");
        return std::nullopt;
      }
      decl.params.push_back(parts[0]->getText());
    }
    decl.header = unquote(context->header);
    if (decl.header.empty()) {
      diags_.error(loc(context->header), "the header of an extern declaration needs a path");
      return std::nullopt;
    }
    // The path goes into `#include "..."` as it is, where escapes mean nothing.
    if (std::any_of(decl.header.begin(), decl.header.end(),
                    [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; })) {
      diags_.error(loc(context->header), "a header path cannot hold quotes, backslashes or control characters");
      return std::nullopt;
    }
    return decl;
  }

  // `op my.scale(x, rest..., factor: float = 1.0) : elementwise -> same_as(x);`. Sema checks the kinds, traits,
  // defaults and the result rule.
  std::optional<OpDecl> build_op_decl(DplParser::OpDeclContext* context) {
    OpDecl decl;
    decl.name_loc = loc(context->nameParts[0]);
    for (DplParser::IdentContext* part : context->nameParts) {
      decl.name += (decl.name.empty() ? "" : ".") + part->getText();
    }
    for (DplParser::IdentContext* trait : context->traits) {
      decl.traits.push_back(trait->getText());
      decl.trait_locs.push_back(loc(trait));
    }
    for (DplParser::OpParamContext* param : context->opParam()) {
      if (auto* operand = dynamic_cast<DplParser::OperandParamContext*>(param)) {
        if (!check_variable_name(operand->ident()->getText(), loc(operand->ident()))) return std::nullopt;
        if (decl.variadic) {
          diags_.error(loc(operand), "only the last operand of an op can be variadic ('xs...')");
          return std::nullopt;
        }
        if (!decl.attrs.empty()) {
          diags_.error(loc(operand), "operands come before attributes ('name: kind')");
          return std::nullopt;
        }
        decl.operands.push_back(operand->ident()->getText());
        decl.operand_locs.push_back(loc(operand->ident()));
        decl.variadic = operand->variadic != nullptr;
        continue;
      }
      auto* attr = dynamic_cast<DplParser::AttrParamContext*>(param);
      std::vector<DplParser::IdentContext*> parts = attr->ident();
      OpDecl::Attr spec{parts[0]->getText(), loc(parts[0]), parts[1]->getText(), loc(parts[1]),
                        attr->optional != nullptr, std::nullopt, {}};
      if (attr->value != nullptr) {
        spec.default_loc = loc(attr->value);
        spec.default_value = literal(attr->value);
        if (!spec.default_value) return std::nullopt;
      }
      decl.attrs.push_back(std::move(spec));
    }
    if (context->result != nullptr) {
      decl.result = expression(context->result, 0);
      if (decl.result == nullptr) return std::nullopt;
    }
    return decl;
  }

  Pass build_pass(DplParser::PassDeclContext* context) {
    Pass pass;
    pass.name = context->ident()->getText();
    pass.name_loc = loc(context->ident());
    if (context->description != nullptr) pass.description = unquote(context->description);
    for (DplParser::PassItemContext* item : context->passItem()) {
      if (auto* rule = item->ruleDecl()) {
        if (auto built = build_rule(rule)) pass.rules.push_back(std::move(*built));
      } else if (auto* multi = item->multiRuleDecl()) {
        if (auto built = build_multi_rule(multi)) pass.rules.push_back(std::move(*built));
      } else if (auto* partition = item->partitionDecl()) {
        if (auto built = build_partition(partition)) pass.rules.push_back(std::move(*built));
      } else if (auto* macro = item->patternDecl()) {
        // Pattern declarations are file-wide wherever they are written.
        if (auto built = build_macro(macro)) pass_macros_.push_back(std::move(*built));
      } else if (auto* test = item->testDecl()) {
        if (auto built = build_test(test, &pass)) tests_.push_back(std::move(*built));
      }
    }
    return pass;
  }

  // `test NAME { items }`, inside `pass` (which it then tests) or at the top level (null). Each item at most
  // once; `input` and `expect` are required, and a top-level test names what it runs.
  std::optional<RuleTest> build_test(DplParser::TestDeclContext* context, const Pass* pass) {
    RuleTest test;
    test.name = context->ident()->getText();
    test.name_loc = loc(context->ident());
    if (pass != nullptr) {
      test.target = pass->name;
      test.target_loc = test.name_loc;
    }
    bool ok = true;
    std::map<std::string, SourceLoc> given;
    for (DplParser::TestItemContext* item : context->testItem()) {
      std::string keyword = item->getStart()->getText();
      if (auto first = given.find(keyword); first != given.end()) {
        Diagnostic& diag = diags_.error(loc(item), "'" + keyword + "' is given twice in test '" + test.name + "'");
        DiagnosticEngine::add_note(diag, first->second, "first given here");
        continue;
      }
      if (keyword == "pass" || keyword == "pipeline") {
        if (given.count("pass") + given.count("pipeline") > 0) {
          diags_.error(loc(item), "a test runs one pass or pipeline");
          continue;
        }
      }
      given[keyword] = loc(item);
      if (auto* target = dynamic_cast<DplParser::TestTargetItemContext*>(item)) {
        if (pass != nullptr) {
          diags_.error(loc(item), "a test inside pass '" + pass->name + "' tests that pass; move it out of the " +
                                      "pass block to run another pass or a pipeline");
          continue;
        }
        test.target = target->ident()->getText();
        test.target_loc = loc(target->ident());
        test.target_is_pipeline = keyword == "pipeline";
      } else if (auto* input = dynamic_cast<DplParser::TestInputItemContext*>(item)) {
        test.input = unquote(input->STRING()->getSymbol());
        test.input_loc = loc(input->STRING()->getSymbol());
      } else if (auto* expect = dynamic_cast<DplParser::TestExpectItemContext*>(item)) {
        test.expect_unchanged = expect->unchanged != nullptr;
        if (expect->path != nullptr) test.expect = unquote(expect->path);
        test.expect_loc = loc(expect->unchanged != nullptr ? expect->unchanged : expect->path);
      } else if (auto* seed = dynamic_cast<DplParser::TestSeedItemContext*>(item)) {
        std::string digits = seed->INT()->getText();
        auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), test.seed);
        if (error != std::errc() || end != digits.data() + digits.size()) {
          diags_.error(loc(seed->INT()->getSymbol()), "a seed is an integer from 0 to 2^64 - 1");
        }
      } else if (auto* tolerance = dynamic_cast<DplParser::TestToleranceItemContext*>(item)) {
        std::string text = tolerance->number->getText();
        double value = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(value) || value <= 0) {
          diags_.error(loc(tolerance->number), "a tolerance is a positive number");
        }
        test.tolerance = value;
      } else if (auto* dims = dynamic_cast<DplParser::TestDimsItemContext*>(item)) {
        read_test_dims(dims, test);
      } else {
        test.numbers_differ = true;
      }
    }
    SourceLoc end = loc(context->getStop());
    if (given.count("input") == 0) {
      diags_.error(end, "test '" + test.name + "' needs 'input \"before.relax\";'");
      ok = false;
    }
    if (given.count("expect") == 0) {
      diags_.error(end, "test '" + test.name + "' needs 'expect \"after.relax\";' or 'expect unchanged;'");
      ok = false;
    }
    if (test.target.empty()) {
      diags_.error(test.name_loc, "test '" + test.name + "' needs 'pass NAME;' or 'pipeline NAME;' (or write it " +
                                      "inside the pass block it tests)");
      ok = false;
    }
    if (!ok) return std::nullopt;
    return test;
  }

  // `dims b = 2, s = 16;`: each symbol once, each value a positive extent the interpreter can allocate.
  void read_test_dims(DplParser::TestDimsItemContext* item, RuleTest& test) {
    std::map<std::string, SourceLoc> first;
    for (DplParser::TestDimContext* dim : item->testDim()) {
      const std::string name = dim->ident()->getText();
      const SourceLoc name_loc = loc(dim->ident());
      if (auto seen = first.find(name); seen != first.end()) {
        Diagnostic& diag = diags_.error(name_loc, "dimension '" + name + "' is given twice");
        DiagnosticEngine::add_note(diag, seen->second, "first given here");
        continue;
      }
      first.emplace(name, name_loc);
      const std::string digits = dim->INT()->getText();
      int64_t value = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (error != std::errc() || end != digits.data() + digits.size() || value < 1 || value > kMaxTestDim) {
        diags_.error(loc(dim->INT()->getSymbol()),
                     "a dimension's value is an integer from 1 to " + std::to_string(kMaxTestDim));
        continue;
      }
      test.dims.emplace(name, value);
    }
  }

  std::optional<Rule> build_rule(DplParser::RuleDeclContext* context) {
    Rule rule;
    rule.name = context->ident()->getText();
    rule.name_loc = loc(context->ident());
    rule.options = build_options(context->ruleOption());
    rule.lhs = pattern(context->lhs, 0);
    if (context->guard != nullptr) {
      rule.guard = guard_expression(context->guard, 0);
      if (rule.guard == nullptr) return std::nullopt;
    }
    if (!build_lets(context->letBinding(), rule)) return std::nullopt;
    rule.rhs = expression(context->rhs, 0);
    if (rule.lhs == nullptr || rule.rhs == nullptr) return std::nullopt;
    return rule;
  }

  // `rule NAME [options] { root; ...; [where guard;] => let ...; root => value; ... }`.
  std::optional<Rule> build_multi_rule(DplParser::MultiRuleDeclContext* context) {
    Rule rule;
    rule.kind = Rule::Kind::MultiRoot;
    rule.name = context->ident()->getText();
    rule.name_loc = loc(context->ident());
    rule.options = build_options(context->ruleOption());
    bool ok = true;
    for (DplParser::RootDeclContext* root : context->rootDecl()) {
      RootDecl decl;
      decl.name = root->ident()->getText();
      decl.name_loc = loc(root->ident());
      decl.group = root->group != nullptr;
      if (!check_variable_name(decl.name, decl.name_loc)) return std::nullopt;
      decl.pattern = pattern(root->pattern, 0);
      if (decl.pattern == nullptr) ok = false;
      if (root->guard != nullptr) {
        decl.guard = guard_expression(root->guard, 0);
        if (decl.guard == nullptr) ok = false;
      }
      rule.roots.push_back(std::move(decl));
    }
    if (context->guard != nullptr) {
      rule.guard = guard_expression(context->guard, 0);
      if (rule.guard == nullptr) ok = false;
    }
    if (!build_lets(context->letBinding(), rule)) return std::nullopt;
    for (DplParser::RootRewriteContext* rewrite : context->rootRewrite()) {
      ExprPtr value = expression(rewrite->value, 0);
      if (value == nullptr) {
        ok = false;
        continue;
      }
      rule.rewrites.push_back(RootRewrite{rewrite->ident()->getText(), loc(rewrite->ident()), std::move(value)});
    }
    if (!ok) return std::nullopt;
    return rule;
  }

  // `priority N` and `once`, each at most once (a repeated option is reported and the later one ignored).
  RuleOptions build_options(const std::vector<DplParser::RuleOptionContext*>& written) {
    RuleOptions options;
    SourceLoc once_loc;
    for (DplParser::RuleOptionContext* option : written) {
      if (auto* priority = dynamic_cast<DplParser::PriorityOptionContext*>(option)) {
        if (options.priority_loc.line != 0) {
          Diagnostic& diag = diags_.error(loc(option), "'priority' is given twice");
          DiagnosticEngine::add_note(diag, options.priority_loc, "first given here");
          continue;
        }
        std::string digits = priority->INT()->getText();
        int value = 0;
        auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (error != std::errc() || end != digits.data() + digits.size()) {
          constexpr int kMax = std::numeric_limits<int>::max();
          diags_.error(loc(priority->INT()->getSymbol()), "a priority is an integer from -" + std::to_string(kMax) +
                                                              " to " + std::to_string(kMax));
          continue;
        }
        options.priority = priority->negative != nullptr ? -value : value;
        options.priority_loc = loc(option);
      } else if (options.once) {
        Diagnostic& diag = diags_.error(loc(option), "'once' is given twice");
        DiagnosticEngine::add_note(diag, once_loc, "first given here");
      } else {
        options.once = true;
        once_loc = loc(option);
      }
    }
    return options;
  }

  // `partition "composite.name" [options]: pattern [where guard];`: a rule named by its composite name.
  std::optional<Rule> build_partition(DplParser::PartitionDeclContext* context) {
    Rule rule;
    rule.kind = Rule::Kind::Partition;
    rule.name = unquote(context->name);
    rule.name_loc = loc(context->name);
    rule.options = build_options(context->ruleOption());
    rule.lhs = pattern(context->pattern, 0);
    if (rule.lhs == nullptr) return std::nullopt;
    if (context->guard != nullptr) {
      rule.guard = guard_expression(context->guard, 0);
      if (rule.guard == nullptr) return std::nullopt;
    }
    return rule;
  }

  PipelineDecl build_pipeline(DplParser::PipelineDeclContext* context) {
    std::vector<DplParser::IdentContext*> names = context->ident();
    PipelineDecl pipeline;
    pipeline.name = names[0]->getText();
    pipeline.name_loc = loc(names[0]);
    if (context->description != nullptr) pipeline.description = unquote(context->description);
    for (size_t i = 1; i < names.size(); ++i) {
      pipeline.passes.push_back(names[i]->getText());
      pipeline.pass_locs.push_back(loc(names[i]));
    }
    return pipeline;
  }

  // `let name = value;` bindings before a right-hand side, in order; false after reporting an error.
  bool build_lets(const std::vector<DplParser::LetBindingContext*>& lets, Rule& rule) {
    for (DplParser::LetBindingContext* let : lets) {
      std::string name = let->ident()->getText();
      if (!check_variable_name(name, loc(let->ident()))) return false;
      ExprPtr value = expression(let->value, 0);
      if (value == nullptr) return false;
      rule.lets.push_back(LetBinding{name, loc(let->ident()), std::move(value)});
    }
    return true;
  }

  // --- patterns ---

  // A pattern or expression tree node at `where`.
  template <typename Tree>
  static std::unique_ptr<Tree> make(SourceLoc where, decltype(Tree::node) node) {
    auto tree = std::make_unique<Tree>();
    tree->loc = where;
    tree->node = std::move(node);
    return tree;
  }

  // Reports a `what` nested deeper than kMaxNesting (the stages after parsing recurse once per level).
  bool too_deep(antlr4::ParserRuleContext* context, int depth, const char* what) {
    if (depth <= kMaxNesting) return false;
    diags_.error(loc(context), std::string(what) + " nested too deeply");
    return true;
  }

  PatternPtr pattern(DplParser::ExprContext* context, int depth) {
    if (too_deep(context, depth, "pattern")) return nullptr;
    if (is_rest(context)) {
      report_misplaced_rest(context);
      return nullptr;
    }
    if (auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context)) {
      return primary_pattern(primary->primary(), depth);
    }
    if (auto* bind = dynamic_cast<DplParser::BindExprContext*>(context)) {
      std::string name = bind->ident()->getText();
      if (!check_variable_name(name, loc(bind->ident()))) return nullptr;
      PatternPtr inner = pattern(bind->expr(), depth + 1);
      if (inner == nullptr) return nullptr;
      return make<Pattern>(loc(context), BindPattern{name, loc(bind->ident()), std::move(inner)});
    }
    if (auto* typed = dynamic_cast<DplParser::TypedExprContext*>(context)) return typed_pattern(typed, depth);
    if (auto* alt = dynamic_cast<DplParser::AltExprContext*>(context)) {
      AltPattern alternatives;
      for (DplParser::ExprContext* side : alt->expr()) {
        PatternPtr part = pattern(side, depth + 1);
        if (part == nullptr) return nullptr;
        // `a | b | c` parses as `(a | b) | c`: keep one flat list.
        if (auto* nested = std::get_if<AltPattern>(&part->node);
            nested != nullptr && dynamic_cast<DplParser::AltExprContext*>(side) != nullptr) {
          for (PatternPtr& p : nested->alternatives) alternatives.alternatives.push_back(std::move(p));
        } else {
          alternatives.alternatives.push_back(std::move(part));
        }
      }
      return make<Pattern>(loc(context), std::move(alternatives));
    }
    if (auto* call = dynamic_cast<DplParser::CallExprContext*>(context)) return call_pattern(call, depth);
    if (auto* index = dynamic_cast<DplParser::IndexExprContext*>(context)) {
      if (auto* name = as_name(index->expr(0)); name != nullptr && name->getText() == "Tensor") {
        return type_pattern(index);
      }
      return item_pattern(index, depth);
    }
    if (std::optional<BinarySugar> binary = binary_sugar(context)) {
      CallPattern call;
      call.ops.push_back(OpName{binary->op_name, binary->op_loc, 0});
      for (DplParser::ExprContext* side : binary->operands) {
        PatternPtr operand = pattern(side, depth + 1);
        if (operand == nullptr) return nullptr;
        call.operands.push_back(std::move(operand));
      }
      return make<Pattern>(loc(context), std::move(call));
    }
    if (auto* member = dynamic_cast<DplParser::MemberExprContext*>(context)) {
      diags_.error(loc(member),
                   "'" + member->getText() + "' is an op; a pattern calls it: " + member->getText() + "(...)");
      return nullptr;
    }
    diags_.error(loc(context), "expected a pattern");
    return nullptr;
  }

  // `...` or `xs...` (or a malformed `p...`): what may end the operands of a call or the fields of a tuple.
  static bool is_rest(DplParser::ExprContext* context) {
    auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context);
    return dynamic_cast<DplParser::SpreadExprContext*>(context) != nullptr ||
           (primary != nullptr && dynamic_cast<DplParser::RestPrimaryContext*>(primary->primary()) != nullptr);
  }

  void report_misplaced_rest(DplParser::ExprContext* context) {
    diags_.error(loc(context), "'" + context->getText() +
                                   "' stands for the remaining operands; it can only be the last operand of a call "
                                   "or the last field of a tuple");
  }

  // The operands (fields) `f(a, b, xs...)` lists: patterns, then a rest at the end; false after an error.
  bool operand_patterns(const std::vector<DplParser::ExprContext*>& written, std::vector<PatternPtr>& operands,
                        std::optional<RestPattern>& rest, int depth) {
    for (size_t i = 0; i < written.size(); ++i) {
      DplParser::ExprContext* operand = written[i];
      if (!is_rest(operand)) {
        PatternPtr pattern = this->pattern(operand, depth + 1);
        if (pattern == nullptr) return false;
        operands.push_back(std::move(pattern));
        continue;
      }
      if (i + 1 != written.size()) {
        report_misplaced_rest(operand);
        return false;
      }
      rest = RestPattern{{}, loc(operand)};
      if (auto* spread = dynamic_cast<DplParser::SpreadExprContext*>(operand)) {
        auto* name = as_name(spread->expr());
        if (name == nullptr) {
          diags_.error(loc(spread->expr()), "'...' follows a name that binds the remaining operands (xs...), or "
                                            "stands alone (...)");
          return false;
        }
        rest->name = name->getText();
        if (!check_variable_name(rest->name, loc(spread->expr()))) return false;
      }
    }
    return true;
  }

  // `dominates(parent, path, child)`: the path is an op, an op class or alternatives of them.
  PatternPtr dominator_pattern(DplParser::CallExprContext* context, int depth) {
    static const char* kForm = "dominates(...) takes a parent pattern, a path (an op class such as elementwise, or "
                               "ops separated by '|') and a child pattern: dominates(nn.conv2d(x, w), elementwise, "
                               "add(_, _))";
    std::vector<DplParser::ExprContext*> args;
    if (DplParser::ArgumentsContext* arguments = context->arguments()) {
      for (DplParser::ArgumentContext* argument : arguments->argument()) {
        auto* positional = dynamic_cast<DplParser::PositionalArgumentContext*>(argument);
        if (positional == nullptr) {
          diags_.error(loc(argument), kForm);
          return nullptr;
        }
        args.push_back(positional->expr());
      }
    }
    if (args.size() != 3) {
      diags_.error(loc(context), kForm);
      return nullptr;
    }
    DominatorPattern dominator;
    DplParser::ExprContext* path = args[1];
    if (auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(path)) {
      if (auto* paren = dynamic_cast<DplParser::ParenPrimaryContext*>(primary->primary())) path = paren->expr();
    }
    std::vector<DplParser::ExprContext*> names;
    collect_alternatives(path, names);
    for (DplParser::ExprContext* name : names) {
      std::optional<std::string> text = dotted_name(name);
      if (!text) {
        diags_.error(loc(name), "a dominator path is an op class (elementwise, broadcast, injective, reduction, "
                                "opaque) or an op name, alternatives separated by '|'");
        return nullptr;
      }
      dominator.path.push_back(OpName{*text, loc(name), 0});
    }
    dominator.parent = pattern(args[0], depth + 1);
    if (dominator.parent == nullptr) return nullptr;
    dominator.child = pattern(args[2], depth + 1);
    if (dominator.child == nullptr) return nullptr;
    return make<Pattern>(loc(context), std::move(dominator));
  }

  // `Tensor[(n, 4), float32]`, `Tensor[(_, _)]`, `Tensor[float16]`, `Tensor[_, float16]`.
  PatternPtr type_pattern(DplParser::IndexExprContext* context) {
    static const char* kForm =
        "a type pattern is Tensor[shape], Tensor[shape, dtype] or Tensor[dtype], where "
        "shape is (d, ...) with each d an integer, a name, _ or arithmetic such as b * n";
    std::vector<DplParser::ExprContext*> parts = context->expr();
    parts.erase(parts.begin());
    TypePattern type;
    for (size_t i = 0; i < parts.size(); ++i) {
      DplParser::ExprContext* part = parts[i];
      auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(part);
      auto* tuple = primary ? dynamic_cast<DplParser::TuplePrimaryContext*>(primary->primary()) : nullptr;
      auto* paren = primary ? dynamic_cast<DplParser::ParenPrimaryContext*>(primary->primary()) : nullptr;
      auto* name = as_name(part);
      bool last = i + 1 == parts.size();
      if (i == 0 && (tuple != nullptr || paren != nullptr || (name != nullptr && name->getText() == "_"))) {
        if (name != nullptr) continue;  // `_`: any shape
        std::vector<DplParser::ExprContext*> dims = tuple != nullptr ? tuple->expr() : std::vector{paren->expr()};
        type.shape.emplace();
        for (DplParser::ExprContext* dim : dims) {
          std::optional<DimPattern> parsed = dim_pattern(dim);
          if (!parsed) return nullptr;
          type.shape->push_back(*parsed);
        }
      } else if (last && !type.dtype) {
        type.dtype = dtype_argument(part);
        if (!type.dtype) return nullptr;
      } else {
        diags_.error(loc(part), kForm);
        return nullptr;
      }
    }
    if (parts.empty()) {
      diags_.error(loc(context), kForm);
      return nullptr;
    }
    return make<Pattern>(loc(context), std::move(type));
  }

  // `reshape(x, _): Tensor[(b * n, k)]`, `r: nn.relu(c): Tensor[...]`: a call pattern and the type of its result.
  PatternPtr typed_pattern(DplParser::TypedExprContext* context, int depth) {
    antlr4::Token* colon = parser_tokens_->get(context->expr(0)->getStop()->getTokenIndex() + 1);
    auto* index = dynamic_cast<DplParser::IndexExprContext*>(context->expr(1));
    auto* tensor = index != nullptr ? as_name(index->expr(0)) : nullptr;
    if (tensor == nullptr || tensor->getText() != "Tensor") {
      diags_.error(loc(context->expr(1)), "after a call pattern, ':' is followed by its result's type, Tensor[...]; "
                                          "a name before ':' binds what follows");
      return nullptr;
    }
    PatternPtr inner = pattern(context->expr(0), depth + 1);
    PatternPtr type = inner != nullptr ? type_pattern(index) : nullptr;
    if (type == nullptr) return nullptr;
    CallPattern* call = call_through_bindings(*inner);
    if (call == nullptr || call->optional || call->result_type) {
      diags_.error(loc(colon), call == nullptr ? "a result type follows an op call pattern; constrain the type of "
                                                 "other patterns with a type pattern or a guard"
                               : call->optional ? "an optional op (op?(p)) has no result type of its own; give the "
                                                  "type to its operand or use a guard"
                                                : "the call pattern has a result type already");
      return nullptr;
    }
    call->result_type = std::move(std::get<TypePattern>(type->node));
    return inner;
  }

  // `t[0]` or `t[_]`.
  PatternPtr item_pattern(DplParser::IndexExprContext* context, int depth) {
    std::vector<DplParser::ExprContext*> parts = context->expr();
    std::optional<int64_t> index;
    bool any = parts.size() == 2 && as_name(parts[1]) != nullptr && as_name(parts[1])->getText() == "_";
    if (parts.size() == 2 && !any) index = tuple_index(parts[1]);
    if (parts.size() != 2 || (!any && !index)) {
      diags_.error(loc(context), "a tuple item pattern is t[i] with a non-negative integer i, or t[_]");
      return nullptr;
    }
    PatternPtr tuple = pattern(parts[0], depth + 1);
    if (tuple == nullptr) return nullptr;
    return make<Pattern>(loc(context), ItemPattern{std::move(tuple), index});
  }

  // A non-negative integer literal, without reporting anything.
  static std::optional<int64_t> tuple_index(DplParser::ExprContext* context) {
    auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context);
    auto* integer = primary ? dynamic_cast<DplParser::IntPrimaryContext*>(primary->primary()) : nullptr;
    if (integer == nullptr) return std::nullopt;
    std::string text = integer->getText();
    int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
  }

  std::optional<DimPattern> dim_pattern(DplParser::ExprContext* context) {
    DimPattern dim;
    dim.loc = loc(context);
    if (auto* name = as_name(context)) {
      dim.name = name->getText();
      if (dim.name == "_") return dim;
      if (!check_variable_name(dim.name, dim.loc)) return std::nullopt;
      dim.kind = DimPattern::Kind::Var;
      return dim;
    }
    auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context);
    if (primary != nullptr && dynamic_cast<DplParser::IntPrimaryContext*>(primary->primary()) != nullptr) {
      std::optional<AttrValue> value = literal(context);
      if (!value) return std::nullopt;
      dim.kind = DimPattern::Kind::Fixed;
      dim.extent = std::get<int64_t>(*value);
      return dim;
    }
    ExprPtr written = guard_expression(context, 0);
    if (written == nullptr) return std::nullopt;
    bool names_a_dimension = false;
    if (!is_dimension_syntax(*written, names_a_dimension)) {
      diags_.error(dim.loc, "a dimension is an integer, a name, _, or '+ - *' over integers and names (b * n)");
      return std::nullopt;
    }
    if (!names_a_dimension) {
      std::optional<int64_t> extent = evaluate_dimension(*written, [](const std::string&) { return std::nullopt; });
      if (!extent || *extent < 0) {
        diags_.error(dim.loc, "the dimension '" + to_string(*written) + "' is not an extent (an integer >= 0)");
        return std::nullopt;
      }
      dim.kind = DimPattern::Kind::Fixed;
      dim.extent = *extent;
      return dim;
    }
    dim.kind = DimPattern::Kind::Expr;
    dim.name = "dim#" + std::to_string(++dimension_expressions_);
    ExprPtr bound = make<Expr>(dim.loc, VarExpr{dim.name});
    dim.check = std::shared_ptr<Expr>(
        make<Expr>(dim.loc, BinaryExpr{BinaryOp::Equal, dim.loc, std::move(bound), std::move(written)}).release());
    return dim;
  }

  // Written as names, integer literals and `+ - *` over them (`names_a_dimension`: at least one name); what the
  // names are is sema's to check (its is_dimension_arithmetic reads the typed expression).
  static bool is_dimension_syntax(const Expr& expr, bool& names_a_dimension) {
    if (const auto* binary = std::get_if<BinaryExpr>(&expr.node)) {
      return (binary->op == BinaryOp::Add || binary->op == BinaryOp::Subtract || binary->op == BinaryOp::Multiply) &&
             is_dimension_syntax(*binary->lhs, names_a_dimension) &&
             is_dimension_syntax(*binary->rhs, names_a_dimension);
    }
    if (const auto* literal = std::get_if<LiteralExpr>(&expr.node)) {
      return std::holds_alternative<int64_t>(literal->value);
    }
    names_a_dimension = names_a_dimension || std::holds_alternative<VarExpr>(expr.node);
    return std::holds_alternative<VarExpr>(expr.node);
  }

  PatternPtr primary_pattern(DplParser::PrimaryContext* context, int depth) {
    if (auto* name = dynamic_cast<DplParser::NamePrimaryContext*>(context)) {
      std::string text = name->getText();
      if (text == "_") return make<Pattern>(loc(context), WildcardPattern{});
      if (text == "const") return make<Pattern>(loc(context), ConstPattern{});
      return make<Pattern>(loc(context), VarPattern{text});
    }
    if (auto* paren = dynamic_cast<DplParser::ParenPrimaryContext*>(context)) {
      if (!is_rest(paren->expr())) return pattern(paren->expr(), depth + 1);
      TuplePattern fields;  // `(...)`, `(xs...)`: a tuple of any number of fields
      if (!operand_patterns({paren->expr()}, fields.fields, fields.rest, depth)) return nullptr;
      return make<Pattern>(loc(context), std::move(fields));
    }
    if (dynamic_cast<DplParser::IntPrimaryContext*>(context) != nullptr ||
        dynamic_cast<DplParser::FloatPrimaryContext*>(context) != nullptr) {
      diags_.error(loc(context), "a number is not a pattern; write const(" + context->getText() +
                                     ") to match a constant with that value");
      return nullptr;
    }
    if (auto* tuple = dynamic_cast<DplParser::TuplePrimaryContext*>(context)) {
      TuplePattern fields;
      if (!operand_patterns(tuple->expr(), fields.fields, fields.rest, depth)) return nullptr;
      return make<Pattern>(loc(context), std::move(fields));
    }
    diags_.error(loc(context), "expected a pattern");
    return nullptr;
  }

  PatternPtr call_pattern(DplParser::CallExprContext* context, int depth) {
    DplParser::ExprContext* callee = context->expr();
    if (auto* name = as_name(callee); name != nullptr && name->getText() == "dominates") {
      return dominator_pattern(context, depth);
    }
    CallPattern call;
    if (auto* optional = dynamic_cast<DplParser::OptionalExprContext*>(callee)) {
      call.optional = true;
      callee = optional->expr();
    }
    if (auto* composite = dynamic_cast<DplParser::CallExprContext*>(callee);
        composite != nullptr && as_name(composite->expr()) != nullptr &&
        as_name(composite->expr())->getText() == "composite") {
      if (call.optional) {
        diags_.error(loc(callee), "a composite call cannot be optional ('?')");
        return nullptr;
      }
      call.composite = composite_name(composite);
      if (!call.composite) return nullptr;
    } else if (!callee_ops(callee, call)) {
      return nullptr;
    }
    if (call.ops.size() == 1 && call.ops[0].text == "composite") {
      diags_.error(loc(context), "composite(\"name\") names the function; the call's operands follow it: "
                                 "composite(\"name\")(x, y)");
      return nullptr;
    }

    if (call.ops.size() == 1 && call.op_var.empty() && !call.optional && call.ops[0].text == "const") {
      return const_pattern(context);
    }
    if (call.ops.size() == 1 && call.op_var.empty() && !call.optional && call.ops[0].text == "var") {
      return param_pattern(context);
    }
    if (DplParser::ArgumentsContext* arguments = context->arguments()) {
      bool seen_keyword = false;
      std::vector<DplParser::ExprContext*> operands;
      for (DplParser::ArgumentContext* argument : arguments->argument()) {
        if (auto* keyword = dynamic_cast<DplParser::KeywordArgumentContext*>(argument)) {
          if (call.composite) {
            diags_.error(loc(keyword), "a composite call takes operands only, no attributes");
            return nullptr;
          }
          seen_keyword = true;
          PatternAttr attr;
          attr.name = keyword->ident()->getText();
          attr.loc = loc(keyword->ident());
          attr.value_loc = loc(keyword->expr());
          if (is_literal_syntax(keyword->expr())) {
            attr.literal = literal(keyword->expr());
            if (!attr.literal) return nullptr;
          } else if (auto* name = as_name(keyword->expr())) {
            attr.capture = name->getText();
            if (!check_variable_name(attr.capture, attr.value_loc)) return nullptr;
          } else {
            diags_.error(attr.value_loc,
                         "an attribute pattern is a literal (axis=-1) or a name that captures the value (axis=a)");
            return nullptr;
          }
          call.attrs.push_back(std::move(attr));
        } else if (auto* copy = dynamic_cast<DplParser::AttrsArgumentContext*>(argument)) {
          diags_.error(loc(copy), "'**" + copy->ident()->getText() +
                                      "' copies a matched call's attributes into a call on the right-hand side; a "
                                      "pattern captures attributes one by one (strides=s)");
          return nullptr;
        } else {
          auto* positional = static_cast<DplParser::PositionalArgumentContext*>(argument);
          if (seen_keyword) {
            diags_.error(loc(positional), "operand after keyword attributes; operands come first");
            return nullptr;
          }
          operands.push_back(positional->expr());
        }
      }
      if (!operand_patterns(operands, call.operands, call.rest, depth)) return nullptr;
    }
    return make<Pattern>(loc(context), std::move(call));
  }

  // The name in `composite("ccompiler.add_sub_mul")`: one non-empty string.
  std::optional<std::string> composite_name(DplParser::CallExprContext* context) {
    DplParser::ArgumentsContext* arguments = context->arguments();
    std::vector<DplParser::ArgumentContext*> list;
    if (arguments != nullptr) list = arguments->argument();
    auto* positional = list.size() == 1 ? dynamic_cast<DplParser::PositionalArgumentContext*>(list[0]) : nullptr;
    auto* primary = positional ? dynamic_cast<DplParser::PrimaryExprContext*>(positional->expr()) : nullptr;
    auto* text = primary ? dynamic_cast<DplParser::StringPrimaryContext*>(primary->primary()) : nullptr;
    if (text == nullptr || unquote(text->getStart()).empty()) {
      diags_.error(loc(context), "composite(...) takes the function's Composite attribute as a non-empty string: "
                                 "composite(\"dnnl.conv2d_relu\")(x, w)");
      return std::nullopt;
    }
    return unquote(text->getStart());
  }

  // The callee of a call pattern: `add`, `nn.softmax`, `(add | multiply)` or `(op: add | multiply)`.
  bool callee_ops(DplParser::ExprContext* callee, CallPattern& call) {
    DplParser::ExprContext* ops = callee;
    if (auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(callee)) {
      if (auto* paren = dynamic_cast<DplParser::ParenPrimaryContext*>(primary->primary())) {
        ops = paren->expr();
        if (auto* bind = dynamic_cast<DplParser::BindExprContext*>(ops)) {
          call.op_var = bind->ident()->getText();
          call.op_var_loc = loc(bind->ident());
          if (!check_variable_name(call.op_var, call.op_var_loc)) return false;
          ops = bind->expr();
        }
      }
    }
    std::vector<DplParser::ExprContext*> names;
    collect_alternatives(ops, names);
    for (DplParser::ExprContext* name : names) {
      std::optional<std::string> text = dotted_name(name);
      if (!text) {
        diags_.error(loc(name), "expected an op name");
        return false;
      }
      call.ops.push_back(OpName{*text, loc(name), 0});
    }
    return true;
  }

  void collect_alternatives(DplParser::ExprContext* context, std::vector<DplParser::ExprContext*>& out) {
    if (auto* alt = dynamic_cast<DplParser::AltExprContext*>(context)) {
      for (DplParser::ExprContext* side : alt->expr()) collect_alternatives(side, out);
    } else {
      out.push_back(context);
    }
  }

  // The number a `const(...)` argument writes, or nullopt after a diagnostic; `integer` is set when it is written
  // as an integer.
  std::optional<double> const_number(DplParser::ExprContext* argument, bool& integer) {
    std::optional<AttrValue> value = literal(argument);
    if (!value) return std::nullopt;
    if (const auto* i = std::get_if<int64_t>(&*value)) {
      integer = true;
      return static_cast<double>(*i);
    }
    if (const auto* d = std::get_if<double>(&*value)) return *d;
    diags_.error(loc(argument), "const(...) takes a number");
    return std::nullopt;
  }

  PatternPtr const_pattern(DplParser::CallExprContext* context) {
    ConstPattern constant;
    std::vector<DplParser::ExprContext*> args;
    if (!const_arguments(context, args)) return nullptr;
    if (!args.empty()) {
      constant.value = const_number(args[0], constant.integer_value);
      if (!constant.value) return nullptr;
    }
    if (args.size() == 2) {
      constant.dtype = dtype_argument(args[1]);
      if (!constant.dtype) return nullptr;
    }
    return make<Pattern>(loc(context), constant);
  }

  // `var()` or `var("name")`.
  PatternPtr param_pattern(DplParser::CallExprContext* context) {
    ParamPattern param;
    DplParser::ArgumentsContext* arguments = context->arguments();
    if (arguments != nullptr) {
      std::vector<DplParser::ArgumentContext*> list = arguments->argument();
      auto* positional = dynamic_cast<DplParser::PositionalArgumentContext*>(list[0]);
      auto* primary = positional ? dynamic_cast<DplParser::PrimaryExprContext*>(positional->expr()) : nullptr;
      auto* text = primary ? dynamic_cast<DplParser::StringPrimaryContext*>(primary->primary()) : nullptr;
      if (list.size() != 1 || text == nullptr) {
        diags_.error(loc(arguments), "var(...) takes the parameter's name as a string: var(\"x\")");
        return nullptr;
      }
      param.name = unquote(text->getStart());
    }
    return make<Pattern>(loc(context), std::move(param));
  }

  // `const(value)` or `const(value, dtype)`: positional arguments only.
  bool const_arguments(DplParser::CallExprContext* context, std::vector<DplParser::ExprContext*>& args) {
    if (DplParser::ArgumentsContext* arguments = context->arguments()) {
      for (DplParser::ArgumentContext* argument : arguments->argument()) {
        auto* positional = dynamic_cast<DplParser::PositionalArgumentContext*>(argument);
        if (positional == nullptr) {
          diags_.error(loc(argument), "const(...) takes a value and an optional dtype: const(2.0, float16)");
          return false;
        }
        args.push_back(positional->expr());
      }
    }
    if (args.size() > 2) {
      diags_.error(loc(args[2]), "const(...) takes a value and an optional dtype: const(2.0, float16)");
      return false;
    }
    return true;
  }

  std::optional<DType> dtype_argument(DplParser::ExprContext* context) {
    std::string name;
    if (auto* ident = as_name(context)) {
      name = ident->getText();
    } else if (auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context);
               primary != nullptr && dynamic_cast<DplParser::StringPrimaryContext*>(primary->primary()) != nullptr) {
      name = unquote(primary->getStart());
    }
    std::optional<DType> dtype = parse_dtype(name);
    if (!dtype || *dtype == DType::Unknown) {
      diags_.error(loc(context), "expected a dtype such as float32, got '" + context->getText() + "'");
      return std::nullopt;
    }
    return dtype;
  }

  // --- expressions ---

  ExprPtr expression(DplParser::ExprContext* context, int depth) {
    if (too_deep(context, depth, "expression")) return nullptr;
    if (is_literal_syntax(context)) {
      std::optional<AttrValue> value = literal(context);
      if (!value) return nullptr;
      return make<Expr>(loc(context), LiteralExpr{std::move(*value)});
    }
    if (auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context)) {
      DplParser::PrimaryContext* inner = primary->primary();
      if (auto* name = dynamic_cast<DplParser::NamePrimaryContext*>(inner)) {
        std::string text = name->getText();
        if (text == "_" || text == "const") {
          diags_.error(loc(context), "'" + text + "' matches values; it cannot build one" +
                                         (text == "const" ? "; write const(1.0) for a new constant" : ""));
          return nullptr;
        }
        return make<Expr>(loc(context), VarExpr{text});
      }
      if (auto* paren = dynamic_cast<DplParser::ParenPrimaryContext*>(inner)) {
        if (!is_rest(paren->expr())) return expression(paren->expr(), depth + 1);
        TupleExpr fields;  // `(xs...)`: the tuple of a list's values
        ExprPtr spread = expression(paren->expr(), depth + 1);
        if (spread == nullptr) return nullptr;
        fields.fields.push_back(std::move(spread));
        return make<Expr>(loc(context), std::move(fields));
      }
      if (dynamic_cast<DplParser::RestPrimaryContext*>(inner) != nullptr) {
        diags_.error(loc(context), "'...' matches operands without naming them; to pass them on, bind them on the "
                                   "left (xs...) and spread them here (xs...)");
        return nullptr;
      }
    }
    if (auto* spread = dynamic_cast<DplParser::SpreadExprContext*>(context)) {
      auto* name = as_name(spread->expr());
      if (name == nullptr) {
        diags_.error(loc(context), "'...' spreads a list bound on the left: xs...");
        return nullptr;
      }
      return make<Expr>(loc(context), SpreadExpr{name->getText(), loc(name)});
    }
    if (auto* call = dynamic_cast<DplParser::CallExprContext*>(context)) return call_expression(call, depth);
    if (auto* index = dynamic_cast<DplParser::IndexExprContext*>(context)) {
      std::vector<DplParser::ExprContext*> parts = index->expr();
      std::optional<int64_t> position = parts.size() == 2 ? tuple_index(parts[1]) : std::nullopt;
      if (!position) {
        diags_.error(loc(context), "a tuple item is t[i] with a non-negative integer i");
        return nullptr;
      }
      ExprPtr tuple = expression(parts[0], depth + 1);
      if (tuple == nullptr) return nullptr;
      return make<Expr>(loc(context), ItemExpr{std::move(tuple), *position});
    }
    if (auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context)) {
      if (auto* tuple = dynamic_cast<DplParser::TuplePrimaryContext*>(primary->primary())) {
        TupleExpr fields;
        for (DplParser::ExprContext* field : tuple->expr()) {
          ExprPtr part = expression(field, depth + 1);
          if (part == nullptr) return nullptr;
          fields.fields.push_back(std::move(part));
        }
        return make<Expr>(loc(context), std::move(fields));
      }
    }
    if (std::optional<BinarySugar> binary = binary_sugar(context)) {
      CallExpr call;
      call.op = OpName{binary->op_name, binary->op_loc, 0};
      for (DplParser::ExprContext* side : binary->operands) {
        ExprPtr operand = expression(side, depth + 1);
        if (operand == nullptr) return nullptr;
        call.operands.push_back(std::move(operand));
      }
      return make<Expr>(loc(context), std::move(call));
    }
    if (dynamic_cast<DplParser::BindExprContext*>(context) != nullptr) {
      diags_.error(loc(context), "'name: ...' binds part of a match; it belongs on the left of '=>'");
      return nullptr;
    }
    if (dynamic_cast<DplParser::TypedExprContext*>(context) != nullptr) {
      diags_.error(loc(context), "'p: Tensor[...]' gives the type of a call pattern's result; it belongs on the left "
                                 "of '=>'");
      return nullptr;
    }
    if (dynamic_cast<DplParser::AltExprContext*>(context) != nullptr) {
      diags_.error(loc(context), "'|' separates alternative patterns; it belongs on the left of '=>'");
      return nullptr;
    }
    diags_.error(loc(context), "expected an expression");
    return nullptr;
  }

  ExprPtr call_expression(DplParser::CallExprContext* context, int depth) {
    std::optional<std::string> callee = dotted_name(context->expr());
    if (!callee) {
      diags_.error(loc(context->expr()), "expected an op name");
      return nullptr;
    }
    if (*callee == "const") {
      std::vector<DplParser::ExprContext*> args;
      if (!const_arguments(context, args)) return nullptr;
      if (args.empty()) {
        diags_.error(loc(context), "const(...) needs a value on the right-hand side: const(1.0)");
        return nullptr;
      }
      ConstExpr constant;
      if (!is_literal_syntax(args[0])) {  // `const(eps)`, `const(1.0 / c.value)`: computed when the rule fires
        constant.computed = guard_expression(args[0], depth + 1);
        if (constant.computed == nullptr) return nullptr;
      } else {
        bool integer = false;  // a right-hand side's constant takes its dtype from its type, not the literal
        std::optional<double> number = const_number(args[0], integer);
        if (!number) return nullptr;
        constant.value = *number;
      }
      if (args.size() == 2) {
        constant.dtype = dtype_argument(args[1]);
        if (!constant.dtype) return nullptr;
      }
      return make<Expr>(loc(context), std::move(constant));
    }
    CallExpr call;
    call.op = OpName{*callee, loc(context->expr()), 0};
    if (DplParser::ArgumentsContext* arguments = context->arguments()) {
      bool seen_keyword = false;
      for (DplParser::ArgumentContext* argument : arguments->argument()) {
        if (auto* keyword = dynamic_cast<DplParser::KeywordArgumentContext*>(argument)) {
          seen_keyword = true;
          ExprPtr value = guard_expression(keyword->expr(), depth + 1);  // attribute values compute like guards
          if (value == nullptr) return nullptr;
          call.attrs.push_back(ExprAttr{keyword->ident()->getText(), loc(keyword->ident()), std::move(value)});
        } else if (auto* copy = dynamic_cast<DplParser::AttrsArgumentContext*>(argument)) {
          seen_keyword = true;
          if (call.attrs_from) {
            diags_.error(loc(copy), "a call copies the attributes of one matched call; '**" + call.attrs_from->name +
                                        "' is given already");
            return nullptr;
          }
          call.attrs_from = AttrSource{copy->ident()->getText(), loc(copy->ident())};
        } else {
          auto* positional = static_cast<DplParser::PositionalArgumentContext*>(argument);
          if (seen_keyword) {
            diags_.error(loc(positional), "operand after keyword attributes; operands come first");
            return nullptr;
          }
          ExprPtr operand = expression(positional->expr(), depth + 1);
          if (operand == nullptr) return nullptr;
          call.operands.push_back(std::move(operand));
        }
      }
    }
    return make<Expr>(loc(context), std::move(call));
  }

  // --- guards and computed attribute values ---

  ExprPtr guard_expression(DplParser::ExprContext* context, int depth) {
    if (too_deep(context, depth, "expression")) return nullptr;
    if (is_literal_syntax(context)) {
      std::optional<AttrValue> value = literal(context);
      if (!value) return nullptr;
      return make<Expr>(loc(context), LiteralExpr{std::move(*value)});
    }
    if (auto* name = as_name(context)) {
      std::string text = name->getText();
      if (text == "_" || text == "const") {
        diags_.error(loc(context), "'" + text + "' cannot be used in an expression");
        return nullptr;
      }
      return make<Expr>(loc(context), VarExpr{text});
    }
    if (auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context)) {
      if (auto* paren = dynamic_cast<DplParser::ParenPrimaryContext*>(primary->primary())) {
        return guard_expression(paren->expr(), depth + 1);
      }
    }
    if (auto* member = dynamic_cast<DplParser::MemberExprContext*>(context)) {
      ExprPtr object = guard_expression(member->expr(), depth + 1);
      if (object == nullptr) return nullptr;
      return make<Expr>(loc(context), MemberExpr{std::move(object), member->ident()->getText(), loc(member->ident())});
    }
    if (auto* index = dynamic_cast<DplParser::IndexExprContext*>(context)) {
      std::vector<DplParser::ExprContext*> parts = index->expr();
      if (parts.size() != 2) {
        diags_.error(loc(context), "an index takes one position: x.shape[1]");
        return nullptr;
      }
      ExprPtr object = guard_expression(parts[0], depth + 1);
      ExprPtr position = object ? guard_expression(parts[1], depth + 1) : nullptr;
      if (position == nullptr) return nullptr;
      return make<Expr>(loc(context), IndexExpr{std::move(object), std::move(position)});
    }
    if (auto* unary = dynamic_cast<DplParser::UnaryExprContext*>(context)) {
      ExprPtr operand = guard_expression(unary->expr(), depth + 1);
      if (operand == nullptr) return nullptr;
      UnaryOp op = unary->op->getText() == "-" ? UnaryOp::Negate : UnaryOp::Not;
      return make<Expr>(loc(context), UnaryExpr{op, std::move(operand)});
    }
    std::vector<DplParser::ExprContext*> sides;
    if (auto* add = dynamic_cast<DplParser::AddExprContext*>(context)) sides = add->expr();
    if (auto* mul = dynamic_cast<DplParser::MulExprContext*>(context)) sides = mul->expr();
    if (auto* compare = dynamic_cast<DplParser::CompareExprContext*>(context)) sides = compare->expr();
    if (auto* conjunction = dynamic_cast<DplParser::AndExprContext*>(context)) sides = conjunction->expr();
    if (auto* disjunction = dynamic_cast<DplParser::OrExprContext*>(context)) sides = disjunction->expr();
    if (sides.size() == 2) {
      static const std::map<std::string, BinaryOp> ops = {
          {"+", BinaryOp::Add},           {"-", BinaryOp::Subtract},   {"*", BinaryOp::Multiply},
          {"/", BinaryOp::Divide},        {"==", BinaryOp::Equal},     {"!=", BinaryOp::NotEqual},
          {"<", BinaryOp::Less},          {"<=", BinaryOp::LessEqual}, {">", BinaryOp::Greater},
          {">=", BinaryOp::GreaterEqual}, {"&&", BinaryOp::And},       {"||", BinaryOp::Or}};
      // The operator is the token right after the left side.
      antlr4::Token* op_token = parser_tokens_->get(sides[0]->getStop()->getTokenIndex() + 1);
      auto op = ops.find(op_token->getText());
      ExprPtr lhs = guard_expression(sides[0], depth + 1);
      ExprPtr rhs = lhs ? guard_expression(sides[1], depth + 1) : nullptr;
      if (rhs == nullptr) return nullptr;
      if (op == ops.end()) {
        diags_.error(loc(op_token), "unexpected operator '" + op_token->getText() + "'");
        return nullptr;
      }
      return make<Expr>(loc(context), BinaryExpr{op->second, loc(op_token), std::move(lhs), std::move(rhs)});
    }
    if (auto* call = dynamic_cast<DplParser::CallExprContext*>(context)) {
      // Only an extern predicate may be called here; sema tells which names are.
      if (DplParser::AttrsArgumentContext* copy = attrs_argument(call)) {
        diags_.error(loc(copy), "'**" + copy->ident()->getText() + "' copies a matched call's attributes into a new "
                                "call on the right-hand side; a guard reads them by name (strides=s, then s)");
        return nullptr;
      }
      if (as_name(call->expr()) == nullptr || !only_positional(call)) {
        diags_.error(loc(context), kGuardCallsNoOps);
        return nullptr;
      }
      if (as_name(call->expr())->getText() == "split_indices") return builtin_call(call, depth);
      return call_expression(call, depth);
    }
    diags_.error(loc(context), "expected a guard expression");
    return nullptr;
  }

  // `split_indices(ws.shape[1])`: a builtin of computed values, whose operands are computed values too.
  ExprPtr builtin_call(DplParser::CallExprContext* context, int depth) {
    CallExpr call;
    call.op = OpName{context->expr()->getText(), loc(context->expr()), 0};
    if (DplParser::ArgumentsContext* arguments = context->arguments()) {
      for (DplParser::ArgumentContext* argument : arguments->argument()) {
        auto* positional = static_cast<DplParser::PositionalArgumentContext*>(argument);
        ExprPtr operand = guard_expression(positional->expr(), depth + 1);
        if (operand == nullptr) return nullptr;
        call.operands.push_back(std::move(operand));
      }
    }
    return make<Expr>(loc(context), std::move(call));
  }

  // --- shared helpers ---

  // The call's `**name` argument, if it has one.
  static DplParser::AttrsArgumentContext* attrs_argument(DplParser::CallExprContext* call) {
    if (call->arguments() == nullptr) return nullptr;
    for (DplParser::ArgumentContext* argument : call->arguments()->argument()) {
      if (auto* copy = dynamic_cast<DplParser::AttrsArgumentContext*>(argument)) return copy;
    }
    return nullptr;
  }

  static bool only_positional(DplParser::CallExprContext* call) {
    if (call->arguments() == nullptr) return true;
    for (DplParser::ArgumentContext* argument : call->arguments()->argument()) {
      if (dynamic_cast<DplParser::PositionalArgumentContext*>(argument) == nullptr) return false;
    }
    return true;
  }

  // Infix arithmetic is sugar for the elementwise ops: `a + b` is add(a, b), `-a` is negative(a).
  struct BinarySugar {
    std::string op_name;
    SourceLoc op_loc;
    std::vector<DplParser::ExprContext*> operands;
  };
  std::optional<BinarySugar> binary_sugar(DplParser::ExprContext* context) {
    antlr4::Token* op = nullptr;
    std::vector<DplParser::ExprContext*> operands;
    if (auto* add = dynamic_cast<DplParser::AddExprContext*>(context)) {
      op = add->op;
      operands = add->expr();
    } else if (auto* mul = dynamic_cast<DplParser::MulExprContext*>(context)) {
      op = mul->op;
      operands = mul->expr();
    } else if (auto* unary = dynamic_cast<DplParser::UnaryExprContext*>(context);
               unary != nullptr && unary->op->getText() == "-") {
      op = unary->op;
      operands = {unary->expr()};
    } else {
      return std::nullopt;
    }
    std::string symbol = op->getText();
    std::string name = operands.size() == 1 ? "negative"
                       : symbol == "+"      ? "add"
                       : symbol == "-"      ? "subtract"
                       : symbol == "*"      ? "multiply"
                                            : "divide";
    return BinarySugar{name, loc(op), std::move(operands)};
  }

  static DplParser::IdentContext* as_name(DplParser::ExprContext* context) {
    auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context);
    if (primary == nullptr) return nullptr;
    auto* name = dynamic_cast<DplParser::NamePrimaryContext*>(primary->primary());
    return name != nullptr ? name->ident() : nullptr;
  }

  // `add`, `nn.softmax`, `R.nn.softmax`: a name or a chain of member accesses on names.
  std::optional<std::string> dotted_name(DplParser::ExprContext* context) {
    if (auto* name = as_name(context)) return name->getText();
    if (auto* member = dynamic_cast<DplParser::MemberExprContext*>(context)) {
      std::optional<std::string> prefix = dotted_name(member->expr());
      if (prefix) return *prefix + "." + member->ident()->getText();
    }
    return std::nullopt;
  }

  bool check_variable_name(const std::string& name, SourceLoc where) {
    if (name == "_" || name == "const") {
      diags_.error(where, "'" + name + "' cannot be used as a variable name");
      return false;
    }
    return true;
  }

  // Numbers (possibly negated), strings, True/False/None and lists of integers.
  static bool is_literal_syntax(DplParser::ExprContext* context) {
    if (auto* unary = dynamic_cast<DplParser::UnaryExprContext*>(context)) {
      auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(unary->expr());
      return unary->op->getText() == "-" && primary != nullptr &&
             (dynamic_cast<DplParser::IntPrimaryContext*>(primary->primary()) != nullptr ||
              dynamic_cast<DplParser::FloatPrimaryContext*>(primary->primary()) != nullptr);
    }
    auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context);
    if (primary == nullptr) return false;
    DplParser::PrimaryContext* inner = primary->primary();
    if (auto* name = dynamic_cast<DplParser::NamePrimaryContext*>(inner)) {
      std::string text = name->getText();
      return text == "True" || text == "False" || text == "true" || text == "false" || text == "None";
    }
    return dynamic_cast<DplParser::IntPrimaryContext*>(inner) != nullptr ||
           dynamic_cast<DplParser::FloatPrimaryContext*>(inner) != nullptr ||
           dynamic_cast<DplParser::StringPrimaryContext*>(inner) != nullptr ||
           dynamic_cast<DplParser::ListPrimaryContext*>(inner) != nullptr;
  }

  std::optional<AttrValue> literal(DplParser::ExprContext* context) {
    if (auto* unary = dynamic_cast<DplParser::UnaryExprContext*>(context)) {
      std::optional<AttrValue> value;
      if (unary->op->getText() == "-" && is_literal_syntax(context)) value = literal(unary->expr());
      if (value) {
        if (auto* i = std::get_if<int64_t>(&*value)) *i = -*i;
        if (auto* d = std::get_if<double>(&*value)) *d = -*d;
      }
      return value;
    }
    auto* primary = dynamic_cast<DplParser::PrimaryExprContext*>(context);
    DplParser::PrimaryContext* inner = primary != nullptr ? primary->primary() : nullptr;
    if (auto* integer = dynamic_cast<DplParser::IntPrimaryContext*>(inner)) {
      std::string text = integer->getText();
      int64_t value = 0;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size()) {
        diags_.error(loc(context), "integer literal out of range");
        return std::nullopt;
      }
      return AttrValue(value);
    }
    if (auto* number = dynamic_cast<DplParser::FloatPrimaryContext*>(inner)) {
      std::string text = number->getText();
      char* end = nullptr;
      double value = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size() || value == HUGE_VAL) {
        diags_.error(loc(context), "number literal out of range");
        return std::nullopt;
      }
      return AttrValue(value);
    }
    if (auto* string = dynamic_cast<DplParser::StringPrimaryContext*>(inner)) {
      return AttrValue(unquote(string->getStart()));
    }
    if (auto* name = dynamic_cast<DplParser::NamePrimaryContext*>(inner)) {
      std::string text = name->getText();
      if (text == "True" || text == "true") return AttrValue(true);
      if (text == "False" || text == "false") return AttrValue(false);
      if (text == "None") return AttrValue();
    }
    if (auto* list = dynamic_cast<DplParser::ListPrimaryContext*>(inner)) {
      std::vector<int64_t> values;
      for (DplParser::ExprContext* element : list->expr()) {
        std::optional<AttrValue> value = is_literal_syntax(element) ? literal(element) : std::nullopt;
        const int64_t* integer = value ? std::get_if<int64_t>(&*value) : nullptr;
        if (integer == nullptr) {
          if (!value)
            diags_.error(loc(element), "list attributes hold integer literals");
          else
            diags_.error(loc(element), "list attributes hold integers, not '" + element->getText() + "'");
          return std::nullopt;
        }
        values.push_back(*integer);
      }
      return AttrValue(std::move(values));
    }
    diags_.error(loc(context), "expected a literal value");
    return std::nullopt;
  }

  static std::string unquote(const antlr4::Token* token) {
    std::string text = token->getText();
    std::string out;
    for (size_t i = 1; i + 1 < text.size(); ++i) {
      char c = text[i];
      if (c == '\\' && i + 2 < text.size()) {
        char next = text[++i];
        out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
      } else {
        out += c;
      }
    }
    return out;
  }

  const SourceFile& source_;
  DiagnosticEngine& diags_;
  antlr4::TokenStream* parser_tokens_;
  std::vector<PatternMacro> pass_macros_;  // declared inside pass blocks
  std::vector<RuleTest> tests_;            // in file order, inside pass blocks or not
  int dimension_expressions_ = 0;          // numbers their hidden variables (DimPattern::Kind::Expr)
};

// The length of the well-formed UTF-8 sequence starting at `text[at]` (RFC 3629: no overlong forms, surrogates
// or code points past U+10FFFF), or 0.
size_t utf8_sequence_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
  const unsigned lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned low = 0x80;
  unsigned high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return length;
}

// ANTLR's input stream throws on malformed UTF-8; such a file is rejected first, at its first bad byte.
bool check_utf8(const SourceFile& source, DiagnosticEngine& diags) {
  const std::string& text = source.text();
  uint32_t line = 1;
  size_t line_start = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t length = utf8_sequence_length(text, at);
    if (length == 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto bad = static_cast<unsigned char>(text[at]);
      diags.error(SourceLoc{&source, line, static_cast<uint32_t>(at - line_start + 1), 1},
                  std::string("invalid UTF-8 (byte 0x") + kHex[bad >> 4] + kHex[bad & 0xF] +
                      "); rule files are UTF-8 text");
      return false;
    }
    if (text[at] == '\n') {
      ++line;
      line_start = at + 1;
    }
    at += length;
  }
  return true;
}

}  // namespace

std::unique_ptr<AstFile> parse(const SourceFile& source, DiagnosticEngine& diags) {
  size_t errors_before = diags.error_count();
  if (!check_utf8(source, diags)) return nullptr;
  antlr4::ANTLRInputStream input(source.text());
  DplLexer lexer(&input);
  lexer.removeErrorListeners();  // the grammar's catch-all tokens mean the lexer never reports errors itself
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  if (!check_tokens(source, tokens.getTokens(), diags)) return nullptr;

  DplParser parser(&tokens);
  auto strategy = std::make_shared<DplErrorStrategy>();
  parser.setErrorHandler(strategy);
  DiagnosticListener listener(source, diags, *strategy);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  DplParser::FileContext* tree = nullptr;
  try {
    tree = parser.file();
  } catch (const std::exception& e) {  // ANTLR reports through exceptions in a few internal situations
    diags.error(SourceLoc{&source, 1, 1, 1}, std::string("the parser stopped: ") + e.what());
    return nullptr;
  }
  if (diags.error_count() > errors_before) return nullptr;
  return AstBuilder(source, diags, tokens).build(tree);
}

}  // namespace dpl::compiler
