// The TVMScript Relax reader: a recursive-descent parser that builds and type-checks dpl graphs as it reads.
//
// Supported subset (everything else is an error at its location, never a crash):
//   file       `from ...`/`import ...` lines and `#` comments are skipped; then either one `@R.function` or
//              `@I.ir_module` + `class Name:` holding `@R.function`s (`@T.prim_func` is "not supported").
//   function   `@R.function` or `@R.function(private=True)`; `def f(x: TYPE, ...) -> TYPE:` (the signature may
//              span lines inside its parentheses; the return annotation is optional).
//   body       `n = T.int64()` (symbolic dims), `cls = Module`, `R.func_attr({"key": value, ...})`,
//              `with R.dataflow():` blocks ending in `R.output(a, b, ...)`, bindings inside or outside a block,
//              and a final `return EXPR`. Names bound in a block and not listed in R.output are not visible
//              after it. A function without a dataflow block is read with set_dataflow_block(false).
//   binding    `name: TYPE = EXPR` or `name = EXPR`; `name = other` binds the same node (an alias).
//   EXPR       `R.op(operands..., attr=value, ...)` for every op in the OpRegistry (attributes by keyword only,
//              checked against the op's AttrSpec list, missing ones take defaults); `R.onnx.X(..., result_types=
//              "float32:1,n")`, an opaque ONNX op, registered from its calls when unknown (opaque_calls.h);
//              `R.const(2.0, "float32")`,
//              `R.const(1.0)` (float32), `R.const(2, "int32")`, `R.const([[1, 2]], "int64")`;
//              `R.shape([1, 11, 768])` (`-1` = inferred extent); tuples `(a, b)`, `(a,)`, `()`; `t[0]`;
//              `cls.f(args)` / `Module.f(args)` (the callee may be defined later in the class; it is read first);
//              nested calls (an inner call becomes an unnamed node, printed later as `lv`).
//   attr value ints, floats (`inf`, `nan`, `float("inf")` too), strings, True/False/None, int lists `[1, 0]`.
//   TYPE       `R.Tensor((16, 16), dtype="float32")`, `R.Tensor((16, 16), "float32")`, `R.Tensor((1024,))`,
//              `R.Tensor(ndim=2, dtype="float32")`, `R.Tensor`, dims as ints, `"n"` strings or names declared
//              by `n = T.int64()`; `R.Tuple(T, ...)`, `R.Tuple`; `R.Shape([1, 2])`, `R.Shape(ndim=4)`,
//              `R.Shape`; `R.Object`.
// Not supported (clear error): `@T.prim_func`, `R.call_tir` and the other call_*/packed/VM builtins,
// `R.prim_value`, `R.match_cast`, `metadata[...]`, control flow, nested functions, Python operators.
//
// Type annotations follow TVM's rule of erroring only on a real conflict: an annotation is checked against the
// type the op registry infers, and it conflicts only where both state a fact and the facts differ (kind, dtype,
// rank, a static extent, tuple arity). A less specific annotation (`R.Tensor((1024,))` with no dtype,
// `R.Tensor(ndim=2)`, `R.Object`) is accepted, and so is a symbolic extent against a static one (not provably
// different). The node always keeps the inferred type. A declared return type is kept as written
// (Function::set_return_type) after the same check against the returned value.
//
// Constants are rounded to their dtype as TVM does (float32/float16/bfloat16 round to nearest even); integer
// dtypes require integral values within range.
//
// Errors are collected: after an error the reader skips to the next line (statement) and carries on, so one
// run reports every independent problem; read_module then returns nullptr. It stops after 100 errors.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dpl/ir/graph.h"
#include "dpl/ir/op_registry.h"
#include "dpl/ir/opaque_ops.h"
#include "dpl/text/tvmscript.h"
#include "lexer.h"
#include "name_table.h"
#include "opaque_calls.h"

namespace dpl {
namespace {

using text::Lexer;
using text::Token;
using text::TokenKind;

constexpr size_t kMaxErrors = 100;
constexpr int kMaxNesting = 256;  // expressions, types and constant lists deeper than this are rejected

// Thrown to abandon the current statement after its error has been reported.
struct StatementError {};
// Thrown to stop reading altogether once kMaxErrors have been reported.
struct TooManyErrors {};

// True when the annotation and the inferred type state different facts (see the header comment).
bool types_conflict(TypeRef annotated, TypeRef inferred) {
  if (annotated == inferred) return false;
  const TypeKind a = annotated->kind();
  const TypeKind b = inferred->kind();
  if (a == TypeKind::Unknown || b == TypeKind::Unknown || a == TypeKind::Object || b == TypeKind::Object) {
    return false;
  }
  if (a != b) return true;
  switch (a) {
    case TypeKind::Tensor: {
      if (annotated->dtype() != DType::Unknown && inferred->dtype() != DType::Unknown &&
          annotated->dtype() != inferred->dtype()) {
        return true;
      }
      if (annotated->rank() >= 0 && inferred->rank() >= 0 && annotated->rank() != inferred->rank()) return true;
      if (annotated->has_shape() && inferred->has_shape()) {
        for (size_t i = 0; i < annotated->dims().size(); ++i) {
          const Dim x = annotated->dims()[i];
          const Dim y = inferred->dims()[i];
          if (x.is_static() && y.is_static() && x.extent() != y.extent()) return true;
        }
      }
      return false;
    }
    case TypeKind::Shape:
      return annotated->rank() >= 0 && inferred->rank() >= 0 && annotated->rank() != inferred->rank();
    case TypeKind::Tuple: {
      if (annotated->fields().size() != inferred->fields().size()) return true;
      for (size_t i = 0; i < annotated->fields().size(); ++i) {
        if (types_conflict(annotated->fields()[i], inferred->fields()[i])) return true;
      }
      return false;
    }
    default:
      return false;
  }
}

// Makes a constant's value one its dtype can hold, as TVM's numpy conversion does; false when it cannot.
bool fit_to_dtype(double& value, DType dtype, std::string& problem) {
  auto integer_in = [&](double low, double high) {
    if (!std::isfinite(value) || value != std::trunc(value)) {
      problem = "is not an integer";
      return false;
    }
    if (value < low || value > high) {
      problem = "is out of range";
      return false;
    }
    return true;
  };
  constexpr double kExactIntLimit = 9007199254740992.0;  // 2^53: doubles hold larger integers inexactly
  switch (dtype) {
    case DType::Bool: value = value != 0 ? 1 : 0; return true;
    case DType::Int8: return integer_in(-128, 127);
    case DType::Int16: return integer_in(-32768, 32767);
    case DType::Int32: return integer_in(-2147483648.0, 2147483647.0);
    case DType::Int64: return integer_in(-kExactIntLimit, kExactIntLimit);
    case DType::UInt8: return integer_in(0, 255);
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: {
      const double rounded = round_to_dtype(value, dtype);
      if (std::isinf(rounded) && std::isfinite(value)) break;  // too large for the dtype
      value = rounded;
      return true;
    }
    case DType::Float64:
    case DType::Unknown: return true;
  }
  problem = "is out of range";
  return false;
}

std::string_view attr_value_kind_name(const AttrValue& value) {
  switch (value.index()) {
    case 0: return "None";
    case 1: return "bool";
    case 2: return "int";
    case 3: return "float";
    case 4: return "string";
    default: return "int list";
  }
}

// A name bound in a function body: a value, or a symbolic dimension (`n = T.int64()`, node == nullptr).
struct NameEntry {
  Node* node = nullptr;
  Token def;
  bool in_block = false;   // bound inside the dataflow block being read
  bool is_output = false;  // listed in that block's R.output(...)
  bool hidden = false;     // a dataflow-block local that R.output did not export
  bool poisoned = false;   // its binding had an error: uses fail without another report
};

struct Scope {
  text::NameTable<NameEntry> names;
  text::NameTable<TypeRef> types;  // the type annotations read so far, by their spelling (Reader::parse_type)
  std::string_view module_alias;  // `cls` of `cls = Module`
};

// A saved reading position: the lexer (a small value) plus the current and looked-ahead tokens.
struct Cursor {
  explicit Cursor(Lexer lexer) : lexer(std::move(lexer)) {}
  Lexer lexer;
  Token tok;
  Token peeked;
  bool has_peeked = false;
};

// One function of the file: its header is read in order; in a module its body is read after all headers, callees
// first, so `cls.f(...)` knows f's return type even when f comes later in the class.
struct PendingFunction {
  enum class State : uint8_t { NoBody, Pending, Reading, Done };
  Function* fn = nullptr;
  Token name;
  std::unique_ptr<Scope> scope;
  TypeRef declared_return = nullptr;
  SourceLoc return_loc;
  std::unique_ptr<Cursor> body;  // positioned at the body's INDENT
  std::vector<std::string_view> callees;
  State state = State::NoBody;
};

// What the statements of one function body have seen so far.
struct BodyState {
  bool returned = false;
  bool reported_after_return = false;
  bool has_dataflow = false;
  bool func_attr_seen = false;
  bool in_block = false;
  bool block_output_seen = false;
  std::vector<std::string_view> block_names;
};

class Reader {
 public:
  Reader(const SourceFile& file, DiagnosticEngine& diags)
      : diags_(diags), initial_errors_(diags.error_count()), cur_(Lexer(file, diags)),
        module_(std::make_unique<Module>()) {
    cur_.tok = cur_.lexer.next();
  }

