// AST utilities: file names, copying and comparing patterns, and printing patterns, expressions and whole files.
#include "dpl/compiler/ast.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

namespace dpl::compiler {

namespace {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::string op_names(const CallPattern& call) {
  if (call.composite) return "composite(\"" + *call.composite + "\")";
  std::vector<std::string> names;
  for (const OpName& op : call.ops) names.push_back(op.text);
  std::string callee = join(names, " | ");
  if (!call.op_var.empty()) return "(" + call.op_var + ": " + callee + ")";
  if (call.ops.size() > 1) return "(" + callee + ")";
  return callee;
}

std::string const_args(std::optional<double> value, bool integer_value, std::optional<DType> dtype,
                       const Expr* computed = nullptr) {
  std::vector<std::string> args;
  if (computed != nullptr) args.push_back(to_string(*computed));
  if (value) args.push_back(integer_value ? fmt::format("{}", static_cast<int64_t>(*value)) : format_double(*value));
  if (dtype) args.push_back(std::string(dtype_name(*dtype)));
  return args.empty() ? "const" : "const(" + join(args, ", ") + ")";
}

std::string type_pattern_str(const TypePattern& type) {
  std::vector<std::string> parts;
  if (type.shape) {
    std::vector<std::string> dims;
    for (const DimPattern& dim : *type.shape) {
      dims.push_back(dim.kind == DimPattern::Kind::Any     ? "_"
                     : dim.kind == DimPattern::Kind::Fixed ? std::to_string(dim.extent)
                     : dim.kind == DimPattern::Kind::Var   ? dim.name
                                                           : to_string(dim.written()));
    }
    parts.push_back("(" + join(dims, ", ") + (dims.size() == 1 ? ",)" : ")"));
  } else if (type.dtype) {
    parts.push_back("_");
  }
  if (type.dtype) parts.push_back(std::string(dtype_name(*type.dtype)));
  return "Tensor[" + join(parts, ", ") + "]";
}

}  // namespace

const Expr& DimPattern::written() const { return *std::get<BinaryExpr>(check->node).rhs; }

CallPattern* call_through_bindings(Pattern& pattern) {
  Pattern* target = &pattern;
  while (auto* bind = std::get_if<BindPattern>(&target->node)) target = bind->inner.get();
  return std::get_if<CallPattern>(&target->node);
}

const TypePattern* type_of_pattern(const Pattern& pattern) {
  if (const auto* type = std::get_if<TypePattern>(&pattern.node)) return type;
  if (const auto* call = std::get_if<CallPattern>(&pattern.node); call != nullptr && call->result_type) {
    return &*call->result_type;
  }
  return nullptr;
}

void for_each_dimension_check(const Pattern& pattern, const std::function<void(const Expr&)>& visit) {
  if (const TypePattern* type = type_of_pattern(pattern); type != nullptr && type->shape) {
    for (const DimPattern& dim : *type->shape) {
      if (dim.kind == DimPattern::Kind::Expr) visit(*dim.check);
    }
  }
  for_each_sub_pattern(pattern, [&](const Pattern& inner) { for_each_dimension_check(inner, visit); });
}

std::optional<int64_t> evaluate_dimension(const Expr& written,
                                          const std::function<std::optional<int64_t>(const std::string&)>& value_of) {
  if (const auto* var = std::get_if<VarExpr>(&written.node)) return value_of(var->name);
  if (const auto* literal = std::get_if<LiteralExpr>(&written.node)) return std::get<int64_t>(literal->value);
  const auto& binary = std::get<BinaryExpr>(written.node);
  std::optional<int64_t> lhs = evaluate_dimension(*binary.lhs, value_of);
  std::optional<int64_t> rhs = evaluate_dimension(*binary.rhs, value_of);
  if (!lhs || !rhs) return std::nullopt;
  int64_t result = 0;
  const bool overflow = binary.op == BinaryOp::Add        ? __builtin_add_overflow(*lhs, *rhs, &result)
                        : binary.op == BinaryOp::Subtract ? __builtin_sub_overflow(*lhs, *rhs, &result)
                                                          : __builtin_mul_overflow(*lhs, *rhs, &result);
  return overflow ? std::nullopt : std::optional<int64_t>(result);
}

void for_each_name(const Expr& expr, const std::function<void(const std::string&, SourceLoc)>& visit) {
  if (const auto* var = std::get_if<VarExpr>(&expr.node)) visit(var->name, expr.loc);
  for_each_sub_expr(expr, [&](const Expr& sub) { for_each_name(sub, visit); });
}

std::string format_double(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // `n`: inf and nan stay as they are
  return text;
}

std::string path_basename(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string identifier_stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  if (size_t dot = stem.find('.'); dot != std::string::npos) stem.resize(dot);
  for (char& c : stem) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0]))) stem.insert(0, "_");
  return stem;
}

