// Shape computations over symbolic extents: the int64 vectors exporters compute from tensor shapes, element by element.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "onnx_import_internal.h"

namespace dpl::onnx_import {

namespace {

bool is_unknown(const ShapeElement& element) { return std::holds_alternative<std::monostate>(element); }
const int64_t* integer_of(const ShapeElement& element) { return std::get_if<int64_t>(&element); }

// A tensor dimension as a shape element: a dim naming a symbol the parameters do not bind is unknown here.
ShapeElement element_of(Dim dim, ImportContext& context) {
  if (dim.is_static()) return dim.extent();
  bool bound = !dim.is_inferred();
  for (const Dim& symbol : dim.symbols()) bound = bound && context.binds_symbol(symbol);
  return bound ? ShapeElement(dim) : ShapeElement(std::monostate{});
}

// The extents of input i: its inferred shape, else the shape the model declares for it (ONNX's shape inference
// often knows the batch and channels where dpl's inference keeps only the rank, e.g. after a convolution over a
// symbolic width). nullopt when neither knows the shape.
std::optional<std::vector<ShapeElement>> input_extents(const NodeView& node, size_t i) {
  const Node* value = node.input(i);
  if (value == nullptr || !value->type()->is_tensor()) return std::nullopt;
  TypeRef type = value->type();
  if (!type->has_shape()) {
    TypeRef declared = node.context.declared_type(node.proto.input(static_cast<int>(i)));
    if (declared == nullptr || !declared->is_tensor() || !declared->has_shape()) return std::nullopt;
    if (type->rank() >= 0 && type->rank() != declared->rank()) return std::nullopt;
    type = declared;
  }
  std::vector<ShapeElement> extents;
  for (Dim dim : type->dims()) extents.push_back(element_of(dim, node.context));
  return extents;
}

std::optional<ShapeVector> operand(const NodeView& node, size_t i) {
  const Node* value = node.input(i);
  return value != nullptr ? node.context.shape_vector(value) : std::nullopt;
}

// Axes naming the one axis of a rank-1 vector: [0] or [-1].
bool is_first_axis(const std::vector<int64_t>& axes) { return axes.size() == 1 && (axes[0] == 0 || axes[0] == -1); }

// Python-style slicing with ONNX's clamping of out-of-range bounds.
std::vector<ShapeElement> slice(const std::vector<ShapeElement>& elements, int64_t start, int64_t end, int64_t step) {
  const auto size = static_cast<int64_t>(elements.size());
  auto clamp = [size](int64_t index, int64_t low, int64_t high) {
    return std::clamp(index < 0 ? index + size : index, low, high);
  };
  std::vector<ShapeElement> out;
  if (step > 0) {
    for (int64_t i = clamp(start, 0, size), stop = clamp(end, 0, size); i < stop; i += step)
      out.push_back(elements[static_cast<size_t>(i)]);
  } else {
    for (int64_t i = clamp(start, 0, size - 1), stop = clamp(end, -1, size - 1); i > stop; i += step)
      out.push_back(elements[static_cast<size_t>(i)]);
  }
  return out;
}

std::optional<ShapeVector> shape_of(const NodeView& node) {
  std::optional<std::vector<ShapeElement>> extents = input_extents(node, 0);
  if (!extents) return std::nullopt;
  return ShapeVector{DType::Int64, false, slice(*extents, node.int_attr("start", 0),
                                                node.int_attr("end", std::numeric_limits<int64_t>::max()), 1)};
}

std::optional<ShapeVector> gather(const NodeView& node) {
  std::optional<ShapeVector> data = operand(node, 0);
  std::optional<ShapeVector> indices = operand(node, 1);
  const int64_t axis = node.int_attr("axis", 0);
  if (!data || data->scalar || (axis != 0 && axis != -1) || !indices || !indices->is_static()) return std::nullopt;
  const auto size = static_cast<int64_t>(data->elements.size());
  ShapeVector out{data->dtype, indices->scalar, {}};
  for (const ShapeElement& element : indices->elements) {
    int64_t index = *integer_of(element);
    if (index < 0) index += size;
    if (index < 0 || index >= size) return std::nullopt;  // the model's error, reported where it runs
    out.elements.push_back(data->elements[static_cast<size_t>(index)]);
  }
  return out;
}

std::optional<ShapeVector> slice_of(const NodeView& node) {
  std::optional<ShapeVector> data = operand(node, 0);
  std::optional<SliceBounds> bounds = slice_bounds(node);
  if (!data || data->scalar || !bounds || bounds->starts.size() != 1 || bounds->ends.size() != 1 ||
      !is_first_axis(bounds->axes) || (bounds->steps && bounds->steps->size() != 1))
    return std::nullopt;
  const int64_t step = bounds->steps ? (*bounds->steps)[0] : 1;
  if (step == 0) return std::nullopt;
  return ShapeVector{data->dtype, false, slice(data->elements, bounds->starts[0], bounds->ends[0], step)};
}

std::optional<ShapeVector> squeeze(const NodeView& node, bool unsqueeze) {
  std::optional<ShapeVector> data = operand(node, 0);
  bool absent = false;
  std::optional<std::vector<int64_t>> axes = axes_of(node, 13, absent);
  if (!data || !axes) return std::nullopt;
  if (unsqueeze) {
    // A scalar becomes a one-element vector; more axes would make a matrix, which no shape is.
    if (!data->scalar || !is_first_axis(*axes)) return std::nullopt;
  } else if (data->scalar || data->elements.size() != 1 || (!absent && !is_first_axis(*axes))) {
    return std::nullopt;
  }
  data->scalar = !unsqueeze;
  return data;
}
std::optional<ShapeVector> squeeze(const NodeView& node) { return squeeze(node, false); }
std::optional<ShapeVector> unsqueeze(const NodeView& node) { return squeeze(node, true); }

std::optional<ShapeVector> concat(const NodeView& node) {
  const int64_t axis = node.int_attr("axis", 0);
  if ((axis != 0 && axis != -1) || node.inputs.empty()) return std::nullopt;
  ShapeVector out;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    std::optional<ShapeVector> part = operand(node, i);
    if (!part || part->scalar) return std::nullopt;
    if (i == 0) out.dtype = part->dtype;
    out.elements.insert(out.elements.end(), part->elements.begin(), part->elements.end());
  }
  return out;
}

bool fits(int64_t value, DType dtype) {
  switch (dtype) {
    case DType::Int8: return value >= INT8_MIN && value <= INT8_MAX;
    case DType::Int16: return value >= INT16_MIN && value <= INT16_MAX;
    case DType::Int32: return value >= INT32_MIN && value <= INT32_MAX;
    case DType::UInt8: return value >= 0 && value <= UINT8_MAX;
    default: return dtype == DType::Int64;
  }
}

std::optional<ShapeVector> cast(const NodeView& node) {
  std::optional<ShapeVector> data = operand(node, 0);
  std::optional<DType> dtype = dtype_of(static_cast<int32_t>(node.int_attr("to", 0)));
  if (!data || !dtype || !is_integer(*dtype)) return std::nullopt;
  for (const ShapeElement& element : data->elements)
    if (const int64_t* value = integer_of(element); value != nullptr && !fits(*value, *dtype)) return std::nullopt;
  data->dtype = *dtype;
  return data;
}

std::optional<ShapeVector> identity(const NodeView& node) { return operand(node, 0); }

// An element as an extent; a negative integer is none.
std::optional<Dim> dim_of(const ShapeElement& element) {
  if (const Dim* dim = std::get_if<Dim>(&element)) return *dim;
  if (const int64_t* value = integer_of(element); value != nullptr && *value >= 0) return Dim::fixed(*value);
  return std::nullopt;
}

// Symbolic arithmetic on extents: `n * 48`, `n + m`, `n - 1`; Div only where it is exact (ONNX's Div truncates,
// which agrees with floor division only for values known not to be negative).
ShapeElement symbolic_arithmetic(char op, const ShapeElement& a, const ShapeElement& b) {
  const int64_t* y = integer_of(b);
  if (y != nullptr && *y == std::numeric_limits<int64_t>::min()) return {};
  if (op == '+' && y != nullptr && *y < 0) return symbolic_arithmetic('-', a, -*y);
  if (op == '-' && y != nullptr && *y < 0) return symbolic_arithmetic('+', a, -*y);
  const std::optional<Dim> x_dim = dim_of(a);
  const std::optional<Dim> y_dim = dim_of(b);
  if (!x_dim || !y_dim) return {};
  std::optional<Dim> result;
  switch (op) {
    case '+': result = dim_add(*x_dim, *y_dim); break;
    case '-': result = dim_sub(*x_dim, *y_dim); break;
    case '*': result = dim_mul(*x_dim, *y_dim); break;
    default: result = dim_exact_div(*x_dim, *y_dim); break;
  }
  if (!result) return {};
  return result->is_static() ? ShapeElement(result->extent()) : ShapeElement(*result);
}

// One element of Add, Sub, Mul or Div: integers compute (Div only where it cannot round a negative value either
// way), n * 0 is 0, and symbolic extents give expressions.
ShapeElement arithmetic(char op, const ShapeElement& a, const ShapeElement& b) {
  const int64_t* x = integer_of(a);
  const int64_t* y = integer_of(b);
  int64_t result = 0;
  if (x != nullptr && y != nullptr) {
    switch (op) {
      case '+': return __builtin_add_overflow(*x, *y, &result) ? ShapeElement() : result;
      case '-': return __builtin_sub_overflow(*x, *y, &result) ? ShapeElement() : result;
      case '*': return __builtin_mul_overflow(*x, *y, &result) ? ShapeElement() : result;
      default: return *y > 0 && *x >= 0 ? ShapeElement(*x / *y) : ShapeElement();
    }
  }
  if (op == '*' && ((x != nullptr && *x == 0) || (y != nullptr && *y == 0))) return int64_t{0};
  if (is_unknown(a) || is_unknown(b)) return {};
  return symbolic_arithmetic(op, a, b);
}

std::optional<ShapeVector> elementwise(const NodeView& node) {
  static const std::unordered_map<std::string_view, char> ops = {{"Add", '+'}, {"Sub", '-'}, {"Mul", '*'},
                                                                 {"Div", '/'}};
  std::optional<ShapeVector> a = operand(node, 0);
  std::optional<ShapeVector> b = operand(node, 1);
  if (!a || !b || node.inputs.size() != 2) return std::nullopt;
  const size_t size_a = a->elements.size(), size_b = b->elements.size();
  if (size_a != size_b && size_a != 1 && size_b != 1) return std::nullopt;
  ShapeVector out{a->dtype, a->scalar && b->scalar, {}};
  const char op = ops.at(node.proto.op_type());
  for (size_t i = 0; i < std::max(size_a, size_b); ++i)
    out.elements.push_back(arithmetic(op, a->elements[size_a == 1 ? 0 : i], b->elements[size_b == 1 ? 0 : i]));
  return out;
}

using Propagation = std::optional<ShapeVector> (*)(const NodeView& node);

const std::unordered_map<std::string_view, Propagation>& propagations() {
  static const std::unordered_map<std::string_view, Propagation> table = {
      {"Shape", shape_of},     {"Gather", gather},     {"Slice", slice_of}, {"Squeeze", squeeze},
      {"Unsqueeze", unsqueeze}, {"Concat", concat},    {"Cast", cast},      {"Identity", identity},
      {"Add", elementwise},    {"Sub", elementwise},  {"Mul", elementwise}, {"Div", elementwise},
  };
  return table;
}

}  // namespace

