// A scan of a TVMScript file's tokens for calls of opaque ONNX ops, registering each op from its calls' attributes.
#include "opaque_calls.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dpl/ir/opaque_ops.h"
#include "lexer.h"

namespace dpl::text {

namespace {

struct AttrUse {
  std::string_view name;
  OpaqueAttrValues values;  // what every call gives it
  OpaqueAttrValues first;   // what the first call gives it
};

struct CallUse {
  SourceLoc where;
  uint32_t line = 0;
  std::vector<std::string_view> attrs;  // named, in order
};

// An op called in the file: its calls in the order they start.
struct OpUse {
  std::string name;
  std::vector<CallUse> calls;
  std::vector<AttrUse> attrs;  // every name any call gives, in the order first seen

  AttrUse& attr(std::string_view attr_name) {
    auto it = std::find_if(attrs.begin(), attrs.end(), [&](const AttrUse& use) { return use.name == attr_name; });
    if (it != attrs.end()) return *it;
    return attrs.emplace_back(AttrUse{attr_name, {}, {}});
  }
};

// The value an attribute's first token (after an optional '-') starts, as the reader will read it; nullopt for
// tokens the reader rejects (it reports them).
std::optional<AttrValue> value_kind_of(const Lexer& lexer, const Token& token) {
  switch (token.kind) {
    case TokenKind::Int: return int64_t{0};
    case TokenKind::Float: return 0.0;
    case TokenKind::String: return std::string();
    case TokenKind::LBracket:
    case TokenKind::LParen: return std::vector<int64_t>();
    case TokenKind::Name: {
      const std::string_view name = lexer.text(token);
      if (name == "None") return std::monostate{};
      if (name == "True" || name == "False") return false;
      if (name == "inf" || name == "nan" || name == "float") return 0.0;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

AttrValue zero_of(AttrKind kind) {
  switch (kind) {
    case AttrKind::Bool: return false;
    case AttrKind::Int:
    case AttrKind::IntOrIntList: return int64_t{0};
    case AttrKind::Float: return 0.0;
    case AttrKind::String:
    case AttrKind::DType: return std::string();
    case AttrKind::IntList: return std::vector<int64_t>();
    default: return std::monostate{};  // the optional kinds
  }
}

class OpaqueCallScan {
 public:
  OpaqueCallScan(const SourceFile& file, DiagnosticEngine& diags) : lexer_(file, diags), diags_(diags) {
    lexer_.set_quiet(true);  // the reader reports lexical errors
  }

  void run() {
    for (Token token = lexer_.next(); token.kind != TokenKind::End; token = lexer_.next()) step(token);
    for (OpUse& op : ops_) register_op(op);
  }

 private:
  // An open call: the op, its call, and the bracket depth of its arguments.
  struct OpenCall {
    size_t op;
    size_t call;
    int depth;
  };

  void step(const Token& token) {
    if (awaiting_value_) take_value(token);
    follow_path(token);
    switch (token.kind) {
      case TokenKind::LParen:
      case TokenKind::LBracket:
      case TokenKind::LBrace: ++depth_; break;
      case TokenKind::RParen:
      case TokenKind::RBracket:
      case TokenKind::RBrace:
        --depth_;
        while (!open_.empty() && depth_ < open_.back().depth) open_.pop_back();
        break;
      case TokenKind::Equal:
        if (previous_.kind == TokenKind::Name && !open_.empty() && depth_ == open_.back().depth) {
          CallUse& call = ops_[open_.back().op].calls[open_.back().call];
          const std::string_view name = lexer_.text(previous_);
          if (std::find(call.attrs.begin(), call.attrs.end(), name) == call.attrs.end()) call.attrs.push_back(name);
          awaiting_value_ = true;
          negated_ = false;
          value_of_ = name;
          return;  // the value starts with the next token
        }
        break;
      case TokenKind::Newline:  // never inside brackets: a statement ended
        open_.clear();
        depth_ = 0;
        break;
      default: break;
    }
    previous_ = token;
  }

  // Follows `R . onnx (. Name)* (`: the start of a call of an op in the opaque namespace.
  void follow_path(const Token& token) {
    const bool name = token.kind == TokenKind::Name;
    if (name && path_.empty() && lexer_.text(token) == "R" && previous_.kind != TokenKind::Dot) {
      path_first_ = token;
      path_ = "R";
      expect_dot_ = true;
      return;
    }
    if (path_.empty()) return;
    if (expect_dot_ && token.kind == TokenKind::Dot) {
      path_ += '.';
      expect_dot_ = false;
      return;
    }
    if (!expect_dot_ && name) {
      path_ += lexer_.text(token);
      path_last_ = token;
      expect_dot_ = true;
      return;
    }
    if (expect_dot_ && token.kind == TokenKind::LParen && is_onnx_opaque_name(path_)) open_call(path_.substr(2));
    path_.clear();
  }

  void open_call(const std::string& name) {
    auto [index, fresh] = op_index_.try_emplace(name, ops_.size());
    if (fresh) ops_.push_back(OpUse{name, {}, {}});
    OpUse& op = ops_[index->second];
    SourceLoc where = lexer_.loc(path_first_);
    if (path_last_.line == path_first_.line) where.length = path_last_.offset + path_last_.length - path_first_.offset;
    op.calls.push_back(CallUse{where, path_first_.line, {}});
    open_.push_back(OpenCall{index->second, op.calls.size() - 1, depth_ + 1});
  }

  void take_value(const Token& token) {
    if (token.kind == TokenKind::Minus && !negated_) {
      negated_ = true;
      return;
    }
    awaiting_value_ = false;
    const std::optional<AttrValue> value = value_kind_of(lexer_, token);
    if (!value || open_.empty()) return;
    OpUse& op = ops_[open_.back().op];
    AttrUse& attr = op.attr(value_of_);
    attr.values.add(*value);
    if (open_.back().call == 0) attr.first.add(*value);
  }

  void register_op(const OpUse& op) {
    if (OpRegistry::global().find(op.name) != nullptr) return;
    const CallUse& first = op.calls.front();
    if (std::find(first.attrs.begin(), first.attrs.end(), kResultTypesAttr) == first.attrs.end()) {
      return;  // not an opaque call: the reader reports the unknown op
    }
    std::vector<AttrSpec> specs;
    for (std::string_view name : first.attrs) {
      if (name == kResultTypesAttr) continue;
      auto use = std::find_if(op.attrs.begin(), op.attrs.end(), [&](const AttrUse& attr) { return attr.name == name; });
      // Values of clashing kinds: the first call's kind, so that the reader reports the others where they are.
      // Values the reader rejects count for nothing (it reports them).
      std::optional<AttrKind> kind;
      if (use != op.attrs.end()) kind = use->values.kind() ? use->values.kind() : use->first.kind();
      const AttrKind chosen = kind.value_or(AttrKind::OptString);
      specs.push_back(AttrSpec{std::string(name), chosen, zero_of(chosen)});
    }
    std::string error;
    if (!register_onnx_opaque_op(op.name, std::move(specs), error)) {
      diags_.error(first.where, "cannot register the opaque op '" + op.name + "': " + error);
      return;
    }
    for (size_t i = 1; i < op.calls.size(); ++i) {
      const CallUse& call = op.calls[i];
      std::string missing;
      for (std::string_view name : first.attrs) {
        if (std::find(call.attrs.begin(), call.attrs.end(), name) != call.attrs.end()) continue;
        missing += (missing.empty() ? "'" : ", '") + std::string(name) + "'";
      }
      if (missing.empty()) continue;
      diags_.error(call.where, "R." + op.name + " is called without " + missing + ", which its call on line " +
                                   std::to_string(first.line) +
                                   " gives: the calls of an opaque op read from text give the same attributes "
                                   "(its signature is made from them)");
    }
  }

  Lexer lexer_;
  DiagnosticEngine& diags_;
  std::vector<OpUse> ops_;  // in the order of their first calls
  std::unordered_map<std::string, size_t> op_index_;
  std::vector<OpenCall> open_;
  int depth_ = 0;
  Token previous_;
  // The dotted name being followed.
  std::string path_;
  Token path_first_, path_last_;
  bool expect_dot_ = false;
  // After `name=` inside an open call: the next token starts the value of `value_of_`.
  bool awaiting_value_ = false;
  bool negated_ = false;
  std::string_view value_of_;
};

}  // namespace

void register_opaque_calls(const SourceFile& file, DiagnosticEngine& diags) {
  if (file.text().find("R.onnx.") == std::string::npos) return;  // nothing to scan for: no cost
  OpaqueCallScan(file, diags).run();
}

}  // namespace dpl::text