PatternPtr clone(const Pattern& pattern) {
  auto copy = std::make_unique<Pattern>();
  copy->loc = pattern.loc;
  copy->node = std::visit(Overloaded{
                              [](const WildcardPattern& p) -> decltype(Pattern::node) { return p; },
                              [](const VarPattern& p) -> decltype(Pattern::node) { return p; },
                              [](const ConstPattern& p) -> decltype(Pattern::node) { return p; },
                              [](const TypePattern& p) -> decltype(Pattern::node) { return p; },
                              [](const ParamPattern& p) -> decltype(Pattern::node) { return p; },
                              [](const BindPattern& p) -> decltype(Pattern::node) {
                                return BindPattern{p.name, p.name_loc, clone(*p.inner)};
                              },
                              [](const CallPattern& p) -> decltype(Pattern::node) {
                                CallPattern call{p.ops,  p.op_var, p.op_var_loc, p.optional,   {},
                                                 p.rest, p.attrs,  p.composite,  p.result_type};
                                for (const PatternPtr& operand : p.operands) call.operands.push_back(clone(*operand));
                                return call;
                              },
                              [](const ItemPattern& p) -> decltype(Pattern::node) {
                                return ItemPattern{clone(*p.tuple), p.index};
                              },
                              [](const TuplePattern& p) -> decltype(Pattern::node) {
                                TuplePattern tuple;
                                for (const PatternPtr& field : p.fields) tuple.fields.push_back(clone(*field));
                                tuple.rest = p.rest;
                                return tuple;
                              },
                              [](const DominatorPattern& p) -> decltype(Pattern::node) {
                                return DominatorPattern{clone(*p.parent), p.path, clone(*p.child), p.path_ops};
                              },
                              [](const AltPattern& p) -> decltype(Pattern::node) {
                                AltPattern alt;
                                for (const PatternPtr& alternative : p.alternatives)
                                  alt.alternatives.push_back(clone(*alternative));
                                return alt;
                              },
                          },
                          pattern.node);
  return copy;
}

namespace {

bool same_rest(const std::optional<RestPattern>& a, const std::optional<RestPattern>& b) {
  return a.has_value() == b.has_value() && (!a || a->name == b->name);
}

bool same_op_names(const std::vector<OpName>& a, const std::vector<OpName>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const OpName& x, const OpName& y) { return x.text == y.text; });
}

// `, xs...` after the written operands (fields), or nothing.
std::string rest_str(const std::optional<RestPattern>& rest) { return rest ? rest->name + "..." : std::string(); }

}  // namespace