bool ShapeVector::is_static() const {
  return std::all_of(elements.begin(), elements.end(),
                     [](const ShapeElement& element) { return integer_of(element) != nullptr; });
}

Literal ShapeVector::literal() const {
  Literal literal{dtype, {}, {}};
  if (!scalar) literal.shape = {static_cast<int64_t>(elements.size())};
  for (const ShapeElement& element : elements) literal.values.push_back(static_cast<double>(*integer_of(element)));
  return literal;
}

std::optional<ShapeVector> ImportContext::shape_vector(const Node* value) const {
  if (value->kind() == NodeKind::Constant) {
    const Literal& literal = value->literal();
    if (!is_integer(literal.dtype) || literal.shape.size() > 1) return std::nullopt;
    ShapeVector vector{literal.dtype, literal.shape.empty(), {}};
    for (double element : literal.values) vector.elements.emplace_back(static_cast<int64_t>(element));
    return vector;
  }
  auto it = shape_vectors_.find(value);
  return it == shape_vectors_.end() ? std::nullopt : std::optional<ShapeVector>(it->second);
}

bool ImportContext::binds_symbol(Dim dim) {
  for (const Node* param : builder_.function().params()) {
    TypeRef type = param->type();
    if (type->is_tensor() && type->has_shape() && std::ranges::find(type->dims(), dim) != type->dims().end())
      return true;
  }
  return false;
}