  std::unique_ptr<Module> read() {
    text::register_opaque_calls(cur_.lexer.file(), diags_);
    try {
      read_file();
    } catch (const TooManyErrors&) {
      diags_.error(loc(tok()), "too many errors; stopping here");
    }
    if (diags_.error_count() > initial_errors_) return nullptr;
    return std::move(module_);
  }

 private:
  // ----------------------------------------------------------------------------------------------------------
  // Tokens

  const Token& tok() const { return cur_.tok; }
  bool at(TokenKind kind) const { return cur_.tok.kind == kind; }
  bool at_name(std::string_view name) const { return at(TokenKind::Name) && text(cur_.tok) == name; }
  std::string_view text(const Token& token) const { return cur_.lexer.text(token); }

  void advance() {
    check_error_limit();  // also bounds a lexer reporting one bad character after another
    prev_ = cur_.tok;
    if (cur_.has_peeked) {
      cur_.tok = cur_.peeked;
      cur_.has_peeked = false;
    } else {
      cur_.tok = cur_.lexer.next();
    }
  }

  const Token& peek() {
    if (!cur_.has_peeked) {
      cur_.peeked = cur_.lexer.next();
      cur_.has_peeked = true;
    }
    return cur_.peeked;
  }

  SourceLoc loc(const Token& token) const { return cur_.lexer.loc(token); }

  // From the start of `first` to the end of `last` when both are on one line, else just `first`.
  SourceLoc span(const Token& first, const Token& last) const {
    SourceLoc result = loc(first);
    if (last.line == first.line && last.offset + last.length > first.offset) {
      result.length = last.offset + last.length - first.offset;
    }
    return result;
  }

  std::string describe(const Token& token) const {
    switch (token.kind) {
      case TokenKind::Name:
      case TokenKind::Int:
      case TokenKind::Float:
      case TokenKind::Operator:
      case TokenKind::String: {
        std::string_view spelling = text(token);
        if (spelling.size() > 40) return "'" + std::string(spelling.substr(0, 40)) + "...'";
        return "'" + std::string(spelling) + "'";
      }
      default: return std::string(text::token_kind_name(token.kind));
    }
  }

  Diagnostic& report(SourceLoc where, std::string message) { return diags_.error(where, std::move(message)); }

  [[noreturn]] void fail_at(SourceLoc where, std::string message) {
    report(where, std::move(message));
    throw StatementError{};
  }

  // Reports at `token` unless it is a malformed token the lexer has already reported.
  [[noreturn]] void fail(const Token& token, std::string message) {
    if (token.kind == TokenKind::Error) throw StatementError{};
    fail_at(loc(token), std::move(message));
  }

  Token expect(TokenKind kind, std::string_view what) {
    if (!at(kind)) fail(tok(), "expected " + std::string(what) + ", found " + describe(tok()));
    Token token = tok();
    advance();
    return token;
  }

  void expect_name(std::string_view name) {
    if (!at_name(name)) fail(tok(), "expected '" + std::string(name) + "', found " + describe(tok()));
    advance();
  }

  void expect_line_end() {
    if (at(TokenKind::Newline)) {
      advance();
    } else if (!at(TokenKind::End) && !at(TokenKind::Dedent)) {
      fail(tok(), "expected end of line, found " + describe(tok()));
    }
  }

  void check_error_limit() const {
    if (diags_.error_count() - initial_errors_ >= kMaxErrors) throw TooManyErrors{};
  }

  // Skips an indented block, INDENT to its matching DEDENT. `callees` collects `X.f` names (call candidates).
  void skip_block(std::vector<std::string_view>* callees) {
    int depth = 0;
    Token before_previous, previous;
    do {
      if (at(TokenKind::Indent)) ++depth;
      if (at(TokenKind::Dedent)) --depth;
      if (at(TokenKind::End)) return;
      if (callees != nullptr && at(TokenKind::Name) && previous.kind == TokenKind::Dot &&
          before_previous.kind == TokenKind::Name && text(before_previous) != "R" && text(before_previous) != "T") {
        callees->push_back(text(tok()));
      }
      before_previous = previous;
      previous = tok();
      advance();
    } while (depth > 0);
  }

  // After an error: skip the rest of the statement's line, and the block it opens, if any.
  void recover() {
    operand_stack_.clear();
    while (!at(TokenKind::Newline) && !at(TokenKind::End) && !at(TokenKind::Dedent)) advance();
    if (at(TokenKind::Newline)) advance();
    if (at(TokenKind::Indent)) skip_block(nullptr);
  }

  int64_t int_value(const Token& token, bool negative) {
    std::string_view digits = text(token);
    uint64_t magnitude = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
    if (ec != std::errc() || end != digits.data() + digits.size() || magnitude > limit) {
      fail(token, "integer literal " + std::string(digits) + " is out of range");
    }
    if (negative) return magnitude == limit ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(magnitude);
    return static_cast<int64_t>(magnitude);
  }

  double float_value(const Token& token) {
    std::string_view digits = text(token);
    double value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      fail(token, "number " + std::string(digits) + " is out of range");
    }
    return value;
  }

  // `inf`, `nan`, `float("inf")`, `float("-inf")`, `float("nan")`: non-finite values as Python spells them.
  bool at_special_float() {
    return at_name("inf") || at_name("nan") || (at_name("float") && peek().kind == TokenKind::LParen);
  }

  double special_float_value() {
    Token first = tok();
    if (at_name("inf") || at_name("nan")) {
      advance();
      return text(first) == "inf" ? std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::quiet_NaN();
    }
    advance();
    expect(TokenKind::LParen, "'('");
    Token value = expect(TokenKind::String, "a string such as \"inf\"");
    expect(TokenKind::RParen, "')'");
    const std::string spelling = cur_.lexer.string_value(value);
    if (spelling == "inf" || spelling == "+inf") return std::numeric_limits<double>::infinity();
    if (spelling == "-inf") return -std::numeric_limits<double>::infinity();
    if (spelling == "nan") return std::numeric_limits<double>::quiet_NaN();
    fail(value, "float(...) takes \"inf\", \"-inf\" or \"nan\"");
  }

  // ----------------------------------------------------------------------------------------------------------
  // File structure

  enum class DecoratorKind { RelaxFunction, IrModule, PrimFunc };
  struct Decorator {
    DecoratorKind kind;
    Token first;
    bool is_private = false;
  };