bool same_pattern(const Pattern& a, const Pattern& b) {
  if (a.node.index() != b.node.index()) return false;
  return std::visit(Overloaded{
                        [](const WildcardPattern&) { return true; },
                        [&](const VarPattern& p) { return p.name == std::get<VarPattern>(b.node).name; },
                        [&](const ConstPattern& p) {
                          const auto& q = std::get<ConstPattern>(b.node);
                          return p.value == q.value && p.integer_value == q.integer_value && p.dtype == q.dtype;
                        },
                        [&](const TypePattern& p) {
                          return p == std::get<TypePattern>(b.node);
                        },
                        [&](const ParamPattern& p) { return p.name == std::get<ParamPattern>(b.node).name; },
                        [&](const BindPattern& p) {
                          const auto& q = std::get<BindPattern>(b.node);
                          return p.name == q.name && same_pattern(*p.inner, *q.inner);
                        },
                        [&](const CallPattern& p) {
                          const auto& q = std::get<CallPattern>(b.node);
                          if (p.ops.size() != q.ops.size() || p.op_var != q.op_var || p.optional != q.optional ||
                              p.composite != q.composite || p.result_type != q.result_type || !same_rest(p.rest, q.rest) ||
                              p.operands.size() != q.operands.size() || p.attrs.size() != q.attrs.size()) {
                            return false;
                          }
                          if (!same_op_names(p.ops, q.ops)) return false;
                          for (size_t i = 0; i < p.attrs.size(); ++i) {
                            if (p.attrs[i].name != q.attrs[i].name || p.attrs[i].literal != q.attrs[i].literal ||
                                p.attrs[i].capture != q.attrs[i].capture) {
                              return false;
                            }
                          }
                          return same_each(p.operands, q.operands, same_pattern);
                        },
                        [&](const ItemPattern& p) {
                          const auto& q = std::get<ItemPattern>(b.node);
                          return p.index == q.index && same_pattern(*p.tuple, *q.tuple);
                        },
                        [&](const TuplePattern& p) {
                          const auto& q = std::get<TuplePattern>(b.node);
                          return same_rest(p.rest, q.rest) && same_each(p.fields, q.fields, same_pattern);
                        },
                        [&](const DominatorPattern& p) {
                          const auto& q = std::get<DominatorPattern>(b.node);
                          return same_op_names(p.path, q.path) && same_pattern(*p.parent, *q.parent) &&
                                 same_pattern(*p.child, *q.child);
                        },
                        [&](const AltPattern& p) {
                          return same_each(p.alternatives, std::get<AltPattern>(b.node).alternatives, same_pattern);
                        },
                    },
                    a.node);
}

size_t count_alternatives(const Pattern& pattern, size_t limit) {
  auto saturate = [&](size_t n) { return std::min(n, limit + 1); };
  return std::visit(Overloaded{
                        [&](const BindPattern& p) { return count_alternatives(*p.inner, limit); },
                        [&](const AltPattern& p) {
                          size_t total = 0;
                          for (const PatternPtr& alternative : p.alternatives) {
                            total = saturate(total + count_alternatives(*alternative, limit));
                          }
                          return total;
                        },
                        [&](const ItemPattern& p) { return count_alternatives(*p.tuple, limit); },
                        [&](const DominatorPattern& p) {
                          return saturate(count_alternatives(*p.parent, limit) * count_alternatives(*p.child, limit));
                        },
                        [&](const TuplePattern& p) {
                          size_t product = 1;
                          for (const PatternPtr& field : p.fields)
                            product = saturate(product * count_alternatives(*field, limit));
                          return product;
                        },
                        [&](const CallPattern& p) {
                          size_t product = 1;
                          for (const PatternPtr& operand : p.operands) {
                            product = saturate(product * count_alternatives(*operand, limit));
                          }
                          size_t total = saturate(product * std::max<size_t>(p.ops.size(), 1));
                          if (p.optional && p.operands.size() == 1) {
                            total = saturate(total + count_alternatives(*p.operands[0], limit));
                          }
                          return total;
                        },
                        [](const auto&) -> size_t { return 1; },
                    },
                    pattern.node);
}

namespace {

// Every combination of the parts' alternatives, the first part's varying slowest.
std::vector<std::vector<PatternPtr>> combinations_of(const std::vector<PatternPtr>& parts) {
  std::vector<std::vector<PatternPtr>> combinations(1);
  for (const PatternPtr& part : parts) {
    std::vector<PatternPtr> choices = expand_alternatives(*part);
    std::vector<std::vector<PatternPtr>> next;
    for (const std::vector<PatternPtr>& prefix : combinations) {
      for (const PatternPtr& choice : choices) {
        std::vector<PatternPtr> extended;
        for (const PatternPtr& q : prefix) extended.push_back(clone(*q));
        extended.push_back(clone(*choice));
        next.push_back(std::move(extended));
      }
    }
    combinations = std::move(next);
  }
  return combinations;
}

}  // namespace

