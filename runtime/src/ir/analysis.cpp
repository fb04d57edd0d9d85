// Whole-graph queries: structural equality modulo binding names (iterative, memoized) and the IR verifier.
#include "dpl/ir/analysis.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "dpl/support/format.h"

namespace dpl {

namespace {

// How a node is named in messages: its binding name, else its kind and id.
std::string label(const Node* node) {
  if (!node->name().empty()) return node->name();
  static constexpr const char* kKinds[] = {"param", "const", "call", "tuple", "item", "shape", "fcall"};
  return std::string("<") + kKinds[static_cast<int>(node->kind())] + " #" + std::to_string(node->id()) + ">";
}

bool same_double(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool same_attr(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) return same_double(*x, std::get<double>(b));
  return a == b;
}

std::string literal_str(const Literal& literal) {
  std::string out;
  if (!literal.shape.empty())
    out += dims_str([&] {
             std::vector<Dim> dims;
             for (int64_t extent : literal.shape) dims.push_back(Dim::fixed(extent));
             return dims;
           }()) +
           " ";
  out += std::string(dtype_name(literal.dtype)) + " ";
  if (literal.values.size() == 1) return out + format_double_like_python(literal.values[0]);
  out += "[";
  for (size_t i = 0; i < literal.values.size() && i < 8; ++i) {
    if (i > 0) out += ", ";
    out += format_double_like_python(literal.values[i]);
  }
  return out + (literal.values.size() > 8 ? ", ...]" : "]");
}

bool same_literal(const Literal& a, const Literal& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i)
    if (!same_double(a.values[i], b.values[i])) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// Structural equality

class FunctionComparer {
 public:
  FunctionComparer(const Function& a, const Function& b)
      : a_(a),
        b_(b),
        a_to_b_(a.node_id_bound(), nullptr),
        b_to_a_(b.node_id_bound(), nullptr),
        a_param_pos_(a_to_b_.size(), -1),
        b_param_pos_(b_to_a_.size(), -1) {}

  EqualityResult run() {
    if (a_.params().size() != b_.params().size())
      return differ(std::to_string(a_.params().size()) + " parameters vs " + std::to_string(b_.params().size()));
    for (size_t i = 0; i < a_.params().size(); ++i) {
      const Node* pa = a_.params()[i];
      const Node* pb = b_.params()[i];
      a_param_pos_[pa->id()] = b_param_pos_[pb->id()] = static_cast<int>(i);
      if (pa->type() != pb->type())
        return differ("parameter " + std::to_string(i) + " (" + pa->name() + " vs " + pb->name() + "): type " +
                      type_str(pa->type()) + " vs " + type_str(pb->type()));
    }
    if (a_.return_type() != b_.return_type())
      return differ("return type " + type_str(a_.return_type()) + " vs " + type_str(b_.return_type()));
    if ((a_.output() == nullptr) != (b_.output() == nullptr))
      return differ(a_.output() == nullptr ? "only the second function has an output"
                                           : "only the first function has an output");
    if (a_.output() == nullptr) return {};
    pending_.push_back(Pair{a_.output(), b_.output(), nullptr, nullptr, 0});
    while (!pending_.empty()) {
      Pair pair = pending_.back();
      pending_.pop_back();
      if (!visit(pair)) return result_;
    }
    return {};
  }

 private:
  static std::string type_str(TypeRef type) { return type ? type->str() : "(none)"; }

  EqualityResult differ(const std::string& what) {
    result_.equal = false;
    result_.difference = a_.name() + ": " + what;
    return result_;
  }

  // A pair to compare, and the bindings that use it (to name unnamed inline values such as constants).
  struct Pair {
    const Node* x;
    const Node* y;
    const Node* x_user;
    const Node* y_user;
    size_t operand;
  };

  bool differ_at(const Pair& pair, const std::string& what) {
    const Node* x = pair.x;
    const Node* y = pair.y;
    if (x->name().empty() && y->name().empty() && pair.x_user != nullptr) {
      x = pair.x_user;
      y = pair.y_user;
    }
    std::string where = label(x);
    if (label(y) != where) where += " vs " + label(y);
    if (x != pair.x) where += " operand " + std::to_string(pair.operand);
    differ("binding " + where + ": " + what);
    return false;
  }

  // Inline values (constants, shape literals, tuples) compare by value, as TVM compares them: one shared
  // constant equals two equal ones. Bindings (parameters, calls, items) must correspond one to one.
  static bool compared_by_value(NodeKind kind) {
    return kind == NodeKind::Constant || kind == NodeKind::ShapeLit || kind == NodeKind::Tuple;
  }