std::optional<ShapeVector> infer_shape_vector(const NodeView& node) {
  if (!is_standard_domain(node.proto.domain()) || node.proto.output_size() != 1) return std::nullopt;
  auto it = propagations().find(node.proto.op_type());
  if (it == propagations().end()) return std::nullopt;
  std::optional<ShapeVector> vector = it->second(node);
  if (vector && static_cast<int64_t>(vector->elements.size()) > node.context.options().max_int_literal_elements)
    return std::nullopt;
  return vector;
}

std::optional<std::vector<Dim>> reshape_target(const NodeView& node) {
  std::optional<ShapeVector> target = operand(node, 1);
  if (!target || target->scalar) return std::nullopt;
  const bool allow_zero = node.int_attr("allowzero", 0) != 0;
  const std::optional<std::vector<ShapeElement>> input = input_extents(node, 0);
  std::vector<Dim> dims;
  int inferred = 0;
  for (size_t i = 0; i < target->elements.size(); ++i) {
    ShapeElement element = target->elements[i];
    if (const int64_t* extent = integer_of(element); extent != nullptr && *extent == 0 && !allow_zero)
      element = input && i < input->size() ? (*input)[i] : ShapeElement();  // 0 copies the input's extent
    if (const Dim* symbol = std::get_if<Dim>(&element)) {
      dims.push_back(*symbol);
    } else if (const int64_t* extent = integer_of(element); extent != nullptr && *extent >= 0) {
      dims.push_back(Dim::fixed(*extent));
    } else if ((extent != nullptr && *extent == -1) || (is_unknown(element) && !allow_zero)) {
      // With allowzero an unknown element may be a 0 that makes the tensor empty, and -1 cannot stand for it.
      dims.push_back(Dim::inferred());
      ++inferred;
    } else if (extent != nullptr) {
      throw BuildError(fmt::format("Reshape: bad target extent {}", *extent));
    } else {
      return std::nullopt;
    }
  }
  if (inferred > 1) return std::nullopt;  // one -1 cannot stand for two unknown extents
  return dims;
}

}  // namespace dpl::onnx_import