std::vector<PatternPtr> expand_alternatives(const Pattern& pattern) {
  std::vector<PatternPtr> out;
  std::visit(
      Overloaded{
          [&](const BindPattern& p) {
            for (PatternPtr& inner : expand_alternatives(*p.inner)) {
              out.push_back(
                  std::make_unique<Pattern>(Pattern{pattern.loc, BindPattern{p.name, p.name_loc, std::move(inner)}}));
            }
          },
          [&](const AltPattern& p) {
            for (const PatternPtr& alternative : p.alternatives) {
              for (PatternPtr& expanded : expand_alternatives(*alternative)) out.push_back(std::move(expanded));
            }
          },
          [&](const ItemPattern& p) {
            for (PatternPtr& tuple : expand_alternatives(*p.tuple)) {
              out.push_back(std::make_unique<Pattern>(Pattern{pattern.loc, ItemPattern{std::move(tuple), p.index}}));
            }
          },
          [&](const TuplePattern& p) {
            for (std::vector<PatternPtr>& fields : combinations_of(p.fields)) {
              out.push_back(std::make_unique<Pattern>(Pattern{pattern.loc, TuplePattern{std::move(fields), p.rest}}));
            }
          },
          [&](const DominatorPattern& p) {
            std::vector<PatternPtr> parts;
            parts.push_back(clone(*p.parent));
            parts.push_back(clone(*p.child));
            for (std::vector<PatternPtr>& both : combinations_of(parts)) {
              out.push_back(std::make_unique<Pattern>(Pattern{
                  pattern.loc, DominatorPattern{std::move(both[0]), p.path, std::move(both[1]), p.path_ops}}));
            }
          },
          [&](const CallPattern& p) {
            std::vector<std::vector<PatternPtr>> combinations = combinations_of(p.operands);
            // A composite call has no op names but stands for itself once.
            std::vector<OpName> ops = p.composite ? std::vector<OpName>{OpName{}} : p.ops;
            for (const OpName& op : ops) {
              for (std::vector<PatternPtr>& operands : combinations) {
                CallPattern call{p.composite ? std::vector<OpName>{} : std::vector<OpName>{op},
                                 p.op_var,
                                 p.op_var_loc,
                                 false,
                                 {},
                                 p.rest,
                                 p.attrs,
                                 p.composite,
                                 p.result_type};
                for (const PatternPtr& operand : operands) call.operands.push_back(clone(*operand));
                out.push_back(std::make_unique<Pattern>(Pattern{pattern.loc, std::move(call)}));
              }
            }
            if (p.optional && p.operands.size() == 1) {
              for (PatternPtr& bare : expand_alternatives(*p.operands[0])) out.push_back(std::move(bare));
            }
          },
          [&](const auto&) { out.push_back(clone(pattern)); },
      },
      pattern.node);
  return out;
}

std::vector<RootsAlternative> expand_root_alternatives(const Rule& rule) {
  std::vector<RootsAlternative> combinations(1);
  for (const RootDecl& root : rule.roots) {
    std::vector<PatternPtr> choices = expand_alternatives(*root.pattern);
    std::vector<RootsAlternative> next;
    for (const RootsAlternative& prefix : combinations) {
      const size_t ways = root.group ? 1 : choices.size();
      for (size_t k = 0; k < ways; ++k) {
        RootsAlternative extended;
        for (const std::vector<PatternPtr>& patterns : prefix.roots) {
          extended.roots.emplace_back();
          for (const PatternPtr& pattern : patterns) extended.roots.back().push_back(clone(*pattern));
        }
        extended.roots.emplace_back();
        if (root.group) {
          for (const PatternPtr& choice : choices) extended.roots.back().push_back(clone(*choice));
        } else {
          extended.roots.back().push_back(clone(*choices[k]));
        }
        next.push_back(std::move(extended));
      }
    }
    combinations = std::move(next);
  }
  return combinations;
}

std::set<std::string> attribute_captures(const Pattern& pattern) {
  std::set<std::string> names;
  if (const auto* call = std::get_if<CallPattern>(&pattern.node)) {
    for (const PatternAttr& attr : call->attrs) {
      if (!attr.literal) names.insert(attr.capture);
    }
  }
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { names.merge(attribute_captures(sub)); });
  return names;
}