  Decorator read_decorator() {
    Decorator decorator{DecoratorKind::RelaxFunction, tok()};
    advance();  // '@'
    Token ns = expect(TokenKind::Name, "a decorator name");
    expect(TokenKind::Dot, "'.'");
    Token name = expect(TokenKind::Name, "a decorator name");
    const std::string spelling = std::string(text(ns)) + "." + std::string(text(name));
    const SourceLoc where = span(decorator.first, name);
    if (spelling == "R.function") {
      decorator.kind = DecoratorKind::RelaxFunction;
      if (at(TokenKind::LParen)) {
        advance();
        while (!at(TokenKind::RParen)) {
          Token key = expect(TokenKind::Name, "an argument name");
          if (text(key) != "private") {
            fail(key, "@R.function(" + std::string(text(key)) + "=...) is not supported; only private=True/False is");
          }
          expect(TokenKind::Equal, "'='");
          if (at_name("True") || at_name("False")) {
            decorator.is_private = at_name("True");
            advance();
          } else {
            fail(tok(), "expected True or False, found " + describe(tok()));
          }
          if (!at(TokenKind::RParen)) expect(TokenKind::Comma, "',' or ')'");
        }
        advance();
      }
    } else if (spelling == "I.ir_module") {
      decorator.kind = DecoratorKind::IrModule;
    } else if (spelling == "T.prim_func") {
      decorator.kind = DecoratorKind::PrimFunc;
      while (!at(TokenKind::Newline) && !at(TokenKind::End)) advance();  // (private=True) and the like
    } else {
      fail_at(where, "unknown decorator @" + spelling + "; expected @R.function or @I.ir_module");
    }
    expect_line_end();
    return decorator;
  }

  void read_file() {
    bool seen_item = false;
    while (!at(TokenKind::End)) {
      check_error_limit();
      try {
        if (at(TokenKind::Newline) || at(TokenKind::Dedent)) {
          advance();
        } else if (at(TokenKind::Indent)) {
          report(loc(tok()), "unexpected indentation");
          skip_block(nullptr);
        } else if (at_name("from") || at_name("import")) {
          while (!at(TokenKind::Newline) && !at(TokenKind::End)) advance();
        } else if (at(TokenKind::At)) {
          Decorator decorator = read_decorator();
          if (decorator.kind != DecoratorKind::PrimFunc && seen_item) {
            fail(decorator.first,
                 "a file holds one @R.function or one @I.ir_module; put several functions in an @I.ir_module class");
          }
          if (decorator.kind == DecoratorKind::IrModule) {
            seen_item = true;
            read_class();
          } else if (decorator.kind == DecoratorKind::RelaxFunction) {
            seen_item = true;
            read_function(decorator, /*defer_body=*/false);
          } else {
            skip_prim_func(decorator);
          }
        } else if (at_name("def")) {
          fail(tok(), "missing @R.function decorator before 'def'");
        } else if (at_name("class")) {
          fail(tok(), "missing @I.ir_module decorator before 'class'");
        } else {
          // Stray code at the top level: one error, then resynchronize at the next decorator.
          if (tok().kind != TokenKind::Error) {
            report(loc(tok()), "expected @R.function or @I.ir_module, found " + describe(tok()));
          }
          while (!at(TokenKind::At) && !at(TokenKind::End)) advance();
        }
      } catch (const StatementError&) {
        recover();
      }
    }
    if (!seen_item && diags_.error_count() == initial_errors_) {
      report(loc(tok()), "no @R.function or @I.ir_module found");
    }
  }

  void skip_prim_func(const Decorator& decorator) {
    report(loc(decorator.first), "@T.prim_func is not supported: dpl reads Relax functions (@R.function) only");
    while (!at(TokenKind::Newline) && !at(TokenKind::End) && !at(TokenKind::Dedent)) advance();
    if (at(TokenKind::Newline)) advance();
    if (at(TokenKind::Indent)) {
      cur_.lexer.set_quiet(true);  // the body is TIR: its own errors would only be noise
      skip_block(nullptr);
      cur_.lexer.set_quiet(false);
    }
  }

  void read_class() {
    expect_name("class");
    Token name = expect(TokenKind::Name, "a class name");
    if (at(TokenKind::LParen)) fail(tok(), "class bases are not supported");
    expect(TokenKind::Colon, "':'");
    expect(TokenKind::Newline, "end of line");
    if (!at(TokenKind::Indent)) fail(tok(), "expected an indented class body");
    advance();
    module_->set_ir_module(true);
    module_->set_class_name(std::string(text(name)));
    class_name_ = text(name);
    while (!at(TokenKind::Dedent) && !at(TokenKind::End)) {
      check_error_limit();
      try {
        if (at(TokenKind::Newline)) {
          advance();
        } else if (at_name("pass")) {
          advance();
          expect_line_end();
        } else if (at(TokenKind::At)) {
          Decorator decorator = read_decorator();
          if (decorator.kind == DecoratorKind::IrModule) fail(decorator.first, "nested @I.ir_module");
          if (decorator.kind == DecoratorKind::PrimFunc) {
            skip_prim_func(decorator);
          } else {
            read_function(decorator, /*defer_body=*/true);
          }
        } else if (at_name("def")) {
          fail(tok(), "missing @R.function decorator before 'def'");
        } else {
          fail(tok(), "expected an @R.function in the class body, found " + describe(tok()));
        }
      } catch (const StatementError&) {
        recover();
      }
    }
    if (at(TokenKind::Dedent)) advance();
    read_deferred_bodies();
  }

  // Reads the bodies of the class's functions, each callee before its callers where the calls allow it.
  void read_deferred_bodies() {
    std::vector<uint8_t> visited(functions_.size(), 0);
    std::vector<size_t> order;
    std::vector<std::pair<size_t, size_t>> stack;  // (function, next callee to look at)
    for (size_t root = 0; root < functions_.size(); ++root) {
      if (visited[root]) continue;
      visited[root] = 1;
      stack.emplace_back(root, 0);
      while (!stack.empty()) {
        auto& [function, next] = stack.back();
        const auto& callees = functions_[function].callees;
        if (next < callees.size()) {
          const size_t* callee = function_index_.find(callees[next++]);
          if (callee != nullptr && !visited[*callee]) {
            visited[*callee] = 1;
            stack.emplace_back(*callee, 0);
          }
          continue;
        }
        order.push_back(function);
        stack.pop_back();
      }
    }
    Cursor after_class = cur_;
    for (size_t i : order) {
      PendingFunction& pending = functions_[i];
      if (pending.state != PendingFunction::State::Pending) continue;
      cur_ = *pending.body;
      read_body(pending);
    }
    cur_ = std::move(after_class);
  }

  // `def name(params) -> type:` then the body, read now or (in a class) after every header.
  void read_function(const Decorator& decorator, bool defer_body) {
    if (!at_name("def")) fail(tok(), "expected 'def' after @R.function, found " + describe(tok()));
    advance();
    Token name = expect(TokenKind::Name, "a function name");
    PendingFunction& pending = functions_.emplace_back();
    pending.name = name;
    pending.scope = std::make_unique<Scope>();
    pending.fn = &module_->add_function(std::string(text(name)));
    pending.fn->set_private(decorator.is_private);
    auto [existing, inserted] = function_index_.insert(text(name), functions_.size() - 1);
    if (!inserted) {
      Diagnostic& diag = report(loc(name), "function '" + std::string(text(name)) + "' is already defined");
      DiagnosticEngine::add_note(diag, loc(functions_[*existing].name), "first defined here");
    }
    fn_ = pending.fn;
    scope_ = pending.scope.get();
    expect(TokenKind::LParen, "'('");
    while (!at(TokenKind::RParen)) {
      Token param = expect(TokenKind::Name, "a parameter name");
      if (!at(TokenKind::Colon)) {
        fail(param, "parameter '" + std::string(text(param)) + "' needs a type annotation");
      }
      advance();
      TypeRef type = parse_type(0);
      check_new_name(param);
      define(param, fn_->add_param(std::string(text(param)), type), false);
      if (!at(TokenKind::RParen)) expect(TokenKind::Comma, "',' or ')'");
    }
    advance();
    if (at(TokenKind::Arrow)) {
      advance();
      Token first = tok();
      pending.declared_return = parse_type(0);
      pending.return_loc = span(first, prev_);
      fn_->set_return_type(pending.declared_return);
    }
    expect(TokenKind::Colon, "':'");
    expect(TokenKind::Newline, "end of line");
    if (!at(TokenKind::Indent)) fail(tok(), "expected an indented function body");
    pending.state = PendingFunction::State::Pending;
    if (defer_body) {
      pending.body = std::make_unique<Cursor>(cur_);
      cur_.lexer.set_quiet(true);  // the body is lexed again (and its errors reported) when it is read
      skip_block(&pending.callees);
      cur_.lexer.set_quiet(false);
    } else {
      read_body(pending);
    }
  }