  // Compares one pair of nodes and queues their operands; each pair of bindings is compared once.
  bool visit(const Pair& pair) {
    const Node* x = pair.x;
    const Node* y = pair.y;
    if (x->id() >= a_to_b_.size() || y->id() >= b_to_a_.size())
      return differ_at(pair, "uses a node of another function");
    if (!(compared_by_value(x->kind()) && x->kind() == y->kind())) {
      const Node* x_partner = a_to_b_[x->id()];
      const Node* y_partner = b_to_a_[y->id()];
      if (x_partner == y && y_partner == x) return true;
      if (x_partner != nullptr)
        return differ_at(pair, label(x) + " stands for " + label(x_partner) + " elsewhere in the other graph");
      if (y_partner != nullptr)
        return differ_at(pair, label(y) + " stands for " + label(y_partner) + " elsewhere in the first graph");
      a_to_b_[x->id()] = y;
      b_to_a_[y->id()] = x;
    }

    static constexpr const char* kKinds[] = {"parameter",  "constant", "call",         "tuple",
                                             "tuple item", "shape",    "function call"};
    if (x->kind() != y->kind())
      return differ_at(pair,
                       std::string(kKinds[static_cast<int>(x->kind())]) + " vs " + kKinds[static_cast<int>(y->kind())]);
    switch (x->kind()) {
      case NodeKind::Param:
        if (a_param_pos_[x->id()] != b_param_pos_[y->id()])
          return differ_at(pair, "parameter " + std::to_string(a_param_pos_[x->id()]) + " vs parameter " +
                                     std::to_string(b_param_pos_[y->id()]));
        break;
      case NodeKind::Constant:
        if (!same_literal(x->literal(), y->literal()))
          return differ_at(pair, "constant " + literal_str(x->literal()) + " vs " + literal_str(y->literal()));
        break;
      case NodeKind::Call: {
        const OpRegistry& registry = OpRegistry::global();
        if (x->op() != y->op())
          return differ_at(pair, "op " + registry.get(x->op()).name + " vs " + registry.get(y->op()).name);
        const OpInfo& info = registry.get(x->op());
        if (x->attrs().size() != y->attrs().size())
          return differ_at(pair,
                           std::to_string(x->attrs().size()) + " attributes vs " + std::to_string(y->attrs().size()));
        for (size_t i = 0; i < x->attrs().size(); ++i) {
          if (same_attr(x->attr(i), y->attr(i))) continue;
          std::string name = i < info.attrs.size() ? info.attrs[i].name : "#" + std::to_string(i);
          return differ_at(pair, info.name + " attribute " + name + ": " + attr_value_str(x->attr(i)) + " vs " +
                                     attr_value_str(y->attr(i)));
        }
        break;
      }
      case NodeKind::TupleItem:
        if (x->index() != y->index())
          return differ_at(pair, "item " + std::to_string(x->index()) + " vs " + std::to_string(y->index()));
        break;
      case NodeKind::ShapeLit:
        if (!std::ranges::equal(x->shape_value(), y->shape_value()))
          return differ_at(pair, "shape " + dims_str(x->shape_value()) + " vs " + dims_str(y->shape_value()));
        break;
      case NodeKind::FuncCall:
        if (x->callee() != y->callee()) return differ_at(pair, "callee " + x->callee() + " vs " + y->callee());
        break;
      case NodeKind::Tuple: break;
    }
    if (x->num_operands() != y->num_operands())
      return differ_at(pair, std::to_string(x->num_operands()) + " operands vs " + std::to_string(y->num_operands()));
    if (x->type() != y->type()) return differ_at(pair, "type " + type_str(x->type()) + " vs " + type_str(y->type()));
    // Reverse push so the first operand is compared first (differences are reported in reading order).
    for (size_t i = x->num_operands(); i-- > 0;) pending_.push_back(Pair{x->operand(i), y->operand(i), x, y, i});
    return true;
  }