bool calls_extern(const Expr& expr) {
  if (const auto* call = std::get_if<CallExpr>(&expr.node); call != nullptr && call->native != nullptr) return true;
  bool found = false;
  for_each_sub_expr(expr, [&](const Expr& sub) { found = found || calls_extern(sub); });
  return found;
}

std::set<std::string> op_captures(const Pattern& pattern) {
  std::set<std::string> names;
  if (const auto* call = std::get_if<CallPattern>(&pattern.node); call != nullptr && !call->op_var.empty()) {
    names.insert(call->op_var);
  }
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { names.merge(op_captures(sub)); });
  return names;
}

size_t count_root_alternatives(const Rule& rule, size_t limit) {
  size_t product = 1;
  for (const RootDecl& root : rule.roots) {
    product = std::min(product * count_alternatives(*root.pattern, limit), limit + 1);
  }
  return product;
}

std::string to_string(const Pattern& pattern) {
  return std::visit(
      Overloaded{
          [](const WildcardPattern&) -> std::string { return "_"; },
          [](const VarPattern& p) { return p.name; },
          [](const ConstPattern& p) { return const_args(p.value, p.integer_value, p.dtype); },
          [](const TypePattern& p) { return type_pattern_str(p); },
          [](const ParamPattern& p) { return "var(" + (p.name ? "\"" + *p.name + "\"" : std::string()) + ")"; },
          [](const ItemPattern& p) {
            return to_string(*p.tuple) + "[" + (p.index ? std::to_string(*p.index) : std::string("_")) + "]";
          },
          [](const TuplePattern& p) {
            std::vector<std::string> fields;
            for (const PatternPtr& field : p.fields) fields.push_back(to_string(*field));
            if (p.rest) fields.push_back(rest_str(p.rest));
            return "(" + join(fields, ", ") + (fields.size() == 1 && !p.rest ? ",)" : ")");
          },
          [](const DominatorPattern& p) {
            std::vector<std::string> path;
            for (const OpName& op : p.path) path.push_back(op.text);
            std::string path_text = join(path, " | ");
            if (path.size() > 1) path_text = "(" + path_text + ")";
            return "dominates(" + to_string(*p.parent) + ", " + path_text + ", " + to_string(*p.child) + ")";
          },
          [](const BindPattern& p) { return p.name + ": " + to_string(*p.inner); },
          [](const CallPattern& p) {
            std::vector<std::string> args;
            for (const PatternPtr& operand : p.operands) args.push_back(to_string(*operand));
            if (p.rest) args.push_back(rest_str(p.rest));
            for (const PatternAttr& attr : p.attrs) {
              args.push_back(attr.name + "=" + (attr.literal ? attr_value_str(*attr.literal) : attr.capture));
            }
            return op_names(p) + (p.optional ? "?" : "") + "(" + join(args, ", ") + ")" +
                   (p.result_type ? ": " + type_pattern_str(*p.result_type) : "");
          },
          [](const AltPattern& p) {
            std::vector<std::string> parts;
            for (const PatternPtr& alternative : p.alternatives) parts.push_back(to_string(*alternative));
            return "(" + join(parts, " | ") + ")";
          },
      },
      pattern.node);
}

std::string_view binary_op_spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Subtract:
      return "-";
    case BinaryOp::Multiply:
      return "*";
    case BinaryOp::Divide:
      return "/";
    case BinaryOp::Equal:
      return "==";
    case BinaryOp::NotEqual:
      return "!=";
    case BinaryOp::Less:
      return "<";
    case BinaryOp::LessEqual:
      return "<=";
    case BinaryOp::Greater:
      return ">";
    case BinaryOp::GreaterEqual:
      return ">=";
    case BinaryOp::And:
      return "&&";
    case BinaryOp::Or:
      return "||";
  }
  return "?";
}