  // ----------------------------------------------------------------------------------------------------------
  // Function bodies

  // The statements of an indented block, through its dedent; a statement in error is reported and skipped.
  void read_indented_statements() {
    while (!at(TokenKind::Dedent) && !at(TokenKind::End)) {
      check_error_limit();
      try {
        read_statement();
      } catch (const StatementError&) {
        recover();
      }
    }
    if (at(TokenKind::Dedent)) advance();
  }

  void read_body(PendingFunction& pending) {
    pending.state = PendingFunction::State::Reading;
    fn_ = pending.fn;
    scope_ = pending.scope.get();
    BodyState state;
    body_ = &state;
    const size_t errors_before = diags_.error_count();
    advance();  // INDENT
    read_indented_statements();
    fn_->set_dataflow_block(state.has_dataflow);
    if (!state.returned && diags_.error_count() == errors_before) {  // else the return may be what failed
      report(loc(pending.name), "function '" + std::string(text(pending.name)) + "' has no return statement");
    } else if (pending.declared_return != nullptr && fn_->output() != nullptr &&
               types_conflict(pending.declared_return, fn_->output()->type())) {
      report(pending.return_loc, "return type annotation " + pending.declared_return->str() +
                                     " does not match the type of the returned value " +
                                     fn_->output()->type()->str());
    }
    pending.state = PendingFunction::State::Done;
    pending.scope.reset();
    body_ = nullptr;
  }

  void read_statement() {
    BodyState& state = *body_;
    if (at(TokenKind::Indent)) {
      report(loc(tok()), "unexpected indentation");
      skip_block(nullptr);
      return;
    }
    if (at(TokenKind::Newline)) {
      advance();
      return;
    }
    if (state.returned) {
      if (state.reported_after_return) throw StatementError{};
      state.reported_after_return = true;
      fail(tok(), "statements after 'return' are not supported");
    }
    if (state.block_output_seen) fail(tok(), "R.output(...) must be the last statement of the dataflow block");
    if (at(TokenKind::At)) fail(tok(), "nested functions are not supported");
    if (!at(TokenKind::Name)) fail(tok(), "expected a binding such as `lv = R.add(x, y)`, found " + describe(tok()));
    const std::string_view word = text(tok());
    if (word == "with") return read_dataflow_block();
    if (word == "return") return read_return();
    if (word == "pass") {
      advance();
      return expect_line_end();
    }
    if (word == "if" || word == "for" || word == "while" || word == "else" || word == "elif" || word == "try") {
      fail(tok(), "control flow ('" + std::string(word) + "') is not supported: dpl reads dataflow graphs");
    }
    if (word == "def" || word == "class") fail(tok(), "nested functions are not supported");
    if (word == "R" && peek().kind == TokenKind::Dot) return read_relax_statement();
    const TokenKind next = peek().kind;
    if (next == TokenKind::Colon || next == TokenKind::Equal) return read_binding();
    fail(tok(), "expected a binding such as `lv = R.add(x, y)`, found " + describe(tok()));
  }

  void read_dataflow_block() {
    BodyState& state = *body_;
    Token with = tok();
    if (state.in_block) fail(with, "nested dataflow blocks are not supported");
    advance();
    expect_name("R");
    expect(TokenKind::Dot, "'.'");
    Token kind = expect(TokenKind::Name, "'dataflow'");
    if (text(kind) != "dataflow") fail_at(span(with, kind), "only `with R.dataflow():` blocks are supported");
    expect(TokenKind::LParen, "'('");
    expect(TokenKind::RParen, "')'");
    expect(TokenKind::Colon, "':'");
    expect(TokenKind::Newline, "end of line");
    if (!at(TokenKind::Indent)) fail(tok(), "expected an indented dataflow block");
    advance();
    state.in_block = true;
    state.has_dataflow = true;
    state.block_output_seen = false;
    state.block_names.clear();
    read_indented_statements();
    for (std::string_view name : state.block_names) {
      NameEntry& entry = *scope_->names.find(name);
      entry.hidden = !entry.is_output;
      entry.in_block = false;
    }
    state.in_block = false;
    state.block_output_seen = false;
  }

  void read_return() {
    BodyState& state = *body_;
    Token keyword = tok();
    if (state.in_block) fail(keyword, "'return' inside a dataflow block; return after the block ends");
    state.returned = true;  // even if the value is malformed, so no "missing return" error follows
    advance();
    if (at(TokenKind::Newline) || at(TokenKind::End)) fail(tok(), "'return' needs a value");
    Node* value = parse_expr(0);
    expect_line_end();
    fn_->set_output(value);
  }

  // `R.output(...)`, `R.func_attr({...})`; any other `R.xxx(...)` statement is a value that is not bound.
  void read_relax_statement() {
    BodyState& state = *body_;
    Token first = tok();
    advance();
    advance();  // '.'
    Token what = expect(TokenKind::Name, "a name after 'R.'");
    const std::string_view word = text(what);
    if (word == "output") {
      if (!state.in_block) fail_at(span(first, what), "R.output(...) is only allowed at the end of a dataflow block");
      expect(TokenKind::LParen, "'('");
      while (!at(TokenKind::RParen)) {
        Token name = expect(TokenKind::Name, "a name");
        NameEntry* found = scope_->names.find(text(name));
        if (found == nullptr) fail(name, "undefined name '" + std::string(text(name)) + "'");
        if (!found->in_block || (found->node == nullptr && !found->poisoned)) {
          fail(name, "R.output: '" + std::string(text(name)) + "' is not bound in this dataflow block");
        }
        found->is_output = true;
        if (!at(TokenKind::RParen)) expect(TokenKind::Comma, "',' or ')'");
      }
      advance();
      expect_line_end();
      state.block_output_seen = true;
      return;
    }
    if (word == "func_attr") {
      if (state.in_block) {
        fail_at(span(first, what), "R.func_attr(...) belongs at function level, before the dataflow block");
      }
      if (state.func_attr_seen) fail_at(span(first, what), "R.func_attr(...) given twice");
      state.func_attr_seen = true;
      return read_func_attr();
    }
    fail_at(span(first, what), "a value must be bound to a name: write `lv = R." + std::string(word) + "(...)`");
  }

  void read_func_attr() {
    expect(TokenKind::LParen, "'('");
    expect(TokenKind::LBrace, "'{'");
    while (!at(TokenKind::RBrace)) {
      Token key = expect(TokenKind::String, "a string key");
      std::string name = cur_.lexer.string_value(key);
      expect(TokenKind::Colon, "':'");
      if (at(TokenKind::LBrace)) fail(tok(), "nested dictionaries in R.func_attr are not supported");
      AttrValue value = parse_attr_value(0);
      if (fn_->find_attr(name) != nullptr) fail(key, "function attribute \"" + name + "\" given twice");
      fn_->attrs().emplace_back(std::move(name), std::move(value));
      if (!at(TokenKind::RBrace)) expect(TokenKind::Comma, "',' or '}'");
    }
    advance();
    expect(TokenKind::RParen, "')'");
    expect_line_end();
  }

  void read_binding() {
    BodyState& state = *body_;
    Token name = tok();
    advance();
    TypeRef annotation = nullptr;
    SourceLoc annotation_loc;
    if (at(TokenKind::Colon)) {
      advance();
      Token first = tok();
      annotation = parse_type(0);
      annotation_loc = span(first, prev_);
    }
    expect(TokenKind::Equal, "'='");
    if (at_name("T") && peek().kind == TokenKind::Dot) {
      try {
        return read_symbol_declaration(name, annotation);
      } catch (const StatementError&) {
        if (scope_->names.find(text(name)) == nullptr) define(name, nullptr, state.in_block).poisoned = true;
        throw;
      }
    }
    if (!class_name_.empty() && at_name(class_name_) && peek().kind != TokenKind::Dot) {
      // `cls = Module`: the name through which functions call each other.
      advance();
      expect_line_end();
      check_new_name(name);
      scope_->module_alias = text(name);
      return;
    }
    check_new_name(name);
    Node* value = nullptr;
    try {
      value = parse_expr(0);
      expect_line_end();
    } catch (const StatementError&) {
      define(name, nullptr, state.in_block).poisoned = true;  // later uses fail quietly: no cascade of errors
      throw;
    }
    if (value->name().empty()) value->set_name(std::string(text(name)));
    define(name, value, state.in_block);
    if (annotation != nullptr && types_conflict(annotation, value->type())) {
      report(annotation_loc, "type annotation " + annotation->str() + " does not match the inferred type " +
                                 value->type()->str());
    }
  }