  const Function& a_;
  const Function& b_;
  std::vector<const Node*> a_to_b_;
  std::vector<const Node*> b_to_a_;
  std::vector<int> a_param_pos_;
  std::vector<int> b_param_pos_;
  std::vector<Pair> pending_;
  EqualityResult result_;
};

std::string func_attrs_difference(const Function& a, const Function& b) {
  std::map<std::string, const AttrValue*> left, right;
  for (const FuncAttr& attr : a.attrs()) left[attr.first] = &attr.second;
  for (const FuncAttr& attr : b.attrs()) right[attr.first] = &attr.second;
  for (const auto& [key, value] : left) {
    auto it = right.find(key);
    if (it == right.end()) return "function attribute " + key + " only in the first";
    if (!same_attr(*value, *it->second))
      return "function attribute " + key + ": " + attr_value_str(*value) + " vs " + attr_value_str(*it->second);
  }
  for (const auto& [key, value] : right)
    if (!left.contains(key)) return "function attribute " + key + " only in the second";
  return {};
}

}  // namespace

EqualityResult structurally_equal(const Function& a, const Function& b) { return FunctionComparer(a, b).run(); }

EqualityResult structurally_equal(const Module& a, const Module& b) {
  EqualityResult result;
  for (const std::unique_ptr<Function>& function : a.functions()) {
    const Function* other = b.find(function->name());
    if (other == nullptr) {
      result.equal = false;
      result.difference = "function " + function->name() + " is only in the first module";
      return result;
    }
    if (std::string attrs = func_attrs_difference(*function, *other); !attrs.empty()) {
      result.equal = false;
      result.difference = function->name() + ": " + attrs;
      return result;
    }
    result = structurally_equal(*function, *other);
    if (!result) return result;
  }
  for (const std::unique_ptr<Function>& function : b.functions()) {
    if (a.find(function->name()) == nullptr) {
      result.equal = false;
      result.difference = "function " + function->name() + " is only in the second module";
      return result;
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------
// The verifier

namespace {

// The type a node must have given its operands (nullptr with `error` when inference fails).
TypeRef expected_type(const Node* node, std::string& error) {
  switch (node->kind()) {
    case NodeKind::Param:
    case NodeKind::FuncCall: return node->type();
    case NodeKind::Constant: {
      std::vector<Dim> dims;
      for (int64_t extent : node->literal().shape) dims.push_back(Dim::fixed(extent));
      return Type::tensor(node->literal().dtype, dims);
    }
    case NodeKind::Call: {
      const OpInfo& info = OpRegistry::global().get(node->op());
      if (info.infer == nullptr) return node->type();
      return info.infer(InferInput{node->operands(), node->attrs()}, error);
    }
    case NodeKind::Tuple: {
      std::vector<TypeRef> fields;
      for (const Node* field : node->operands()) fields.push_back(field->type());
      return Type::tuple(fields);
    }
    case NodeKind::TupleItem: {
      TypeRef tuple = node->num_operands() == 1 ? node->operand(0)->type() : nullptr;
      if (tuple == nullptr || !tuple->is_tuple() || node->index() < 0 ||
          static_cast<size_t>(node->index()) >= tuple->fields().size()) {
        error = "item " + std::to_string(node->index()) + " of a value that has no such field";
        return nullptr;
      }
      return tuple->fields()[static_cast<size_t>(node->index())];
    }
    case NodeKind::ShapeLit: return Type::shape(static_cast<int>(node->shape_value().size()));
  }
  return nullptr;
}

// Reports a node that depends on itself (iterative depth-first search with three colors).
std::string find_cycle(const std::vector<Node*>& nodes, uint32_t bound) {
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(bound, kNew);
  std::vector<std::pair<const Node*, size_t>> stack;
  for (const Node* root : nodes) {
    if (root->is_dead() || state[root->id()] != kNew) continue;
    state[root->id()] = kOpen;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == node->num_operands()) {
        state[node->id()] = kDone;
        stack.pop_back();
        continue;
      }
      const Node* operand = node->operand(next++);
      if (state[operand->id()] == kOpen)
        return label(operand) + " depends on itself (a cycle through " + label(node) + ")";
      if (state[operand->id()] == kNew) {
        state[operand->id()] = kOpen;
        stack.emplace_back(operand, 0);
      }
    }
  }
  return {};
}

std::string verify_structure(const Function& function) {
  const uint32_t bound = function.node_id_bound();
  constexpr size_t kAbsent = static_cast<size_t>(-1);
  const std::vector<Node*>& nodes = function.nodes();
  std::vector<size_t> position(bound, kAbsent);
  // Where `node` is in nodes(); kAbsent also for a node of another function (its id may be out of range or taken).
  auto position_of = [&](const Node* node) {
    if (node->id() >= bound) return kAbsent;
    size_t at = position[node->id()];
    return at != kAbsent && nodes[at] == node ? at : kAbsent;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* node = nodes[i];
    if (node == nullptr) return "nodes() holds a null entry at " + std::to_string(i);
    if (node->is_dead()) continue;
    if (node->id() >= bound) return label(node) + " belongs to another function";
    if (position[node->id()] != kAbsent) return label(node) + " appears twice in nodes()";
    position[node->id()] = i;
  }
  for (const Node* param : function.params()) {
    if (param->kind() != NodeKind::Param) return label(param) + " is listed as a parameter but is not one";
    if (param->is_dead() || position_of(param) == kAbsent) return "parameter " + label(param) + " is not in nodes()";
  }
  const Node* output = function.output();
  if (output == nullptr) return "the function has no output";
  if (output->is_dead() || position_of(output) == kAbsent) return "the output " + label(output) + " is not live";

  // Operands: live, listed, earlier. Counting slots and use-list entries finds any use list that is off.
  size_t slots = 0;
  size_t listed = 0;
  for (const Node* node : nodes) {
    if (node->is_dead()) continue;
    for (const Node* operand : node->operands()) {
      if (operand == nullptr) return label(node) + " has a null operand";
      if (operand->is_dead()) return label(node) + " uses the removed node " + label(operand);
      if (position_of(operand) == kAbsent) return label(node) + " uses " + label(operand) + ", which is not in nodes()";
      if (function.order_is_topological() && position[operand->id()] >= position[node->id()])
        return label(node) + " comes before its operand " + label(operand) + " in nodes()";
    }
    slots += node->num_operands();
    listed += node->num_users();
  }
  if (!function.order_is_topological())
    if (std::string cycle = find_cycle(nodes, bound); !cycle.empty()) return cycle;

  std::vector<uint32_t> count(bound, 0);
  for (const Node* node : nodes) {
    if (node->is_dead()) continue;
    for (const Node* user : node->users()) {
      if (user == nullptr) return "the use list of " + label(node) + " holds a null entry";
      if (user->is_dead()) return "the use list of " + label(node) + " names the removed node " + label(user);
      if (position_of(user) == kAbsent)
        return "the use list of " + label(node) + " names " + label(user) + ", which is not in nodes()";
      ++count[user->id()];
    }
    for (const Node* user : node->users()) {
      if (count[user->id()] == 0) continue;  // already checked
      size_t uses = static_cast<size_t>(std::ranges::count(user->operands(), node));
      if (uses != count[user->id()])
        return "the use list of " + label(node) + " names " + label(user) + " " + std::to_string(count[user->id()]) +
               " times, but it is used " + std::to_string(uses) + " times there";
      count[user->id()] = 0;
    }
  }
  if (slots != listed) {
    for (const Node* node : nodes) {
      if (node->is_dead()) continue;
      for (const Node* operand : node->operands())
        if (std::ranges::find(operand->users(), node) == operand->users().end())
          return "the use list of " + label(operand) + " misses its user " + label(node);
    }
    return "use lists hold " + std::to_string(listed) + " entries for " + std::to_string(slots) + " uses";
  }

  for (const Node* node : nodes) {
    if (node->is_dead()) continue;
    if (node->type() == nullptr) return label(node) + " has no type";
    if (node->kind() == NodeKind::Constant) {
      int64_t elements = 1;
      for (int64_t extent : node->literal().shape) elements *= extent;
      if (static_cast<size_t>(elements) != node->literal().values.size())
        return "constant " + label(node) + " has " + std::to_string(node->literal().values.size()) +
               " values for shape " + std::to_string(elements) + " elements";
    }
    std::string error;
    TypeRef expected = expected_type(node, error);
    if (expected == nullptr) return label(node) + ": type inference fails: " + error;
    if (expected != node->type())
      return label(node) + " has type " + node->type()->str() + " but its definition gives " + expected->str();
  }

  // The count of live calls per op, which lets the driver skip a pass whose rules cannot match here.
  std::vector<uint32_t> calls(OpRegistry::global().size(), 0);
  for (const Node* node : nodes) {
    if (!node->is_dead() && node->is_call() && node->op() < calls.size()) ++calls[node->op()];
  }
  for (size_t op = 0; op < calls.size(); ++op) {
    const uint32_t counted = function.num_calls_of(static_cast<OpId>(op));
    if (counted != calls[op])
      return "the function counts " + std::to_string(counted) + " calls of " +
             OpRegistry::global().get(static_cast<OpId>(op)).name + " but holds " + std::to_string(calls[op]);
  }
  return {};
}

}  // namespace

std::string verify(const Function& function) {
  std::string problem = verify_structure(function);
  return problem.empty() ? problem : function.name() + ": " + problem;
}

std::string verify(const Module& module) {
  for (const std::unique_ptr<Function>& function : module.functions()) {
    if (std::string problem = verify(*function); !problem.empty()) return problem;
    for (const Node* node : function->nodes()) {
      if (node->is_dead() || node->kind() != NodeKind::FuncCall) continue;
      if (module.find(node->callee()) == nullptr)
        return function->name() + ": " + label(node) + " calls the unknown function " + node->callee();
    }
  }
  return {};
}

}  // namespace dpl