namespace {

constexpr int kUnaryPrecedence = 6;

int binary_precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or:
      return 1;
    case BinaryOp::And:
      return 2;
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual:
      return 3;
    case BinaryOp::Add:
    case BinaryOp::Subtract:
      return 4;
    case BinaryOp::Multiply:
    case BinaryOp::Divide:
      return 5;
  }
  return 0;
}

// `expr`, in parentheses when it binds less tightly than `minimum`.
std::string parenthesized(const Expr& expr, int minimum) {
  int precedence = 7;
  if (const auto* binary = std::get_if<BinaryExpr>(&expr.node)) precedence = binary_precedence(binary->op);
  if (std::holds_alternative<UnaryExpr>(expr.node)) precedence = kUnaryPrecedence;
  return precedence < minimum ? "(" + to_string(expr) + ")" : to_string(expr);
}

}  // namespace

std::string to_string(const Expr& expr) {
  return std::visit(Overloaded{
                        [](const VarExpr& e) { return e.name; },
                        [](const SpreadExpr& e) { return e.name + "..."; },
                        [](const MemberExpr& e) { return to_string(*e.object) + "." + e.member; },
                        [](const ItemExpr& e) { return to_string(*e.tuple) + "[" + std::to_string(e.index) + "]"; },
                        [](const TupleExpr& e) {
                          std::vector<std::string> fields;
                          for (const ExprPtr& field : e.fields) fields.push_back(to_string(*field));
                          return "(" + join(fields, ", ") + (fields.size() == 1 ? ",)" : ")");
                        },
                        [](const IndexExpr& e) { return to_string(*e.object) + "[" + to_string(*e.index) + "]"; },
                        [](const UnaryExpr& e) {
                          return (e.op == UnaryOp::Negate ? "-" : "!") + parenthesized(*e.operand, kUnaryPrecedence);
                        },
                        [](const BinaryExpr& e) {
                          int precedence = binary_precedence(e.op);
                          // Left-associative: the right operand needs parentheses at equal precedence too.
                          return parenthesized(*e.lhs, precedence) + " " + std::string(binary_op_spelling(e.op)) + " " +
                                 parenthesized(*e.rhs, precedence + 1);
                        },
                        [](const ConstExpr& e) {
                          return e.computed != nullptr ? const_args(std::nullopt, false, e.dtype, e.computed.get())
                                                       : const_args(e.value, false, e.dtype);
                        },
                        [](const LiteralExpr& e) { return attr_value_str(e.value); },
                        [](const CallExpr& e) {
                          std::vector<std::string> args;
                          for (const ExprPtr& operand : e.operands) args.push_back(to_string(*operand));
                          for (const ExprAttr& attr : e.attrs) args.push_back(attr.name + "=" + to_string(*attr.value));
                          if (e.attrs_from) args.push_back("**" + e.attrs_from->name);
                          return e.op.text + "(" + join(args, ", ") + ")";
                        },
                    },
                    expr.node);
}

namespace {

const Pattern& skip_binds(const Pattern& pattern) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return skip_binds(*bind->inner);
  return pattern;
}

// The name an operand pattern gives its value: `x` or `x: ...`.
const std::string* operand_name(const Pattern& operand) {
  if (const auto* var = std::get_if<VarPattern>(&operand.node)) return &var->name;
  if (const auto* bind = std::get_if<BindPattern>(&operand.node)) return &bind->name;
  return nullptr;
}

}  // namespace

std::optional<RootHook> find_root_hook(const Pattern& root, const std::function<bool(const std::string&)>& bound) {
  // Breadth-first over the call patterns below the root, so that the shortest path is found first.
  std::vector<std::pair<const Pattern*, std::vector<size_t>>> level = {{&skip_binds(root), {}}};
  while (!level.empty()) {
    std::vector<std::pair<const Pattern*, std::vector<size_t>>> next;
    for (const auto& [pattern, path] : level) {
      const auto* call = std::get_if<CallPattern>(&pattern->node);
      const auto* tuple = std::get_if<TuplePattern>(&pattern->node);
      if (call == nullptr && tuple == nullptr) continue;
      const std::vector<PatternPtr>& operands = call != nullptr ? call->operands : tuple->fields;
      for (size_t i = 0; i < operands.size(); ++i) {
        std::vector<size_t> deeper = path;
        deeper.push_back(i);
        const std::string* name = operand_name(*operands[i]);
        if (name != nullptr && bound(*name)) return RootHook{std::move(deeper), *name};
        next.emplace_back(&skip_binds(*operands[i]), std::move(deeper));
      }
    }
    level = std::move(next);
  }
  return std::nullopt;
}