  // `n = T.int64()`: declares a symbolic dimension usable as a bare name in shapes.
  void read_symbol_declaration(const Token& name, TypeRef annotation) {
    Token first = tok();
    advance();
    advance();  // '.'
    Token kind = expect(TokenKind::Name, "'int64'");
    if (!at(TokenKind::LParen) || peek().kind != TokenKind::RParen) {
      fail_at(span(first, kind), "TIR expressions (T.xxx) are not supported in Relax values");
    }
    if (text(kind) != "int64" && text(kind) != "int32") {
      fail_at(span(first, kind), "T." + std::string(text(kind)) +
                                     " is not supported; symbolic dimensions are declared as `n = T.int64()`");
    }
    advance();
    advance();
    expect_line_end();
    if (annotation != nullptr) fail(name, "a symbolic dimension takes no type annotation");
    check_new_name(name);
    define(name, nullptr, false);
  }

  bool is_reserved(std::string_view name) const {
    return text::is_reserved_word(name) || name == class_name_ || name == scope_->module_alias;
  }

  void check_new_name(const Token& name) {
    const std::string_view spelling = text(name);
    if (is_reserved(spelling)) fail(name, "'" + std::string(spelling) + "' is reserved and cannot be bound");
    const NameEntry* found = scope_->names.find(spelling);
    if (found != nullptr) {
      Diagnostic& diag = report(loc(name), "'" + std::string(spelling) + "' is already defined");
      DiagnosticEngine::add_note(diag, loc(found->def), "previous definition here");
      throw StatementError{};
    }
  }

  NameEntry& define(const Token& name, Node* node, bool in_block) {
    NameEntry& entry = *scope_->names.insert(text(name), NameEntry{}).first;
    entry.node = node;
    entry.def = name;
    entry.in_block = in_block;
    if (in_block) body_->block_names.push_back(text(name));
    return entry;
  }

  Node* lookup_value(const Token& name) {
    const NameEntry* found = scope_->names.find(text(name));
    if (found == nullptr) {
      std::string message = "undefined name '" + std::string(text(name)) + "'";
      if (!class_name_.empty() && function_index_.find(text(name)) != nullptr) {
        message += "; call a function of the module as cls." + std::string(text(name)) + "(...)";
      }
      fail(name, std::move(message));
    }
    const NameEntry& entry = *found;
    if (entry.poisoned) throw StatementError{};  // its binding failed and was reported
    if (entry.node == nullptr) fail(name, "'" + std::string(text(name)) + "' is a symbolic dimension, not a value");
    if (entry.hidden) {
      Diagnostic& diag = report(loc(name), "'" + std::string(text(name)) +
                                               "' is local to the dataflow block; list it in R.output(...) to use "
                                               "it after the block");
      DiagnosticEngine::add_note(diag, loc(entry.def), "bound here");
      throw StatementError{};
    }
    return entry.node;
  }

  // ----------------------------------------------------------------------------------------------------------
  // Expressions

  void check_depth(int depth) {
    if (depth > kMaxNesting) fail(tok(), "nested too deeply");
  }

  bool at_literal() const {
    switch (tok().kind) {
      case TokenKind::Int:
      case TokenKind::Float:
      case TokenKind::String:
      case TokenKind::Minus:
      case TokenKind::LBracket:
      case TokenKind::LBrace: return true;
      case TokenKind::Name: return at_name("True") || at_name("False") || at_name("None");
      default: return false;
    }
  }

  Node* parse_expr(int depth) {
    check_depth(depth);
    Node* node = parse_primary(depth);
    while (at(TokenKind::LBracket)) {
      advance();
      Token index = tok();
      bool negative = false;
      if (at(TokenKind::Minus)) {
        negative = true;
        advance();
      }
      Token digits = expect(TokenKind::Int, "a tuple index");
      const int64_t value = int_value(digits, negative);
      expect(TokenKind::RBracket, "']'");
      std::string error;
      Node* item = fn_->add_tuple_item(node, value, error);
      if (item == nullptr) fail_at(span(index, digits), error);
      node = item;
    }
    return node;
  }

  Node* parse_primary(int depth) {
    const Token first = tok();
    switch (first.kind) {
      case TokenKind::Name: {
        const std::string_view word = text(first);
        if (word == "R" && peek().kind == TokenKind::Dot) return parse_relax_expr(depth);
        if (word == "metadata") {
          fail(first, "metadata[...] constants are not supported; pass weights as function parameters");
        }
        if (word == "T" && peek().kind == TokenKind::Dot) {
          fail(first, "TIR expressions (T.xxx) are not supported in Relax values");
        }
        if ((word == scope_->module_alias || (!class_name_.empty() && word == class_name_)) &&
            peek().kind == TokenKind::Dot) {
          return parse_function_call(depth);
        }
        if (word == "True" || word == "False" || word == "None") break;
        advance();
        return lookup_value(first);
      }
      case TokenKind::LParen: return parse_tuple(depth);
      case TokenKind::Error: throw StatementError{};
      default: break;
    }
    if (at_literal()) {
      fail(first, "a literal is not a value here: write constants as R.const(value, \"dtype\")");
    }
    fail(first, "expected a value, found " + describe(first));
  }

  // `(a, b)`, `(a,)`, `()`, or a parenthesized value `(a)`.
  Node* parse_tuple(int depth) {
    advance();
    const size_t base = operand_stack_.size();
    bool trailing_comma = false;
    while (!at(TokenKind::RParen)) {
      operand_stack_.push_back(parse_expr(depth + 1));
      trailing_comma = false;
      if (!at(TokenKind::RParen)) {
        expect(TokenKind::Comma, "',' or ')'");
        trailing_comma = true;
      }
    }
    advance();
    const size_t count = operand_stack_.size() - base;
    if (count == 1 && !trailing_comma) {
      Node* inner = operand_stack_.back();
      operand_stack_.resize(base);
      return inner;
    }
    Node* tuple = fn_->add_tuple(std::span<Node* const>(operand_stack_.data() + base, count));
    operand_stack_.resize(base);
    return tuple;
  }

  // Positional operands go to operand_stack_ (from `base`); keyword arguments to `on_keyword`.
  // `callee_prefix` + `callee_name` spell the callee in messages (joined only when there is an error).
  template <typename OnKeyword>
  void parse_arguments(int depth, std::string_view callee_prefix, std::string_view callee_name,
                       OnKeyword&& on_keyword) {
    auto callee = [&] { return std::string(callee_prefix) + std::string(callee_name); };
    expect(TokenKind::LParen, "'('");
    bool seen_keyword = false;
    while (!at(TokenKind::RParen)) {
      if (at(TokenKind::Name) && peek().kind == TokenKind::Equal) {
        Token key = tok();
        advance();
        advance();
        on_keyword(key);
        seen_keyword = true;
      } else {
        if (seen_keyword) fail(tok(), "positional argument after keyword arguments in " + callee() + "(...)");
        if (at_literal()) {
          fail(tok(), "a literal is not an operand of " + callee() +
                          ": pass attributes by keyword (attr=value) and constants as R.const(value, \"dtype\")");
        }
        operand_stack_.push_back(parse_expr(depth + 1));
      }
      if (!at(TokenKind::RParen)) expect(TokenKind::Comma, "',' or ')'");
    }
    advance();
  }

