// The reference interpreter: evaluation order, value bookkeeping, type checks, random inputs and value comparison.
#include "dpl/interp/interpreter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "kernels.h"

namespace dpl {

using interp::fail;

namespace {

using SymbolTable = std::map<std::string, int64_t, std::less<>>;

// Calls of other functions nest at most this deep (a recursive module would otherwise never stop).
constexpr int kMaxCallDepth = 64;

std::string node_description(const Node& node) {
  const std::string name = node.name().empty() ? fmt::format("%{}", node.id()) : "'" + node.name() + "'";
  switch (node.kind()) {
    case NodeKind::Param: return "parameter " + name;
    case NodeKind::Constant: return "constant " + name;
    case NodeKind::Call: {
      const OpRegistry& registry = OpRegistry::global();
      const std::string op = node.op() < registry.size() ? registry.get(node.op()).name : "<unknown op>";
      return fmt::format("binding {} ({})", name, op);
    }
    case NodeKind::Tuple: return "tuple " + name;
    case NodeKind::TupleItem: return "tuple item " + name;
    case NodeKind::ShapeLit: return "shape " + name;
    case NodeKind::FuncCall: return fmt::format("binding {} (call of {})", name, node.callee());
  }
  return name;
}

// An extent's value from the symbols' values (nullopt while one of its symbols has none).
std::optional<int64_t> dim_value(Dim dim, const SymbolTable& symbols) {
  return dim.evaluate([&symbols](Dim symbol) -> std::optional<int64_t> {
    const auto bound = symbols.find(symbol.symbol_name());
    if (bound == symbols.end()) return std::nullopt;
    return bound->second;
  });
}

// Checks `value` against a declared type; symbolic dims bind on first sight and must agree afterwards.
// Returns an empty string, or what differs.

std::string type_mismatch(const Value& value, TypeRef type, SymbolTable& symbols) {
  if (type == nullptr) return "";
  switch (type->kind()) {
    case TypeKind::Unknown:
    case TypeKind::Object: return "";
    case TypeKind::Tensor: {
      if (!value.is_tensor()) return fmt::format("expected {}, got {}", type->str(), value.type_str());
      const Tensor& tensor = value.tensor();
      bool equal = (type->dtype() == DType::Unknown || type->dtype() == tensor.dtype()) &&
                   (type->rank() < 0 || type->rank() == tensor.rank());
      if (equal && type->has_shape()) {
        for (size_t d = 0; d < type->dims().size(); ++d) {
          const Dim dim = type->dims()[d];
          const int64_t actual = tensor.shape()[d];
          if (!dim.is_symbol()) {  // an extent or an expression (`n * 2`: checked once its symbols are bound)
            const std::optional<int64_t> expected = dim_value(dim, symbols);
            equal = equal && (!expected || *expected == actual);
            continue;
          }
          const auto [bound, inserted] = symbols.emplace(std::string(dim.symbol_name()), actual);
          equal = equal && (inserted || bound->second == actual);
        }
      }
      return equal ? "" : fmt::format("expected {}, got {}", type->str(), tensor.type_str());
    }
    case TypeKind::Tuple: {
      if (!value.is_tuple() || value.fields().size() != type->fields().size()) {
        return fmt::format("expected {}, got {}", type->str(), value.type_str());
      }
      for (size_t i = 0; i < value.fields().size(); ++i) {
        std::string field = type_mismatch(value.fields()[i], type->fields()[i], symbols);
        if (!field.empty()) return fmt::format("field {}: {}", i, field);
      }
      return "";
    }
    case TypeKind::Shape:
      if (!value.is_shape() || (type->rank() >= 0 && static_cast<size_t>(type->rank()) != value.dims().size())) {
        return fmt::format("expected {}, got {}", type->str(), value.type_str());
      }
      return "";
  }
  return "";
}

// The nodes the output depends on, operands before users (a depth-first post-order from the output). Computed
// here rather than taken from Function::nodes(), which is not topological between a rewrite and compact().
std::vector<const Node*> evaluation_order(const Function& function) {
  if (function.output() == nullptr) fail("the function has no output");
  enum class Mark : uint8_t { Unvisited, InProgress, Done };
  std::unordered_map<const Node*, Mark> marks;
  std::vector<const Node*> order;
  std::vector<std::pair<const Node*, size_t>> stack;  // node, next operand to visit
  stack.emplace_back(function.output(), 0);
  marks[function.output()] = Mark::InProgress;
  while (!stack.empty()) {
    const Node* node = stack.back().first;
    const size_t next = stack.back().second;
    if (next == node->num_operands()) {
      marks[node] = Mark::Done;
      order.push_back(node);
      stack.pop_back();
      continue;
    }
    ++stack.back().second;
    const Node* operand = node->operand(next);
    if (operand == nullptr) fail(fmt::format("{} has a missing operand", node_description(*node)));
    Mark& mark = marks[operand];
    if (mark == Mark::InProgress)
      fail(fmt::format("{} depends on itself (the graph has a cycle)", node_description(*operand)));
    if (mark == Mark::Unvisited) {
      mark = Mark::InProgress;
      stack.emplace_back(operand, 0);
    }
  }
  return order;
}

struct Context {
  const Interpreter& interpreter;
  const std::map<OpId, KernelFn>& custom_kernels;
  const Module* module;
  int depth;
};

Value evaluate_function(const Context& context, const Function& function, std::span<const Value> args);

Value constant_value(const Node& node) {
  const Literal& literal = node.literal();
  const std::optional<int64_t> count = checked_num_elements(literal.shape);
  if (!count || static_cast<size_t>(*count) != literal.values.size()) {
    fail(
        fmt::format("the literal has {} values for shape ({})", literal.values.size(), fmt::join(literal.shape, ", ")));
  }
  if (literal.dtype == DType::Unknown) fail("the literal has no dtype");
  return Tensor::from_values(literal.dtype, literal.shape, literal.values);
}

Value shape_value(const Node& node, const SymbolTable& symbols) {
  std::vector<int64_t> dims;
  for (const Dim& dim : node.shape_value()) {
    if (dim.is_static() || dim.is_inferred()) {  // reshape resolves an inferred -1
      dims.push_back(dim.is_static() ? dim.extent() : -1);
      continue;
    }
    const std::optional<int64_t> value = dim_value(dim, symbols);
    if (!value) {
      fail(fmt::format("symbolic dimension '{}' has no value (give it in EvalOptions::dims)", dim.symbol_name()));
    }
    dims.push_back(*value);
  }
  return Value::shape(std::move(dims));
}

Value call_value(const Context& context, const Node& node, std::span<const Value> operands) {
  const OpRegistry& registry = OpRegistry::global();
  if (node.op() >= registry.size()) fail(fmt::format("unknown op id {}", node.op()));
  if (const auto custom = context.custom_kernels.find(node.op()); custom != context.custom_kernels.end()) {
    return custom->second(node, operands);
  }
  const interp::BuiltinKernel kernel = interp::builtin_kernel(node.op());
  if (kernel == nullptr) {
    fail(fmt::format("op '{}' has no interpreter kernel (register one with Interpreter::register_kernel)",
                     registry.get(node.op()).name));
  }
  return kernel(interp::KernelArgs(node, operands, context.interpreter.options().max_elements));
}

Value node_value(const Context& context, const Node& node, std::span<const Value> operands,
                 const std::unordered_map<const Node*, size_t>& param_index, std::span<const Value> args,
                 const SymbolTable& symbols) {
  switch (node.kind()) {
    case NodeKind::Param: {
      const auto found = param_index.find(&node);
      if (found == param_index.end()) fail("the parameter belongs to another function");
      return args[found->second];
    }
    case NodeKind::Constant: return constant_value(node);
    case NodeKind::Call: return call_value(context, node, operands);
    case NodeKind::Tuple: return Value::tuple(std::vector<Value>(operands.begin(), operands.end()));
    case NodeKind::TupleItem: {
      if (operands.size() != 1 || !operands[0].is_tuple()) fail("the operand is not a tuple");
      const std::vector<Value>& fields = operands[0].fields();
      if (node.index() < 0 || static_cast<size_t>(node.index()) >= fields.size()) {
        fail(fmt::format("index {} is out of range for a tuple of {} fields", node.index(), fields.size()));
      }
      return fields[static_cast<size_t>(node.index())];
    }
    case NodeKind::ShapeLit: return shape_value(node, symbols);
    case NodeKind::FuncCall: {
      if (context.module == nullptr) fail("calls of other functions need the module (use evaluate(module, ...))");
      const Function* callee = context.module->find(node.callee());
      if (callee == nullptr) fail(fmt::format("the module has no function '{}'", node.callee()));
      if (context.depth >= kMaxCallDepth) fail(fmt::format("calls nest deeper than {}", kMaxCallDepth));
      const Context inner{context.interpreter, context.custom_kernels, context.module, context.depth + 1};
      return evaluate_function(inner, *callee, operands);
    }
  }
  fail("unknown node kind");
}

Value evaluate_function(const Context& context, const Function& function, std::span<const Value> args) {
  try {
    const std::span<Node* const> params = function.params();
    if (args.size() != params.size()) {
      fail(fmt::format("{} argument(s) for {} parameter(s)", args.size(), params.size()));
    }
    const EvalOptions& options = context.interpreter.options();
    SymbolTable symbols = options.dims;
    std::unordered_map<const Node*, size_t> param_index;
    for (size_t i = 0; i < params.size(); ++i) {
      param_index[params[i]] = i;
      const std::string mismatch = type_mismatch(args[i], params[i]->type(), symbols);
      if (!mismatch.empty()) fail(fmt::format("argument {} for parameter '{}': {}", i, params[i]->name(), mismatch));
    }
    const std::vector<const Node*> order = evaluation_order(function);
    std::unordered_map<const Node*, size_t> slot;
    std::vector<size_t> remaining_uses(order.size(), 0);
    for (size_t i = 0; i < order.size(); ++i) {
      slot[order[i]] = i;
      for (const Node* operand : order[i]->operands()) ++remaining_uses[slot.at(operand)];
    }
    std::vector<Value> values(order.size());
    std::vector<Value> operand_values;
    for (size_t i = 0; i < order.size(); ++i) {
      const Node& node = *order[i];
      try {
        operand_values.clear();
        for (const Node* operand : node.operands()) operand_values.push_back(values[slot.at(operand)]);
        Value value = node_value(context, node, operand_values, param_index, args, symbols);
        if (options.check_types) {
          const std::string mismatch = type_mismatch(value, node.type(), symbols);
          if (!mismatch.empty()) fail("the computed value differs from the declared type: " + mismatch);
        }
        values[i] = std::move(value);
      } catch (const EvalError& error) {
        throw EvalError(fmt::format("{}: {}", node_description(node), error.what()));
      } catch (const std::bad_alloc&) {
        throw EvalError(fmt::format("{}: out of memory", node_description(node)));
      } catch (const std::exception& error) {  // e.g. std::invalid_argument from a tensor factory
        throw EvalError(fmt::format("{}: {}", node_description(node), error.what()));
      }
      // Frees values nobody needs any more: model activations would otherwise pile up.
      operand_values.clear();
      for (const Node* operand : node.operands()) {
        const size_t operand_slot = slot.at(operand);
        if (--remaining_uses[operand_slot] == 0) values[operand_slot] = Value();
      }
    }
    return std::move(values.back());  // the output is last in the order
  } catch (const EvalError& error) {
    throw EvalError(fmt::format("in function '{}': {}", function.name(), error.what()));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Value

Value Value::tuple(std::vector<Value> fields) {
  Value value;
  value.fields_ = std::move(fields);
  return value;
}

Value Value::shape(std::vector<int64_t> dims) {
  Value value;
  value.kind_ = Kind::Shape;
  value.dims_ = std::move(dims);
  return value;
}

std::string Value::type_str() const {
  switch (kind_) {
    case Kind::Tensor: return tensor_.type_str();
    case Kind::Shape: return fmt::format("shape({})", fmt::join(dims_, ", "));
    case Kind::Tuple: {
      std::string text = "(";
      for (size_t i = 0; i < fields_.size(); ++i) text += (i == 0 ? "" : ", ") + fields_[i].type_str();
      return text + ")";
    }
  }
  return "";
}

// ---------------------------------------------------------------------------------------------------------------
// Interpreter

Interpreter::Interpreter(EvalOptions options) : options_(std::move(options)) {}

EvalResult Interpreter::evaluate(const Module& module, const Function& function, std::span<const Value> args) const {
  EvalResult result;
  try {
    result.value = evaluate_function(Context{*this, custom_kernels_, &module, 0}, function, args);
  } catch (const EvalError& error) {
    result.error = error.what();
  } catch (const std::bad_alloc&) {
    result.error = fmt::format("in function '{}': out of memory", function.name());
  }
  return result;
}

EvalResult Interpreter::evaluate(const Module& module, const Function& function, std::span<const Tensor> args) const {
  const std::vector<Value> values(args.begin(), args.end());
  return evaluate(module, function, values);
}

EvalResult Interpreter::evaluate(const Function& function, std::span<const Tensor> args) const {
  EvalResult result;
  const std::vector<Value> values(args.begin(), args.end());
  try {
    result.value = evaluate_function(Context{*this, custom_kernels_, nullptr, 0}, function, values);
  } catch (const EvalError& error) {
    result.error = error.what();
  } catch (const std::bad_alloc&) {
    result.error = fmt::format("in function '{}': out of memory", function.name());
  }
  return result;
}

void Interpreter::register_kernel(OpId op, KernelFn kernel) { custom_kernels_[op] = std::move(kernel); }

bool Interpreter::has_kernel(OpId op) const {
  return custom_kernels_.count(op) != 0 || interp::builtin_kernel(op) != nullptr;
}

// ---------------------------------------------------------------------------------------------------------------
// Random inputs

namespace {

// One use of a value: the user and the operand position.
struct Use {
  const Node* user;
  size_t operand;
};

// Whether a user passes the values of operand `operand` on unchanged (moved, copied, selected or cast).
bool passes_values_on(const Node& user, size_t operand) {
  if (user.kind() == NodeKind::Tuple || user.kind() == NodeKind::TupleItem) return true;
  if (!user.is_call()) return false;
  switch (user.op()) {
    case op::reshape:
    case op::permute_dims:
    case op::broadcast_to:
    case op::expand_dims:
    case op::squeeze:
    case op::strided_slice:
    case op::split:
    case op::take: return operand == 0;
    case op::concat:
    case op::astype: return true;
    default: return false;
  }
}

// Whether a user computes elementwise arithmetic (through which a 0/1 input stays meaningful as a mask).
bool computes_elementwise(const Node& user) {
  if (!user.is_call()) return false;
  switch (user.op()) {
    case op::add:
    case op::subtract:
    case op::multiply:
    case op::negative:
    case op::abs:
    case op::maximum:
    case op::minimum: return true;
    default: return false;
  }
}

// Every use of `start`'s values, looking through users for which `look_through` holds.
template <typename LookThrough>
std::vector<Use> uses_through(const Node* start, LookThrough look_through) {
  std::vector<Use> uses;
  std::vector<const Node*> worklist = {start};
  std::unordered_set<const Node*> seen = {start};
  while (!worklist.empty()) {
    const Node* value = worklist.back();
    worklist.pop_back();
    std::unordered_set<const Node*> users_done;  // users() lists a user once per use
    for (const Node* user : value->users()) {
      if (user->is_dead() || !users_done.insert(user).second) continue;
      for (size_t i = 0; i < user->num_operands(); ++i) {
        if (user->operand(i) != value) continue;
        if (look_through(*user, i)) {
          if (seen.insert(user).second) worklist.push_back(user);
        } else {
          uses.push_back({user, i});
        }
      }
    }
  }
  return uses;
}

std::optional<std::vector<int64_t>> static_dims(TypeRef type) {
  if (type == nullptr || !type->is_tensor() || !type->has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& dim : type->dims()) {
    if (!dim.is_static()) return std::nullopt;
    dims.push_back(dim.extent());
  }
  return dims;
}

const AttrValue* call_attr(const Node& call, std::string_view name) {
  const int index = OpRegistry::global().get(call.op()).attr_index(name);
  if (index < 0 || static_cast<size_t>(index) >= call.attrs().size()) return nullptr;
  return &call.attr(static_cast<size_t>(index));
}

// The extent of the axis that `take` indexes (the whole flattened table when axis is None).
std::optional<int64_t> take_extent(const Node& take) {
  const std::optional<std::vector<int64_t>> table = static_dims(take.operand(0)->type());
  if (!table) return std::nullopt;
  const AttrValue* axis = call_attr(take, "axis");
  const int64_t* axis_value = axis != nullptr ? std::get_if<int64_t>(axis) : nullptr;
  if (axis_value == nullptr) return checked_num_elements(*table);
  const auto rank = static_cast<int64_t>(table->size());
  if (*axis_value < -rank || *axis_value >= rank) return std::nullopt;
  return (*table)[static_cast<size_t>(*axis_value < 0 ? *axis_value + rank : *axis_value)];
}

// The number of inputs each output of a weight-consuming op sums over, when `use` is its weight operand.
std::optional<int64_t> fan_in(const Use& use) {
  if (!use.user->is_call() || use.operand != 1) return std::nullopt;
  const std::optional<std::vector<int64_t>> weight = static_dims(use.user->operand(1)->type());
  if (!weight || weight->empty()) return std::nullopt;
  switch (use.user->op()) {
    case op::matmul: return weight->size() == 1 ? weight->front() : (*weight)[weight->size() - 2];
    case op::nn_dense: return weight->back();
    case op::nn_conv1d:
    case op::nn_conv2d:
    case op::nn_conv2d_transpose: {
      const AttrValue* layout = call_attr(*use.user, "kernel_layout");
      const std::string* text = layout != nullptr ? std::get_if<std::string>(layout) : nullptr;
      const size_t out_axis = text != nullptr && text->find('O') < weight->size() ? text->find('O') : 0;
      const std::optional<int64_t> count = checked_num_elements(*weight);
      if (!count || (*weight)[out_axis] == 0) return std::nullopt;
      return *count / (*weight)[out_axis];
    }
    default: return std::nullopt;
  }
}

bool needs_positive_values(const Use& use) {
  if (!use.user->is_call()) return false;
  switch (use.user->op()) {
    case op::nn_batch_norm: return use.operand == 4;  // the moving variance
    case op::sqrt:
    case op::rsqrt:
    case op::log: return true;
    default: return false;
  }
}

bool is_boolean_sink(const Use& use) {
  if (!use.user->is_call()) return false;
  switch (use.user->op()) {
    case op::where: return use.operand == 0;
    case op::logical_and:
    case op::logical_or:
    case op::logical_not: return true;
    case op::astype: {
      const AttrValue* dtype = call_attr(*use.user, "dtype");
      const std::string* name = dtype != nullptr ? std::get_if<std::string>(dtype) : nullptr;
      return name != nullptr && *name == "bool";
    }
    default: return false;
  }
}

// The range for one parameter, following how the function uses it (see interpreter.h).
ValueRange range_for(const Node& param, DType dtype, const InputOptions& options) {
  if (const auto given = options.ranges.find(param.name()); given != options.ranges.end()) return given->second;
  const std::vector<Use> uses = uses_through(&param, passes_values_on);
  if (is_float(dtype)) {
    if (std::any_of(uses.begin(), uses.end(), needs_positive_values)) return {0.5, 1.5};
    int64_t largest_fan_in = 0;
    for (const Use& use : uses) largest_fan_in = std::max(largest_fan_in, fan_in(use).value_or(0));
    if (options.scale_weights && largest_fan_in > 0) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(largest_fan_in));
      return {-bound, bound};
    }
    return default_range(dtype);
  }
  if (dtype == DType::Bool) return default_range(dtype);
  std::optional<int64_t> index_bound;
  for (const Use& use : uses) {
    if (!use.user->is_call_of(op::take) || use.operand != 1) continue;
    const std::optional<int64_t> extent = take_extent(*use.user);
    if (extent) index_bound = std::min(index_bound.value_or(*extent), *extent);
  }
  if (index_bound) return {0.0, static_cast<double>(*index_bound)};
  const std::vector<Use> value_uses = uses_through(&param, [](const Node& user, size_t operand) {
    return !is_boolean_sink({&user, operand}) && (passes_values_on(user, operand) || computes_elementwise(user));
  });
  if (std::any_of(value_uses.begin(), value_uses.end(), is_boolean_sink)) return {0.0, 2.0};
  return default_range(dtype);
}

}  // namespace

InputsResult random_inputs(const Function& function, uint64_t seed, const InputOptions& options) {
  InputsResult result;
  const std::span<Node* const> params = function.params();
  for (size_t i = 0; i < params.size(); ++i) {
    const Node& param = *params[i];
    const TypeRef type = param.type();
    if (type == nullptr || !type->is_tensor() || !type->has_shape() || type->dtype() == DType::Unknown) {
      result.error = fmt::format(
          "parameter '{}' of '{}' has type {}: random inputs need a tensor type with a dtype "
          "and a shape",
          param.name(), function.name(), type != nullptr ? type->str() : "<none>");
      return result;
    }
    std::vector<int64_t> shape;
    for (const Dim& dim : type->dims()) {
      if (dim.is_static()) {
        shape.push_back(dim.extent());
        continue;
      }
      const std::optional<int64_t> value = dim_value(dim, options.dims);
      if (!value) {
        result.error = fmt::format("parameter '{}' has symbolic dimension '{}' without a value", param.name(),
                                   dim.symbol_name());
        return result;
      }
      shape.push_back(*value);
    }
    const std::optional<int64_t> count = checked_num_elements(shape);
    if (!count || *count > options.max_elements) {
      result.error = fmt::format("parameter '{}' would have an invalid or too large shape ({})", param.name(),
                                 fmt::join(shape, ", "));
      return result;
    }
    // Each parameter draws from its own stream, so its values do not depend on the other parameters.
    const uint64_t stream = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
    try {
      result.tensors.push_back(
          Tensor::random(type->dtype(), std::move(shape), stream, range_for(param, type->dtype(), options)));
    } catch (const std::bad_alloc&) {
      result.error = fmt::format("parameter '{}': out of memory for {} elements", param.name(), *count);
      result.tensors.clear();
      return result;
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Comparing values

namespace {

using LeafComparisons = std::vector<std::pair<std::string, Comparison>>;

Comparison structural_difference(const Value& actual, const Value& expected) {
  Comparison difference;
  difference.within_tolerance = false;
  difference.mismatch = fmt::format("got {}, expected {}", actual.type_str(), expected.type_str());
  return difference;
}

// One comparison per tensor (or per structural difference), named by its path.
void compare_leaves(const Value& actual, const Value& expected, const std::optional<Tolerance>& tolerance,
                    const std::string& path, LeafComparisons& leaves) {
  if (actual.kind() != expected.kind()) {
    leaves.emplace_back(path, structural_difference(actual, expected));
    return;
  }
  switch (expected.kind()) {
    case Value::Kind::Tensor: leaves.emplace_back(path, compare(actual.tensor(), expected.tensor(), tolerance)); return;
    case Value::Kind::Shape:
      if (actual.dims() != expected.dims()) leaves.emplace_back(path, structural_difference(actual, expected));
      return;
    case Value::Kind::Tuple:
      if (actual.fields().size() != expected.fields().size()) {
        leaves.emplace_back(path, structural_difference(actual, expected));
        return;
      }
      for (size_t i = 0; i < expected.fields().size(); ++i) {
        compare_leaves(actual.fields()[i], expected.fields()[i], tolerance, fmt::format("{}[{}]", path, i), leaves);
      }
      return;
  }
}

}  // namespace

ValueComparison compare(const Value& actual, const Value& expected, std::optional<Tolerance> tolerance) {
  LeafComparisons leaves;
  compare_leaves(actual, expected, tolerance, "output", leaves);
  ValueComparison result;
  // Reported: the first structural difference, else the worst failing tensor, else the worst tensor.
  auto rank = [](const Comparison& c) { return std::make_tuple(!c.mismatch.empty(), !c.within_tolerance); };
  const std::pair<std::string, Comparison>* reported = nullptr;
  for (const auto& leaf : leaves) {
    result.within_tolerance = result.within_tolerance && leaf.second.within_tolerance;
    if (reported == nullptr || rank(leaf.second) > rank(reported->second) ||
        (rank(leaf.second) == rank(reported->second) && leaf.second.mismatch.empty() &&
         leaf.second.max_abs_error > reported->second.max_abs_error)) {
      reported = &leaf;
    }
  }
  if (reported != nullptr) {
    result.path = reported->first;
    result.worst = reported->second;
  }
  return result;
}

std::string ValueComparison::str() const { return path + ": " + worst.str(); }

}  // namespace dpl