const Pattern& pattern_at(const Pattern& root, std::span<const size_t> path) {
  const Pattern* pattern = &skip_binds(root);
  for (size_t index : path) {
    const auto* call = std::get_if<CallPattern>(&pattern->node);
    const std::vector<PatternPtr>& operands =
        call != nullptr ? call->operands : std::get<TuplePattern>(pattern->node).fields;
    pattern = &skip_binds(*operands[index]);
  }
  return *pattern;
}

std::string rhs_to_string(const Rule& rule) {
  std::string text;
  for (const LetBinding& let : rule.lets) text += "let " + let.name + " = " + to_string(*let.value) + "; ";
  if (rule.kind == Rule::Kind::MultiRoot) {
    std::vector<std::string> rewrites;
    for (const RootRewrite& rewrite : rule.rewrites) {
      rewrites.push_back(rewrite.root + " => " + to_string(*rewrite.value));
    }
    return text + join(rewrites, "; ");
  }
  return text + (rule.rhs != nullptr ? to_string(*rule.rhs) : std::string());
}

std::string dump_ast(const AstFile& file) {
  std::ostringstream out;
  out << "file " << file.basename << "\n";
  for (const Import& import : file.imports) out << "  import \"" << import.path << "\"\n";
  for (const ExternDecl& decl : file.externs) {
    out << "  extern " << (decl.kind == ExternDecl::Kind::Predicate ? "predicate " : "rewriter ") << decl.name << "("
        << join(decl.params, ", ") << ") from \"" << decl.header << "\"\n";
  }
  for (const OpDecl& decl : file.ops) {
    std::vector<std::string> params = decl.operands;
    if (decl.variadic) params.back() += "...";
    for (const OpDecl::Attr& attr : decl.attrs) {
      params.push_back(attr.name + ": " + attr.kind + (attr.optional ? "?" : "") +
                       (attr.default_value ? " = " + attr_value_str(*attr.default_value) : ""));
    }
    out << "  op " << decl.name << "(" << join(params, ", ") << ")";
    if (!decl.traits.empty()) out << " : " << join(decl.traits, ", ");
    if (decl.result) out << " -> " << to_string(*decl.result);
    out << "\n";
  }
  for (const PatternMacro& macro : file.macros) {
    out << "  pattern " << macro.name << "(" << join(macro.params, ", ") << ") = " << to_string(*macro.body) << "\n";
  }
  for (const Pass& pass : file.passes) {
    out << "  pass " << pass.name;
    if (pass.implicit) out << " (implicit)";
    if (!pass.description.empty()) out << " \"" << pass.description << "\"";
    out << "\n";
    for (const Rule& rule : pass.rules) {
      bool partition = rule.kind == Rule::Kind::Partition;
      out << (partition ? "    partition \"" : "    rule ") << rule.name << (partition ? "\"" : "") << " (line "
          << rule.name_loc.line << ")";
      if (rule.options.priority != 0) out << " priority " << rule.options.priority;
      if (rule.options.once) out << " once";
      out << "\n";
      if (rule.lhs != nullptr) out << "      match   " << to_string(*rule.lhs) << "\n";
      for (const RootDecl& root : rule.roots) {
        out << "      root    " << (root.group ? "group " : "") << root.name << ": " << to_string(*root.pattern);
        if (root.guard) out << " where " << to_string(*root.guard);
        out << "\n";
      }
      if (rule.guard) out << "      where   " << to_string(*rule.guard) << "\n";
      if (!partition) out << "      rewrite " << rhs_to_string(rule) << "\n";
    }
  }
  for (const PipelineDecl& pipeline : file.pipelines) {
    out << "  pipeline " << pipeline.name << " = " << join(pipeline.passes, ", ") << "\n";
  }
  return out.str();
}

}  // namespace dpl::compiler