  // After `R.`: an op call, R.const, R.shape, or a construct that is not supported.
  Node* parse_relax_expr(int depth) {
    const Token first = tok();
    advance();
    advance();  // '.'
    Token last = expect(TokenKind::Name, "a name after 'R.'");
    std::string_view path = text(last);
    std::string dotted;  // `R.nn.conv2d`: the names joined (a single name is read in place)
    if (at(TokenKind::Dot)) {
      dotted = path;
      while (at(TokenKind::Dot)) {
        advance();
        last = expect(TokenKind::Name, "a name");
        dotted += '.';
        dotted += text(last);
      }
      path = dotted;
    }
    const SourceLoc where = span(first, last);
    if (path == "const") return parse_const(where, depth);
    if (path == "shape") return parse_shape_literal(depth);
    if (path == "output" || path == "func_attr" || path == "dataflow") {
      fail_at(where, "R." + std::string(path) + "(...) is a statement, not a value");
    }
    if (path == "Tensor" || path == "Tuple" || path == "Shape" || path == "Object" || path == "Prim" ||
        path == "Callable") {
      fail_at(where, "R." + std::string(path) + " is a type, not a value");
    }
    const OpInfo* info = OpRegistry::global().find(path);
    if (info == nullptr) {
      static constexpr std::string_view kUnsupported[] = {
          "call_tir", "call_tir_inplace", "call_tir_with_grad", "call_dps_packed", "call_packed",
          "call_pure_packed", "call_builtin_with_ctx", "prim_value", "str", "dtype", "match_cast", "ExternFunc",
          "null_value", "print", "assert_op", "shape_of", "invoke_closure", "make_closure", "emit_te"};
      const bool known_tvm = std::find(std::begin(kUnsupported), std::end(kUnsupported), path) !=
                                 std::end(kUnsupported) ||
                             path.starts_with("builtin.") || path.starts_with("vm.") || path.starts_with("memory.");
      const std::string spelling(path);
      if (known_tvm) fail_at(where, "R." + spelling + " is not supported: dpl reads graph-level Relax ops only");
      if (is_onnx_opaque_name(path)) {
        fail_at(where, "unknown op 'R." + spelling +
                           "': a call in the onnx. namespace is read as an opaque ONNX op when it gives the "
                           "result_types attribute (on its first call)");
      }
      fail_at(where, "unknown op 'R." + spelling + "'");
    }
    return parse_op_call(*info, where, depth);
  }

  std::string valid_attribute_list(const OpInfo& info) const {
    std::string names;
    for (const AttrSpec& spec : info.attrs) {
      if (!names.empty()) names += ", ";
      names += spec.name;
    }
    return names;
  }

  Node* parse_op_call(const OpInfo& info, SourceLoc where, int depth) {
    auto callee = [&] { return "R." + info.name; };
    // Filled with the defaults at the first keyword: a call without one passes no list, and add_call gives it the
    // op's interned defaults.
    AttrList attrs;
    std::vector<bool> given;
    const size_t base = operand_stack_.size();
    parse_arguments(depth, "R.", info.name, [&](const Token& key) {
      const int index = info.attr_index(text(key));
      if (index < 0) {
        std::string message = callee() + " has no attribute '" + std::string(text(key)) + "'";
        message += info.attrs.empty() ? "; it takes no attributes"
                                      : "; valid attributes: " + valid_attribute_list(info);
        fail(key, std::move(message));
      }
      if (attrs.empty()) {
        attrs = info.default_attrs();
        given.assign(attrs.size(), false);
      }
      if (given[index]) fail(key, "attribute '" + std::string(text(key)) + "' given twice");
      given[index] = true;
      const Token value_first = tok();
      AttrValue value = parse_attr_value(depth + 1);
      const AttrSpec& spec = info.attrs[index];
      if (!attr_matches_kind(spec.kind, value)) {
        std::string message = "attribute '" + spec.name + "' of " + callee() + " expects " +
                              std::string(attr_kind_name(spec.kind)) + ", got " +
                              std::string(attr_value_kind_name(value));
        if (spec.kind == AttrKind::DType && std::holds_alternative<std::string>(value)) {
          message = "attribute '" + spec.name + "' of " + callee() + ": unknown dtype " + attr_value_str(value);
        }
        fail_at(span(value_first, prev_), std::move(message));
      }
      if (const auto* spelling = std::get_if<std::string>(&value);
          spelling != nullptr && spec.name == kResultTypesAttr && is_onnx_opaque_op(info.id)) {
        std::string error;
        if (parse_result_types(*spelling, error) == nullptr) {
          fail_at(span(value_first, prev_), callee() + ": " + error);
        }
      }
      attrs[index] = std::move(value);
    });
    const size_t count = operand_stack_.size() - base;
    const auto operand_count = static_cast<int>(count);
    if (operand_count < info.min_operands || (info.max_operands >= 0 && operand_count > info.max_operands)) {
      std::string expected = std::to_string(info.min_operands);
      if (info.max_operands < 0) {
        expected = "at least " + expected;
      } else if (info.max_operands != info.min_operands) {
        expected += " to " + std::to_string(info.max_operands);
      }
      operand_stack_.resize(base);
      fail_at(where, callee() + " expects " + expected + " operand" + (expected == "1" ? "" : "s") + ", got " +
                         std::to_string(count));
    }
    std::string error;
    Node* node = fn_->add_call(info.id, std::span<Node* const>(operand_stack_.data() + base, count),
                               std::move(attrs), error);
    operand_stack_.resize(base);
    if (node == nullptr) fail_at(where, error);
    return node;
  }

  // `cls.f(args)` / `Module.f(args)`.
  Node* parse_function_call(int depth) {
    const Token first = tok();
    advance();
    advance();  // '.'
    Token name = expect(TokenKind::Name, "a function name");
    const SourceLoc where = span(first, name);
    const std::string callee_text = std::string(text(first)) + "." + std::string(text(name));
    const size_t* index = function_index_.find(text(name));
    if (index == nullptr) fail(name, "the module has no function '" + std::string(text(name)) + "'");
    PendingFunction* callee = &functions_[*index];
    if (callee->state == PendingFunction::State::Reading || callee->state == PendingFunction::State::Pending) {
      fail_at(where, "recursive call of '" + std::string(text(name)) + "': recursive functions are not supported");
    }
    const size_t base = operand_stack_.size();
    parse_arguments(depth, callee_text, "", [&](const Token& key) {
      fail(key, "keyword arguments are not supported in calls of module functions");
    });
    const std::span<Node* const> args(operand_stack_.data() + base, operand_stack_.size() - base);
    const Function& target = *callee->fn;
    if (args.size() != target.params().size()) {
      const size_t got = args.size();
      operand_stack_.resize(base);
      fail_at(where, callee_text + " expects " + std::to_string(target.params().size()) + " argument" +
                         (target.params().size() == 1 ? "" : "s") + ", got " + std::to_string(got));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const Node* param = target.params()[i];
      if (types_conflict(param->type(), args[i]->type())) {
        const std::string message = "argument " + std::to_string(i + 1) + " of " + callee_text + " has type " +
                                    args[i]->type()->str() + ", but parameter '" + param->name() + "' is " +
                                    param->type()->str();
        operand_stack_.resize(base);
        fail_at(where, message);
      }
    }
    TypeRef result = target.output() != nullptr ? target.return_type() : Type::unknown();
    Node* node = fn_->add_func_call(std::string(text(name)), args, result);
    operand_stack_.resize(base);
    return node;
  }

  // `R.shape([1, 11, 768])`.
  Node* parse_shape_literal(int depth) {
    check_depth(depth);
    expect(TokenKind::LParen, "'('");
    parse_dims(/*allow_inferred=*/true);
    expect(TokenKind::RParen, "')'");
    return fn_->add_shape(std::vector<Dim>(dims_.begin(), dims_.end()));
  }

  // A constant's value: a number, True/False, or nested lists of them; fills the literal's shape and values.
  struct ConstReader {
    std::vector<int64_t> shape;
    std::vector<double> values;
    int leaf_level = -1;
    bool any_float = false;
    bool any_int = false;
    bool any_bool = false;
  };

  void parse_const_value(ConstReader& out, int level, int depth) {
    check_depth(depth);
    const Token first = tok();
    if (at(TokenKind::LBracket) || at(TokenKind::LParen)) {
      const TokenKind close = at(TokenKind::LBracket) ? TokenKind::RBracket : TokenKind::RParen;
      advance();
      // The enclosing lists have put their levels in `shape` already; -1 marks an extent not yet known.
      if (out.shape.size() == static_cast<size_t>(level)) out.shape.push_back(-1);
      int64_t count = 0;
      while (!at(close)) {
        parse_const_value(out, level + 1, depth + 1);
        ++count;
        if (!at(close)) expect(TokenKind::Comma, "',' or the closing bracket");
      }
      advance();
      if (out.shape[level] == -1) out.shape[level] = count;
      if (out.shape[level] != count) fail(first, "R.const: nested lists must be rectangular");
      return;
    }
    if (out.leaf_level < 0) out.leaf_level = level;
    if (out.leaf_level != level) fail(first, "R.const: nested lists must be rectangular");
    bool negative = false;
    if (at(TokenKind::Minus)) {
      negative = true;
      advance();
    }
    double value = 0;
    if (at(TokenKind::Int)) {
      value = static_cast<double>(int_value(tok(), negative));
      negative = false;
      out.any_int = true;
      advance();
    } else if (at(TokenKind::Float)) {
      value = float_value(tok());
      out.any_float = true;
      advance();
    } else if (!negative && (at_name("True") || at_name("False"))) {
      value = at_name("True") ? 1 : 0;
      out.any_bool = true;
      advance();
    } else if (at_special_float()) {
      value = special_float_value();
      out.any_float = true;
    } else {
      fail(tok(), "expected a number for R.const, found " + describe(tok()));
    }
    out.values.push_back(negative ? -value : value);
  }

  Node* parse_const(SourceLoc where, int depth) {
    expect(TokenKind::LParen, "'('");
    ConstReader value;
    parse_const_value(value, 0, depth + 1);
    if (value.leaf_level >= 0 && static_cast<size_t>(value.leaf_level) != value.shape.size()) {
      fail_at(where, "R.const: nested lists must be rectangular");
    }
    std::optional<DType> dtype;
    if (at(TokenKind::Comma)) {
      advance();
      if (at_name("dtype") && peek().kind == TokenKind::Equal) {
        advance();
        advance();
      }
      if (!at(TokenKind::RParen)) {
        Token name = expect(TokenKind::String, "a dtype string such as \"float32\"");
        const std::string spelling = cur_.lexer.string_value(name);
        dtype = parse_dtype(spelling);
        if (!dtype) fail(name, "unknown dtype \"" + spelling + "\"");
        if (at(TokenKind::Comma)) advance();
      }
    }
    expect(TokenKind::RParen, "')'");
    Literal literal;
    // Python's defaults: a float anywhere makes float32, all-bool makes bool, ints make int32.
    literal.dtype = dtype                                       ? *dtype
                    : value.any_float || value.values.empty()   ? DType::Float32
                    : value.any_bool && !value.any_int          ? DType::Bool
                                                                : DType::Int32;
    for (double& element : value.values) {
      std::string problem;
      if (!fit_to_dtype(element, literal.dtype, problem)) {
        fail_at(where, "R.const: value " + format_value(element) + " " + problem + " for dtype " +
                           std::string(dtype_name(literal.dtype)));
      }
    }
    literal.shape = std::move(value.shape);
    literal.values = std::move(value.values);
    return fn_->add_constant(std::move(literal));
  }

  static std::string format_value(double value) {
    if (value == std::trunc(value) && std::fabs(value) < 1e18) return std::to_string(static_cast<int64_t>(value));
    return attr_value_str(AttrValue(value));
  }

  // An attribute value: number, string, True/False/None, or a list of integers.
  AttrValue parse_attr_value(int depth) {
    check_depth(depth);
    if (at(TokenKind::Minus)) {
      advance();
      if (at(TokenKind::Int)) {
        const int64_t value = int_value(tok(), true);
        advance();
        return value;
      }
      if (at(TokenKind::Float)) {
        const double value = -float_value(tok());
        advance();
        return value;
      }
      if (at_special_float()) return -special_float_value();
      fail(tok(), "expected a number after '-', found " + describe(tok()));
    }
    if (at(TokenKind::Int)) {
      const int64_t value = int_value(tok(), false);
      advance();
      return value;
    }
    if (at(TokenKind::Float)) {
      const double value = float_value(tok());
      advance();
      return value;
    }
    if (at(TokenKind::String)) {
      std::string value = cur_.lexer.string_value(tok());
      advance();
      return value;
    }
    if (at_name("True") || at_name("False")) {
      const bool value = at_name("True");
      advance();
      return value;
    }
    if (at_name("None")) {
      advance();
      return std::monostate{};
    }
    if (at_special_float()) return special_float_value();
    if (at(TokenKind::LBracket) || at(TokenKind::LParen)) {
      const TokenKind close = at(TokenKind::LBracket) ? TokenKind::RBracket : TokenKind::RParen;
      advance();
      std::vector<int64_t> values;
      while (!at(close)) {
        bool negative = false;
        if (at(TokenKind::Minus)) {
          negative = true;
          advance();
        }
        if (!at(TokenKind::Int)) fail(tok(), "list attributes hold integers only, found " + describe(tok()));
        values.push_back(int_value(tok(), negative));
        advance();
        if (!at(close)) expect(TokenKind::Comma, "',' or the closing bracket");
      }
      advance();
      return values;
    }
    fail(tok(), "expected an attribute value (number, string, True/False/None or a list of integers), found " +
                    describe(tok()));
  }

  // ----------------------------------------------------------------------------------------------------------
  // Types

  // `(d0, d1, ...)` or `[d0, ...]` into dims_: extents in TVM's PrimExpr spelling (`16`, `n`, `n * 48`,
  // `(n + 1) // 2`), bare with names declared by T.int64() or as strings naming their symbols.
  void parse_dims(bool allow_inferred) {
    if (!at(TokenKind::LParen) && !at(TokenKind::LBracket)) {
      fail(tok(), "expected a shape such as (16, 16), found " + describe(tok()));
    }
    const TokenKind close = at(TokenKind::LParen) ? TokenKind::RParen : TokenKind::RBracket;
    advance();
    dims_.clear();
    while (!at(close)) {
      if (at(TokenKind::String)) {
        const Token string = tok();
        const std::string spelling = cur_.lexer.string_value(string);
        if (spelling.empty() || spelling == "-1") fail(string, "invalid symbolic dimension \"" + spelling + "\"");
        dims_.push_back(parse_dim_text(string, 1, spelling, false, {}));
        advance();
      } else {
        parse_bare_dim(close, allow_inferred);
      }
      if (!at(close)) expect(TokenKind::Comma, "',' or the closing bracket");
    }
    advance();
  }

  // One unquoted dimension: the tokens up to the next ',' or `close` outside parentheses.
  void parse_bare_dim(TokenKind close, bool allow_inferred) {
    const Token first = tok();
    Token last = first;
    bool any = false;
    int depth = 0;
    while (depth > 0 || (!at(close) && !at(TokenKind::Comma))) {
      switch (tok().kind) {
        case TokenKind::LParen: ++depth; break;
        case TokenKind::RParen: --depth; break;
        case TokenKind::Int:
        case TokenKind::Name:
        case TokenKind::Minus:
        case TokenKind::Operator: break;
        case TokenKind::Dot:    // `T.max(n, 1)`: the expression parser says what is unsupported
        case TokenKind::Comma:  // only inside parentheses here
          break;
        default:
          if (depth > 0 && at(TokenKind::RBracket)) fail(tok(), "missing ')' in a dimension");
          fail(tok(), "expected a dimension, found " + describe(tok()));
      }
      last = tok();
      any = true;
      advance();
    }
    if (!any) fail(first, "expected a dimension, found " + describe(first));
    const std::string_view spelling = cur_.lexer.file().text();
    dims_.push_back(parse_dim_text(first, 0, spelling.substr(first.offset, last.offset + last.length - first.offset),
                                   allow_inferred, [this](std::string_view name) { return check_dim_symbol(name); }));
  }

  // Why a bare name cannot be a symbolic dimension (empty when it can).
  std::string check_dim_symbol(std::string_view name) {
    const NameEntry* found = scope_->names.find(name);
    if (found == nullptr) {
      return "undefined symbolic dimension '" + std::string(name) + "' (declare it with `" + std::string(name) +
             " = T.int64()` or write it as a string)";
    }
    if (found->poisoned) throw StatementError{};
    if (found->node != nullptr) return "'" + std::string(name) + "' is a value, not a symbolic dimension";
    return {};
  }

  // Parses `spelling`, which starts `skip` bytes into `token` (the quote of a string); errors point into it.
  Dim parse_dim_text(const Token& token, size_t skip, std::string_view spelling, bool allow_inferred,
                     const std::function<std::string(std::string_view)>& check_symbol) {
    DimSyntaxError error;
    if (std::optional<Dim> dim = parse_dim(spelling, allow_inferred, check_symbol, error)) return *dim;
    SourceLoc where = loc(token);
    if (spelling.substr(0, error.offset).find('\n') == std::string_view::npos) {
      where.col += static_cast<uint32_t>(skip + error.offset);
      where.length = static_cast<uint32_t>(std::max<size_t>(error.length, 1));
    }
    fail_at(where, error.message);
  }

  // Most bindings of a model repeat one of a few annotations (`R.Tensor((1, 11, 768), dtype="float32")`). A type's
  // meaning depends only on its spelling and the function's symbolic dimensions, which are never redefined, so a
  // function reads each spelling once and looks repeats up by their text.
  TypeRef parse_type(int depth) {
    const std::string_view spelling = depth == 0 ? repeatable_type_text() : std::string_view();
    if (!spelling.empty()) {
      if (const TypeRef* known = scope_->types.find(spelling)) {
        skip_read_text(spelling);
        return *known;
      }
    }
    const uint32_t start = tok().offset;
    TypeRef type = read_type(depth);
    if (!spelling.empty() && prev_.offset + prev_.length == start + spelling.size()) {
      scope_->types.insert(spelling, type);
    }
    return type;
  }

  // The spelling of the type at the current token when it can be looked up: `R.Name(...)` on one line, with
  // balanced brackets, strings without escapes and no comment; else empty.
  std::string_view repeatable_type_text() const {
    if (scope_ == nullptr || cur_.has_peeked || !at_name("R")) return {};
    const std::string_view source = cur_.lexer.file().text();
    const size_t start = tok().offset;
    size_t end = start + 1;
    while (end < source.size() && (source[end] == '.' || text::is_name_char(source[end]))) ++end;
    if (end >= source.size() || source[end] != '(') return {};
    for (int open = 0; end < source.size(); ++end) {
      switch (source[end]) {
        case '(':
        case '[': ++open; break;
        case ')':
        case ']':
          if (--open == 0) return source.substr(start, end + 1 - start);
          break;
        case '"':
        case '\'': {
          const char quote = source[end];
          for (++end; end < source.size() && source[end] != quote; ++end) {
            if (source[end] == '\\' || source[end] == '\n') return {};
          }
          break;
        }
        case '\n':
        case '\r':
        case '#':
        case '\\': return {};
        default: break;
      }
    }
    return {};
  }

  // Moves past `spelling`, which starts at the current token, as if its tokens had been read: prev_ is its
  // closing bracket (for spans that end at the type).
  void skip_read_text(std::string_view spelling) {
    const Token first = tok();
    const auto last = static_cast<uint32_t>(first.offset + spelling.size() - 1);
    const TokenKind closing = spelling.back() == ')' ? TokenKind::RParen : TokenKind::RBracket;
    prev_ = Token{closing, last, 1, first.line, first.col + (last - first.offset)};
    cur_.lexer.skip_to(last + 1);
    cur_.tok = cur_.lexer.next();
  }

  TypeRef read_type(int depth) {
    check_depth(depth);
    const Token first = tok();
    if (!at_name("R")) {
      fail(first, "expected a type such as R.Tensor((16, 16), dtype=\"float32\"), found " + describe(first));
    }
    advance();
    expect(TokenKind::Dot, "'.'");
    Token kind = expect(TokenKind::Name, "a type name");
    const std::string_view name = text(kind);
    if (name == "Tensor") return parse_tensor_type();
    if (name == "Tuple") {
      std::vector<TypeRef> fields;
      if (at(TokenKind::LParen)) {
        advance();
        while (!at(TokenKind::RParen)) {
          fields.push_back(parse_type(depth + 1));
          if (!at(TokenKind::RParen)) expect(TokenKind::Comma, "',' or ')'");
        }
        advance();
      }
      return Type::tuple(fields);
    }
    if (name == "Shape") {
      int rank = -1;
      if (at(TokenKind::LParen)) {
        advance();
        if (at_name("ndim") && peek().kind == TokenKind::Equal) {
          advance();
          advance();
          rank = parse_ndim();
        } else if (!at(TokenKind::RParen)) {
          parse_dims(false);
          rank = static_cast<int>(dims_.size());
        }
        expect(TokenKind::RParen, "')'");
      }
      return Type::shape(rank);
    }
    if (name == "Object") return Type::object();
    fail_at(span(first, kind), "type R." + std::string(name) + " is not supported");
  }

  int parse_ndim() {
    bool negative = false;
    if (at(TokenKind::Minus)) {
      negative = true;
      advance();
    }
    Token digits = expect(TokenKind::Int, "an integer ndim");
    const int64_t value = int_value(digits, negative);
    if (value < -1 || value > 64) fail(digits, "ndim must be between -1 and 64");
    return static_cast<int>(value);
  }

  // After `R.Tensor`: `((d0, d1), "dtype")`, `(shape=..., dtype=..., ndim=...)` or nothing.
  TypeRef parse_tensor_type() {
    if (!at(TokenKind::LParen)) return Type::tensor_of_rank(DType::Unknown, -1);
    advance();
    bool has_shape = false;
    int ndim = -1;
    Token ndim_token;
    DType dtype = DType::Unknown;
    int position = 0;
    while (!at(TokenKind::RParen)) {
      std::string_view key;
      const Token key_token = tok();
      if (at(TokenKind::Name) && peek().kind == TokenKind::Equal) {
        key = text(tok());
        advance();
        advance();
      } else if (position == 0) {
        key = "shape";
      } else if (position == 1) {
        key = "dtype";
      } else {
        fail(tok(), "R.Tensor takes a shape and a dtype; found " + describe(tok()));
      }
      ++position;
      if (key == "shape") {
        if (at_name("None")) {
          advance();
        } else {
          parse_dims(false);  // dims_ holds the shape to the end: nothing below reads another
          has_shape = true;
        }
      } else if (key == "dtype") {
        Token name = expect(TokenKind::String, "a dtype string such as \"float32\"");
        const std::string spelling = cur_.lexer.string_value(name);
        if (!spelling.empty()) {
          std::optional<DType> parsed = parse_dtype(spelling);
          if (!parsed) fail(name, "unknown dtype \"" + spelling + "\"");
          dtype = *parsed;
        }
      } else if (key == "ndim") {
        ndim_token = tok();
        ndim = parse_ndim();
      } else {
        fail(key_token, "R.Tensor has no argument '" + std::string(key) + "'");
      }
      if (!at(TokenKind::RParen)) expect(TokenKind::Comma, "',' or ')'");
    }
    advance();
    if (has_shape && ndim >= 0 && ndim != static_cast<int>(dims_.size())) {
      fail(ndim_token, "ndim=" + std::to_string(ndim) + " contradicts the shape's " + std::to_string(dims_.size()) +
                           " dimensions");
    }
    if (has_shape) return Type::tensor(dtype, dims_);
    return Type::tensor_of_rank(dtype, ndim);
  }

  // ----------------------------------------------------------------------------------------------------------

  DiagnosticEngine& diags_;
  const size_t initial_errors_;
  Cursor cur_;
  Token prev_;
  std::unique_ptr<Module> module_;
  std::deque<PendingFunction> functions_;
  text::NameTable<size_t> function_index_;  // function name -> index in functions_ (the first of that name)
  std::string_view class_name_;
  Function* fn_ = nullptr;
  Scope* scope_ = nullptr;
  BodyState* body_ = nullptr;
  std::vector<Node*> operand_stack_;  // operands of the calls being read, innermost last
  std::vector<Dim> dims_;             // the shape parse_dims() read last
};

}  // namespace

std::unique_ptr<Module> read_module(const SourceFile& source, DiagnosticEngine& diags) {
  return Reader(source, diags).read();
}

}  // namespace dpl
