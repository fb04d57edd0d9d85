// The built-in ops: signatures and attributes as TVM Relax spells them, traits, and type inference.
#include "op_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "dpl/ir/graph.h"

namespace dpl::detail {

namespace {

constexpr std::string_view kOpNames[] = {
#define DPL_OP(ident, name) name,
#include "dpl/ir/ops.def"
#undef DPL_OP
};

// A dimension list stored inline up to kInline entries (every real tensor), so inference does not allocate.
class Dims {
 public:
  static constexpr size_t kInline = 8;
  Dims() = default;
  Dims(size_t count, Dim fill) {
    for (size_t i = 0; i < count; ++i) push_back(fill);
  }
  Dims(std::initializer_list<Dim> dims) { append(dims); }
  template <typename Iterator>
  Dims(Iterator first, Iterator last) {
    for (; first != last; ++first) push_back(*first);
  }

  void push_back(Dim dim) {
    if (size_ < kInline) {
      inline_[size_] = dim;
    } else {
      if (size_ == kInline) heap_.assign(inline_.begin(), inline_.end());
      heap_.push_back(dim);
    }
    ++size_;
  }
  void append(std::span<const Dim> dims) {
    for (Dim dim : dims) push_back(dim);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Dim* data() { return size_ <= kInline ? inline_.data() : heap_.data(); }
  const Dim* data() const { return size_ <= kInline ? inline_.data() : heap_.data(); }
  Dim* begin() { return data(); }
  Dim* end() { return data() + size_; }
  const Dim* begin() const { return data(); }
  const Dim* end() const { return data() + size_; }
  Dim& operator[](size_t i) { return data()[i]; }
  const Dim& operator[](size_t i) const { return data()[i]; }
  operator std::span<const Dim>() const { return {data(), size_}; }

 private:
  size_t size_ = 0;
  std::array<Dim, kInline> inline_ = {Dim::fixed(0), Dim::fixed(0), Dim::fixed(0), Dim::fixed(0),
                                      Dim::fixed(0), Dim::fixed(0), Dim::fixed(0), Dim::fixed(0)};
  std::vector<Dim> heap_;  // all entries, once there are more than kInline
};

// What is known about a tensor's shape: nothing (rank -1), its rank, or every dimension.
struct ShapeInfo {
  int rank = -1;
  bool known = false;
  Dims dims;

  static ShapeInfo of(TypeRef type) {
    return ShapeInfo{type->rank(), type->has_shape(), Dims(type->dims().begin(), type->dims().end())};
  }
  static ShapeInfo exactly(Dims dims) {
    int rank = static_cast<int>(dims.size());
    return ShapeInfo{rank, true, std::move(dims)};
  }
  static ShapeInfo of_rank(int rank) { return ShapeInfo{rank < 0 ? -1 : rank, false, {}}; }
};

TypeRef make_tensor(DType dtype, const ShapeInfo& shape) {
  return shape.known ? Type::tensor(dtype, shape.dims) : Type::tensor_of_rank(dtype, shape.rank);
}

// The same shape knowledge with another dtype.
TypeRef with_dtype(TypeRef type, DType dtype) {
  if (type->dtype() == dtype) return type;
  return type->has_shape() ? Type::tensor(dtype, type->dims()) : Type::tensor_of_rank(dtype, type->rank());
}

std::string dim_text(Dim dim) {
  return dim.is_static() ? std::to_string(dim.extent()) : std::string(dim.symbol_name());
}

std::string list_str(const std::vector<int64_t>& values) { return attr_value_str(AttrValue(values)); }

enum class Same { Yes, No, Maybe };

Same same_dim(Dim a, Dim b) {
  if (a == b) return Same::Yes;
  if (a.is_static() && b.is_static()) return Same::No;
  return Same::Maybe;
}

// `dim + offset` for a static offset of either sign; nullopt when that is no Dim.
std::optional<Dim> add_constant(Dim dim, int64_t offset) {
  return offset >= 0 ? dim_add(dim, Dim::fixed(offset)) : dim_sub(dim, Dim::fixed(-offset));
}

// (input + offset) // stride + 1 for a symbolic input.
std::optional<Dim> symbolic_window_output(Dim input, int64_t offset, int64_t stride) {
  const std::optional<Dim> numerator = add_constant(input, offset);
  if (!numerator) return std::nullopt;
  const std::optional<Dim> steps = dim_floor_div(*numerator, Dim::fixed(stride));
  return steps ? dim_add(*steps, Dim::fixed(1)) : std::nullopt;
}

// The number of elements of a shape as a Dim (an expression when the shape is symbolic); nullopt when that
// product is no Dim.
std::optional<Dim> num_elements(std::span<const Dim> dims) {
  std::optional<Dim> count = Dim::fixed(1);
  for (const Dim& dim : dims) {
    if (!count) return std::nullopt;
    count = dim_mul(*count, dim);
  }
  return count;
}

// Extent of a convolution or pooling window sweep; nullopt when it is not a static number.
struct Window {
  int64_t pad_before = 0;
  int64_t pad_after = 0;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  bool ceil_mode = false;
};

// The per-call view of an inference: the op's name for messages, checked access to operands and attributes.
class Ctx {
 public:
  Ctx(OpId op, const InferInput& in, std::string& error) : op_(op), in_(in), error_(error) {
    ok_ = check_signature(OpRegistry::global().get(op), in.operands, in.attrs, error);
  }

  bool ok() const { return ok_; }
  std::nullptr_t fail(std::string_view message) {
    error_ = fmt::format("{}: {}", kOpNames[op_], message);
    return nullptr;
  }

  size_t num_operands() const { return in_.operands.size(); }
  Node* operand(size_t i) const { return in_.operands[i]; }

  // Operand `i` as a tensor type (an untyped operand counts as a tensor nothing is known about).
  TypeRef tensor(size_t i, std::string_view role) {
    TypeRef type = in_.operands[i]->type();
    if (type == nullptr || type->kind() == TypeKind::Unknown) return Type::tensor_of_rank(DType::Unknown, -1);
    if (type->is_tensor()) return type;
    return fail(fmt::format("{} must be a tensor, got {}", role, type->str()));
  }

  // Operand `i` as a shape: the dims of an `R.shape([...])` node, or the rank of a shape-typed value.
  bool shape(size_t i, std::string_view role, bool allow_inferred, ShapeInfo& out) {
    Node* node = in_.operands[i];
    if (node->kind() == NodeKind::ShapeLit) {
      out = ShapeInfo::exactly(Dims(node->shape_value().begin(), node->shape_value().end()));
      if (!allow_inferred) {
        for (const Dim& dim : out.dims)
          if (dim.is_inferred()) {
            fail(fmt::format("{} {} must not contain -1", role, dims_str(out.dims)));
            return false;
          }
      }
      return true;
    }
    TypeRef type = node->type();
    if (type != nullptr && type->kind() == TypeKind::Shape) {
      out = ShapeInfo::of_rank(type->rank());
      return true;
    }
    fail(fmt::format("{} must be a shape (R.shape([...])), got {}", role, type ? type->str() : "nothing"));
    return false;
  }

  const AttrValue& attr(size_t i) const { return in_.attrs[i]; }
  int64_t int_attr(size_t i) const { return std::get<int64_t>(in_.attrs[i]); }
  bool bool_attr(size_t i) const { return std::get<bool>(in_.attrs[i]); }
  const std::string& string_attr(size_t i) const { return std::get<std::string>(in_.attrs[i]); }
  const std::vector<int64_t>& list_attr(size_t i) const { return std::get<std::vector<int64_t>>(in_.attrs[i]); }
  const std::vector<int64_t>* opt_list_attr(size_t i) const { return std::get_if<std::vector<int64_t>>(&in_.attrs[i]); }
  std::optional<int64_t> opt_int_attr(size_t i) const {
    if (const int64_t* value = std::get_if<int64_t>(&in_.attrs[i])) return *value;
    return std::nullopt;
  }
  std::optional<double> opt_float_attr(size_t i) const {
    if (const double* value = std::get_if<double>(&in_.attrs[i])) return *value;
    return std::nullopt;
  }
  const std::string* opt_string_attr(size_t i) const { return std::get_if<std::string>(&in_.attrs[i]); }
  // A dtype attribute; Unknown for "void" (unspecified).
  DType dtype_attr(size_t i) const { return parse_dtype(string_attr(i)).value_or(DType::Unknown); }

  // --- shared checks ---

  // Both dtypes when they agree; Unknown when either is unknown.
  bool join_dtypes(DType a, DType b, DType& out) {
    if (a != DType::Unknown && b != DType::Unknown && a != b) {
      fail(fmt::format("operand dtypes {} and {} differ", dtype_name(a), dtype_name(b)));
      return false;
    }
    out = b == DType::Unknown ? b : a;
    return true;
  }

  bool require_float(TypeRef type, std::string_view role) {
    if (type->dtype() == DType::Unknown || is_float(type->dtype())) return true;
    fail(fmt::format("{} must have a float dtype, got {}", role, dtype_name(type->dtype())));
    return false;
  }

  // Maps `axis` (negative counts from the end) into [0, rank).
  bool normalize_axis(int64_t axis, int rank, int& out) {
    if (axis < -rank || axis >= rank) {
      fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
      return false;
    }
    out = static_cast<int>(axis < 0 ? axis + rank : axis);
    return true;
  }

  bool normalize_axes(const std::vector<int64_t>& axes, int rank, std::vector<int>& out) {
    out.clear();
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t axis : axes) {
      int normalized = 0;
      if (!normalize_axis(axis, rank, normalized)) return false;
      if (seen[static_cast<size_t>(normalized)]) {
        fail(fmt::format("axes {} repeat axis {}", list_str(axes), normalized));
        return false;
      }
      seen[static_cast<size_t>(normalized)] = true;
      out.push_back(normalized);
    }
    return true;
  }

  // Fails when `a` and `b` are provably different: "{what} 64 and 32 differ".
  bool expect_same(Dim a, Dim b, std::string_view what) {
    if (same_dim(a, b) != Same::No) return true;
    fail(fmt::format("{} {} and {} differ", what, dim_text(a), dim_text(b)));
    return false;
  }

  // Numpy broadcasting of two shapes. Dimensions that cannot be related statically leave the shape unknown.
  bool broadcast(const ShapeInfo& a, const ShapeInfo& b, std::string_view what, ShapeInfo& out) {
    if (a.rank < 0 || b.rank < 0) {
      out = ShapeInfo::of_rank(-1);
      return true;
    }
    int rank = std::max(a.rank, b.rank);
    if (!a.known || !b.known) {
      out = ShapeInfo::of_rank(rank);
      return true;
    }
    Dims dims(static_cast<size_t>(rank), Dim::fixed(1));
    bool known = true;
    for (int i = 0; i < rank; ++i) {
      int ia = i - (rank - a.rank);
      int ib = i - (rank - b.rank);
      if (ia < 0) {
        dims[i] = b.dims[ib];
      } else if (ib < 0) {
        dims[i] = a.dims[ia];
      } else {
        Dim da = a.dims[ia];
        Dim db = b.dims[ib];
        if (da == db || db == Dim::fixed(1)) {
          dims[i] = da;
        } else if (da == Dim::fixed(1)) {
          dims[i] = db;
        } else if (da.is_static() && db.is_static()) {
          fail(fmt::format("cannot broadcast {} {} and {}", what, dims_str(a.dims), dims_str(b.dims)));
          return false;
        } else {
          known = false;
        }
      }
    }
    out = known ? ShapeInfo::exactly(std::move(dims)) : ShapeInfo::of_rank(rank);
    return true;
  }

  // Whether `from` can be broadcast to exactly `to` (broadcast_to, attention's bias).
  bool broadcastable_to(const ShapeInfo& from, const ShapeInfo& to, std::string_view role) {
    if (from.rank < 0 || to.rank < 0) return true;
    if (from.rank > to.rank) {
      fail(fmt::format("{} of rank {} cannot be broadcast to rank {}", role, from.rank, to.rank));
      return false;
    }
    if (!from.known || !to.known) return true;
    for (int i = 0; i < from.rank; ++i) {
      Dim d = from.dims[i];
      Dim t = to.dims[i + (to.rank - from.rank)];
      if (d != Dim::fixed(1) && same_dim(d, t) == Same::No) {
        fail(fmt::format("cannot broadcast {} {} to {}", role, dims_str(from.dims), dims_str(to.dims)));
        return false;
      }
    }
    return true;
  }

  // Reads a spatial list attribute given with 1 or `spatial` values, each at least `minimum`.
  bool spatial_list(size_t attr_index, std::string_view name, int spatial, std::vector<int64_t>& out,
                    int64_t minimum = 1) {
    const std::vector<int64_t>& values = list_attr(attr_index);
    if (values.size() == 1) {
      out.assign(static_cast<size_t>(spatial), values[0]);
    } else if (values.size() == static_cast<size_t>(spatial)) {
      out = values;
    } else {
      fail(fmt::format("{} {} must have 1 or {} values", name, list_str(values), spatial));
      return false;
    }
    for (int64_t value : out) {
      if (value < minimum) {
        fail(fmt::format("{} {} must be {}", name, list_str(values), minimum > 0 ? "positive" : "non-negative"));
        return false;
      }
    }
    return true;
  }

  // Padding given as 1 value, one per spatial axis, or before-values then after-values.
  bool padding_list(size_t attr_index, int spatial, std::vector<Window>& windows) {
    const std::vector<int64_t>& values = list_attr(attr_index);
    size_t n = static_cast<size_t>(spatial);
    for (size_t s = 0; s < n; ++s) {
      if (values.size() == 1) {
        windows[s].pad_before = windows[s].pad_after = values[0];
      } else if (values.size() == n) {
        windows[s].pad_before = windows[s].pad_after = values[s];
      } else if (values.size() == 2 * n) {
        windows[s].pad_before = values[s];
        windows[s].pad_after = values[s + n];
      } else {
        fail(fmt::format("padding {} must have 1, {} or {} values", list_str(values), n, 2 * n));
        return false;
      }
    }
    for (int64_t value : values) {
      if (value < 0) {
        fail(fmt::format("padding {} must not be negative", list_str(values)));
        return false;
      }
    }
    return true;
  }

  // The output extent of sliding `window` over `input`: (input + pads - span) // stride + 1, an expression
  // when `input` is symbolic (nullopt when it cannot be one).
  bool window_output(Dim input, const Window& window, std::optional<Dim>& out) {
    out.reset();
    int64_t span = window.dilation * (window.kernel - 1) + 1;
    if (!input.is_static()) {
      out = symbolic_window_output(input, window.pad_before + window.pad_after - span +
                                              (window.ceil_mode ? window.stride - 1 : 0),
                                   window.stride);
      return true;
    }
    int64_t numerator = input.extent() + window.pad_before + window.pad_after - span;
    if (numerator < 0) {
      fail(fmt::format("window of extent {} does not fit the padded input extent {}", span,
                       input.extent() + window.pad_before + window.pad_after));
      return false;
    }
    if (window.ceil_mode) numerator += window.stride - 1;
    out = Dim::fixed(numerator / window.stride + 1);
    return true;
  }

  // The output extent of a transposed convolution over `input`: each input step moves the window by the stride.
  bool transposed_window_output(Dim input, const Window& window, int64_t output_padding, std::optional<Dim>& out) {
    out.reset();
    if (!input.is_static()) {
      // (input - 1) * stride + the rest, all static
      const int64_t rest = window.dilation * (window.kernel - 1) + 1 + output_padding - window.pad_before -
                           window.pad_after - window.stride;
      if (std::optional<Dim> steps = dim_mul(input, Dim::fixed(window.stride))) out = add_constant(*steps, rest);
      return true;
    }
    int64_t extent = (input.extent() - 1) * window.stride + window.dilation * (window.kernel - 1) + 1 +
                     output_padding - window.pad_before - window.pad_after;
    if (extent <= 0) {
      fail(fmt::format("padding {} + {} leaves no output of input extent {}", window.pad_before, window.pad_after,
                       input.extent()));
      return false;
    }
    out = Dim::fixed(extent);
    return true;
  }

 private:
  OpId op_;
  const InferInput& in_;
  std::string& error_;
  bool ok_ = false;
};

// Positions of each letter of `expected` (e.g. "NCHW") in `layout`, which must be a permutation of it.
bool parse_layout(Ctx& c, std::string_view attr_name, const std::string& layout, std::string_view expected,
                  std::vector<int>& positions) {
  positions.assign(expected.size(), -1);
  bool valid = layout.size() == expected.size();
  for (size_t i = 0; valid && i < layout.size(); ++i) {
    size_t letter = expected.find(layout[i]);
    if (letter == std::string_view::npos || positions[letter] >= 0)
      valid = false;
    else
      positions[letter] = static_cast<int>(i);
  }
  if (!valid) {
    c.fail(fmt::format("unsupported {} \"{}\" (expected a permutation of {})", attr_name, layout, expected));
    return false;
  }
  return true;
}

#define DPL_INFER_BEGIN(kOp) \
  Ctx c(kOp, in, error);     \
  if (!c.ok()) return nullptr

// ---------------------------------------------------------------------------------------------------------
// Elementwise

constexpr bool is_comparison(OpId op) {
  return op == op::equal || op == op::not_equal || op == op::less || op == op::less_equal || op == op::greater ||
         op == op::greater_equal;
}

template <OpId kOp>
TypeRef infer_binary(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  TypeRef a = c.tensor(0, "lhs");
  if (a == nullptr) return nullptr;
  TypeRef b = c.tensor(1, "rhs");
  if (b == nullptr) return nullptr;
  DType dtype;
  if (!c.join_dtypes(a->dtype(), b->dtype(), dtype)) return nullptr;
  if constexpr (kOp == op::bitwise_and || kOp == op::bitwise_or) {
    if (dtype != DType::Unknown && dtype != DType::Bool && !is_integer(dtype))
      return c.fail(fmt::format("requires integer or bool operands, got {}", dtype_name(dtype)));
  }
  DType result_dtype = is_comparison(kOp) ? DType::Bool : dtype;
  if (a == b) return with_dtype(a, result_dtype);
  ShapeInfo shape;
  if (!c.broadcast(ShapeInfo::of(a), ShapeInfo::of(b), "shapes", shape)) return nullptr;
  return make_tensor(result_dtype, shape);
}

template <OpId kOp, bool kRequireFloat>
TypeRef infer_unary(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  if (kRequireFloat && !c.require_float(x, "operand")) return nullptr;
  return x;
}

TypeRef infer_astype(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::astype);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  DType dtype = c.dtype_attr(0);
  if (dtype == DType::Unknown) return c.fail("dtype is required");
  return with_dtype(x, dtype);
}

TypeRef infer_clip(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::clip);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  std::optional<double> low = c.opt_float_attr(0);
  std::optional<double> high = c.opt_float_attr(1);
  if (low && high && *low > *high)
    return c.fail(fmt::format("min {} is greater than max {}", attr_value_str(*low), attr_value_str(*high)));
  return x;
}

TypeRef infer_where(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::where);
  TypeRef cond = c.tensor(0, "condition");
  if (cond == nullptr) return nullptr;
  TypeRef a = c.tensor(1, "x1");
  if (a == nullptr) return nullptr;
  TypeRef b = c.tensor(2, "x2");
  if (b == nullptr) return nullptr;
  if (cond->dtype() != DType::Unknown && cond->dtype() != DType::Bool)
    return c.fail(fmt::format("condition must be bool, got {}", dtype_name(cond->dtype())));
  DType dtype;
  if (!c.join_dtypes(a->dtype(), b->dtype(), dtype)) return nullptr;
  ShapeInfo shape;
  if (!c.broadcast(ShapeInfo::of(cond), ShapeInfo::of(a), "shapes", shape)) return nullptr;
  if (!c.broadcast(shape, ShapeInfo::of(b), "shapes", shape)) return nullptr;
  return make_tensor(dtype, shape);
}

// ---------------------------------------------------------------------------------------------------------
// Linear algebra and layout

TypeRef infer_matmul(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::matmul);
  TypeRef a = c.tensor(0, "lhs");
  if (a == nullptr) return nullptr;
  TypeRef b = c.tensor(1, "rhs");
  if (b == nullptr) return nullptr;
  DType dtype = c.dtype_attr(0);
  if (dtype == DType::Unknown && !c.join_dtypes(a->dtype(), b->dtype(), dtype)) return nullptr;
  if (a->rank() == 0 || b->rank() == 0) return c.fail("operands must have rank >= 1, got a scalar");
  if (a->rank() < 0 || b->rank() < 0) return Type::tensor_of_rank(dtype, -1);

  bool a_vector = a->rank() == 1;
  bool b_vector = b->rank() == 1;
  int a_rank = a_vector ? 2 : a->rank();
  int b_rank = b_vector ? 2 : b->rank();
  int batch_rank = std::max(a_rank, b_rank) - 2;
  int out_rank = batch_rank + (a_vector ? 0 : 1) + (b_vector ? 0 : 1);
  if (!a->has_shape() || !b->has_shape()) return Type::tensor_of_rank(dtype, out_rank);

  // 1-D operands are promoted: (k,) @ ... as (1, k), ... @ (k,) as (k, 1); the unit axis is dropped after.
  Dims ad, bd;
  if (a_vector) ad.push_back(Dim::fixed(1));
  ad.append(a->dims());
  bd.append(b->dims());
  if (b_vector) bd.push_back(Dim::fixed(1));
  if (!c.expect_same(ad[a_rank - 1], bd[b_rank - 2], "inner dimensions")) return nullptr;

  ShapeInfo batch;
  if (!c.broadcast(ShapeInfo::exactly(Dims(ad.begin(), ad.end() - 2)),
                   ShapeInfo::exactly(Dims(bd.begin(), bd.end() - 2)), "batch shapes", batch))
    return nullptr;
  if (!batch.known) return Type::tensor_of_rank(dtype, out_rank);
  Dims out = batch.dims;
  if (!a_vector) out.push_back(ad[a_rank - 2]);
  if (!b_vector) out.push_back(bd[b_rank - 1]);
  return Type::tensor(dtype, out);
}

TypeRef infer_permute_dims(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::permute_dims);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  const std::vector<int64_t>* axes = c.opt_list_attr(0);
  if (x->rank() < 0) return Type::tensor_of_rank(x->dtype(), axes ? static_cast<int>(axes->size()) : -1);
  int rank = x->rank();
  std::vector<int> order;
  if (axes == nullptr) {
    for (int i = rank - 1; i >= 0; --i) order.push_back(i);
  } else {
    if (axes->size() != static_cast<size_t>(rank))
      return c.fail(
          fmt::format("axes {} has {} entries but the tensor has rank {}", list_str(*axes), axes->size(), rank));
    if (!c.normalize_axes(*axes, rank, order)) return nullptr;
  }
  if (!x->has_shape()) return x;
  Dims dims;
  for (int axis : order) dims.push_back(x->dims()[axis]);
  return Type::tensor(x->dtype(), dims);
}

// Element count split into a static factor and the symbols it multiplies (sorted).
struct ElementCount {
  int64_t fixed = 1;
  std::vector<int64_t> symbols;
};

ElementCount count_elements(std::span<const Dim> dims) {
  ElementCount count;
  for (const Dim& dim : dims) {
    if (dim.is_inferred()) continue;
    if (dim.is_static())
      count.fixed *= dim.extent();
    else
      count.symbols.push_back(dim.raw());
  }
  std::sort(count.symbols.begin(), count.symbols.end());
  return count;
}

TypeRef infer_reshape(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::reshape);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  ShapeInfo target;
  if (!c.shape(1, "new shape", true, target)) return nullptr;
  if (!target.known) return Type::tensor_of_rank(x->dtype(), target.rank);

  int inferred = -1;
  for (size_t i = 0; i < target.dims.size(); ++i) {
    if (!target.dims[i].is_inferred()) continue;
    if (inferred >= 0) return c.fail(fmt::format("new shape {} has more than one -1", dims_str(target.dims)));
    inferred = static_cast<int>(i);
  }
  if (!x->has_shape()) {
    if (inferred >= 0) return Type::tensor_of_rank(x->dtype(), target.rank);
    return Type::tensor(x->dtype(), target.dims);
  }

  ElementCount have = count_elements(x->dims());
  ElementCount want = count_elements(target.dims);
  auto mismatch = [&]() {
    return c.fail(fmt::format("cannot reshape {} into {}", dims_str(x->dims()), dims_str(target.dims)));
  };
  if (inferred < 0) {
    // Only provable differences are errors: with different symbols the counts may still agree.
    if (have.symbols == want.symbols && have.fixed != want.fixed) return mismatch();
    return Type::tensor(x->dtype(), target.dims);
  }
  // The -1 takes the element count divided by the rest, when that division is exact: (b, n, 48) into (b, -1)
  // gives n * 48.
  Dims known_dims;
  for (const Dim& dim : target.dims)
    if (!dim.is_inferred()) known_dims.push_back(dim);
  const std::optional<Dim> have_count = num_elements(x->dims());
  const std::optional<Dim> want_count = num_elements(known_dims);
  if (have_count && want_count && !(have_count->is_static() && want_count->is_static())) {
    if (std::optional<Dim> rest = dim_exact_div(*have_count, *want_count)) {
      target.dims[inferred] = *rest;
      return Type::tensor(x->dtype(), target.dims);
    }
  }
  // The -1 takes what is left: the static quotient, or one symbol when the static parts agree.
  std::vector<int64_t> left;
  if (!std::includes(have.symbols.begin(), have.symbols.end(), want.symbols.begin(), want.symbols.end()))
    return Type::tensor_of_rank(x->dtype(), target.rank);
  std::set_difference(have.symbols.begin(), have.symbols.end(), want.symbols.begin(), want.symbols.end(),
                      std::back_inserter(left));
  if (want.fixed == 0 || have.fixed % want.fixed != 0) return mismatch();
  int64_t quotient = have.fixed / want.fixed;
  if (left.empty()) {
    target.dims[inferred] = Dim::fixed(quotient);
  } else if (left.size() == 1 && quotient == 1) {
    for (const Dim& dim : x->dims())
      if (dim.raw() == left[0]) target.dims[inferred] = dim;
  } else {
    return Type::tensor_of_rank(x->dtype(), target.rank);
  }
  return Type::tensor(x->dtype(), target.dims);
}

TypeRef infer_broadcast_to(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::broadcast_to);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  ShapeInfo target;
  if (!c.shape(1, "target shape", false, target)) return nullptr;
  if (!c.broadcastable_to(ShapeInfo::of(x), target, "shape")) return nullptr;
  return make_tensor(x->dtype(), target);
}

TypeRef infer_expand_dims(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::expand_dims);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  const std::vector<int64_t>& axes = c.list_attr(0);
  if (x->rank() < 0) return x;
  int out_rank = x->rank() + static_cast<int>(axes.size());
  std::vector<int> positions;
  if (!c.normalize_axes(axes, out_rank, positions)) return nullptr;
  if (!x->has_shape()) return Type::tensor_of_rank(x->dtype(), out_rank);
  std::vector<bool> is_new(static_cast<size_t>(out_rank), false);
  for (int position : positions) is_new[position] = true;
  Dims dims;
  size_t next = 0;
  for (int i = 0; i < out_rank; ++i) dims.push_back(is_new[i] ? Dim::fixed(1) : x->dims()[next++]);
  return Type::tensor(x->dtype(), dims);
}

TypeRef infer_squeeze(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::squeeze);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  const std::vector<int64_t>* axes = c.opt_list_attr(0);
  if (x->rank() < 0) return x;
  Dims dims;
  if (axes == nullptr) {
    // Without axes every unit dimension goes; a symbolic one might be 1, so the rank is then unknown.
    if (!x->has_shape()) return Type::tensor_of_rank(x->dtype(), -1);
    for (const Dim& dim : x->dims()) {
      if (!dim.is_static()) return Type::tensor_of_rank(x->dtype(), -1);
      if (dim.extent() != 1) dims.push_back(dim);
    }
    return Type::tensor(x->dtype(), dims);
  }
  std::vector<int> removed;
  if (!c.normalize_axes(*axes, x->rank(), removed)) return nullptr;
  int out_rank = x->rank() - static_cast<int>(removed.size());
  if (!x->has_shape()) return Type::tensor_of_rank(x->dtype(), out_rank);
  for (int axis : removed) {
    Dim dim = x->dims()[axis];
    if (dim.is_static() && dim.extent() != 1)
      return c.fail(fmt::format("axis {} has extent {}, not 1", axis, dim.extent()));
  }
  for (int i = 0; i < x->rank(); ++i)
    if (std::find(removed.begin(), removed.end(), i) == removed.end()) dims.push_back(x->dims()[i]);
  return Type::tensor(x->dtype(), dims);
}

// Length of the Python slice begin:end:stride over `extent` elements.
int64_t slice_length(int64_t extent, int64_t begin, int64_t end, int64_t stride) {
  // Negative indices count from the end; anything before the start acts as -1, then clamping applies.
  auto clamp_index = [extent](int64_t index, int64_t low, int64_t high) {
    if (index < 0) index = index < -extent ? -1 : index + extent;
    return std::clamp(index, low, high);
  };
  if (stride > 0) {
    int64_t b = clamp_index(begin, 0, extent);
    int64_t e = clamp_index(end, 0, extent);
    return e > b ? (e - b - 1) / stride + 1 : 0;
  }
  int64_t step = stride == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -stride;
  int64_t b = clamp_index(begin, -1, extent - 1);
  int64_t e = clamp_index(end, -1, extent - 1);
  return b > e ? (b - e - 1) / step + 1 : 0;
}

// Length of begin:end:stride over a symbolic extent n where it is exact: the whole axis, or, with `assume_inbound`
// (TVM's promise that begin and end lie within [-n, n], so nothing is clamped) and a positive stride, (end - begin
// + stride - 1) // stride over the normalized positions (`x[:, 1:]` is n - 1). Otherwise nullopt: the length
// depends on clamping against n.
std::optional<Dim> symbolic_slice_length(Dim n, int64_t begin, int64_t end, int64_t stride, bool inbound) {
  constexpr int64_t kToTheEnd = std::numeric_limits<int32_t>::max();  // exporters' "up to the end"
  if (begin == 0 && stride == 1 && end >= kToTheEnd) return n;
  if (!inbound || stride <= 0) return std::nullopt;
  auto position = [&](int64_t index) -> std::optional<Dim> {
    if (index >= kToTheEnd) return n;
    if (index >= 0) return Dim::fixed(index);
    if (index <= -kToTheEnd) return std::nullopt;
    return dim_sub(n, Dim::fixed(-index));
  };
  const std::optional<Dim> start = position(begin);
  const std::optional<Dim> stop = position(end);
  if (!start || !stop) return std::nullopt;
  const std::optional<Dim> span = dim_sub(*stop, *start);
  if (!span || stride == 1) return span;
  const std::optional<Dim> rounded = dim_add(*span, Dim::fixed(stride - 1));
  return rounded ? dim_floor_div(*rounded, Dim::fixed(stride)) : std::nullopt;
}

TypeRef infer_strided_slice(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::strided_slice);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  const std::vector<int64_t>& axes = c.list_attr(0);
  const std::vector<int64_t>& begin = c.list_attr(1);
  const std::vector<int64_t>& end = c.list_attr(2);
  const std::vector<int64_t>* strides = c.opt_list_attr(3);
  for (auto [name, list] : {std::pair<std::string_view, const std::vector<int64_t>*>{"begin", &begin},
                            {"end", &end},
                            {"strides", strides}}) {
    if (list != nullptr && list->size() != axes.size())
      return c.fail(fmt::format("{} {} has {} entries but axes {} has {}", name, list_str(*list), list->size(),
                                list_str(axes), axes.size()));
  }
  if (strides != nullptr)
    for (int64_t stride : *strides)
      if (stride == 0) return c.fail(fmt::format("strides {} must not contain 0", list_str(*strides)));
  if (x->rank() < 0) return x;
  std::vector<int> normalized;
  if (!c.normalize_axes(axes, x->rank(), normalized)) return nullptr;
  if (!x->has_shape()) return x;
  Dims dims(x->dims().begin(), x->dims().end());
  for (size_t i = 0; i < normalized.size(); ++i) {
    Dim& dim = dims[normalized[i]];
    int64_t stride = strides ? (*strides)[i] : 1;
    if (dim.is_static()) {
      dim = Dim::fixed(slice_length(dim.extent(), begin[i], end[i], stride));
    } else if (std::optional<Dim> length = symbolic_slice_length(dim, begin[i], end[i], stride, c.bool_attr(4))) {
      dim = *length;
    } else {
      return Type::tensor_of_rank(x->dtype(), x->rank());  // a symbolic extent sliced: length unknown
    }
  }
  return Type::tensor(x->dtype(), dims);
}

TypeRef infer_concat(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::concat);
  Node* operand = c.operand(0);
  const bool tuple_node = operand->kind() == NodeKind::Tuple;
  if (!tuple_node && (operand->type() == nullptr || !operand->type()->is_tuple())) {
    return c.fail(fmt::format("operand must be a tuple of tensors, got {}",
                              operand->type() ? operand->type()->str() : "nothing"));
  }
  // Gathered on the stack (a combine's concat of its members' weights allocates nothing here), and written over
  // below where a field's type is unknown.
  FewTypes room(tuple_node ? operand->num_operands() : operand->type()->fields().size());
  const std::span<TypeRef> fields = room.span();
  for (size_t i = 0; i < fields.size(); ++i) {
    fields[i] = tuple_node ? operand->operand(i)->type() : operand->type()->fields()[i];
  }
  if (fields.empty()) return c.fail("needs at least one tensor");
  DType dtype = DType::Unknown;
  int rank = -1;
  bool all_known = true;
  for (size_t i = 0; i < fields.size(); ++i) {
    TypeRef field = fields[i];
    if (field == nullptr || field->kind() == TypeKind::Unknown)
      field = fields[i] = Type::tensor_of_rank(DType::Unknown, -1);
    if (!field->is_tensor()) return c.fail(fmt::format("field {} must be a tensor, got {}", i, field->str()));
    if (i == 0) dtype = field->dtype();
    if (!c.join_dtypes(dtype, field->dtype(), dtype)) return nullptr;
    if (field->rank() >= 0) {
      if (rank >= 0 && field->rank() != rank)
        return c.fail(fmt::format("fields have ranks {} and {}", rank, field->rank()));
      rank = field->rank();
    }
    all_known = all_known && field->has_shape();
  }
  std::optional<int64_t> axis = c.opt_int_attr(0);
  if (!axis) {
    // axis=None concatenates the flattened tensors.
    std::optional<Dim> total = Dim::fixed(0);
    for (TypeRef field : fields) {
      if (!field->has_shape()) return Type::tensor_of_rank(dtype, 1);
      const std::optional<Dim> count = num_elements(field->dims());
      if (!count || !(total = dim_add(*total, *count))) return Type::tensor_of_rank(dtype, 1);
    }
    return Type::tensor(dtype, std::span<const Dim>(&*total, 1));
  }
  if (rank < 0) return Type::tensor_of_rank(dtype, -1);
  int concat_axis = 0;
  if (!c.normalize_axis(*axis, rank, concat_axis)) return nullptr;
  if (!all_known) return Type::tensor_of_rank(dtype, rank);
  Dims dims(fields[0]->dims().begin(), fields[0]->dims().end());
  bool known = true;
  std::optional<Dim> total = Dim::fixed(0);  // n + m along a symbolic axis
  for (size_t i = 0; i < fields.size(); ++i) {
    for (int d = 0; d < rank; ++d) {
      Dim dim = fields[i]->dims()[d];
      if (d == concat_axis) {
        if (total) total = dim_add(*total, dim);
        continue;
      }
      Same same = same_dim(dims[d], dim);
      if (same == Same::No)
        return c.fail(
            fmt::format("fields 0 and {} differ in dimension {} ({} vs {})", i, d, dim_text(dims[d]), dim_text(dim)));
      if (same == Same::Maybe) known = false;
    }
  }
  if (total)
    dims[concat_axis] = *total;
  else if (fields.size() > 1)
    known = false;
  return known ? Type::tensor(dtype, dims) : Type::tensor_of_rank(dtype, rank);
}

TypeRef infer_split(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::split);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  const AttrValue& sections = c.attr(0);
  int split_axis = 0;
  if (x->rank() >= 0 && !c.normalize_axis(c.int_attr(1), x->rank(), split_axis)) return nullptr;
  std::optional<int64_t> extent;
  if (x->has_shape() && x->dims()[split_axis].is_static()) extent = x->dims()[split_axis].extent();

  // One piece along the axis; `size` is nullopt when the piece's length is not known.
  auto piece_of = [&](std::optional<Dim> size) {
    if (!x->has_shape()) return x;
    if (!size) return Type::tensor_of_rank(x->dtype(), x->rank());
    Dims dims(x->dims().begin(), x->dims().end());
    dims[split_axis] = *size;
    return Type::tensor(x->dtype(), dims);
  };
  auto piece = [&](std::optional<int64_t> size) {
    return piece_of(size ? std::optional<Dim>(Dim::fixed(*size)) : std::nullopt);
  };
  std::vector<TypeRef> fields;
  if (const int64_t* count = std::get_if<int64_t>(&sections)) {
    if (*count <= 0) return c.fail(fmt::format("indices_or_sections {} must be positive", *count));
    if (*count == 1) return Type::tuple(std::span<const TypeRef>(&x, 1));
    fields.reserve(static_cast<size_t>(std::min<int64_t>(*count, 4096)));
    // A symbolic extent splits into equal pieces when the count divides it exactly (n * 4 in 2: n * 2 each).
    const std::optional<Dim> equal_piece =
        extent || !x->has_shape() ? std::nullopt : dim_exact_div(x->dims()[split_axis], Dim::fixed(*count));
    // Pieces of ceil(extent / count); the last one takes the rest.
    for (int64_t i = 0; i < *count; ++i) {
      if (!extent) {
        fields.push_back(piece_of(equal_piece));
        continue;
      }
      int64_t chunk = (*extent + *count - 1) / *count;
      fields.push_back(piece(std::clamp<int64_t>(*extent - chunk * i, 0, chunk)));
    }
    return Type::tuple(fields);
  }
  const std::vector<int64_t>& indices = std::get<std::vector<int64_t>>(sections);
  if (indices.empty()) return Type::tuple(std::span<const TypeRef>(&x, 1));
  fields.reserve(indices.size() + 1);
  int64_t previous = 0;
  for (int64_t index : indices) {
    if (index < 0) return c.fail(fmt::format("indices_or_sections {} must not be negative", list_str(indices)));
    int64_t begin = extent ? std::min(previous, *extent) : previous;
    int64_t end = extent ? std::min(index, *extent) : index;
    fields.push_back(piece(std::max<int64_t>(0, end - begin)));
    previous = std::max(previous, index);
  }
  fields.push_back(piece(extent ? std::optional<int64_t>(*extent - std::min(previous, *extent)) : std::nullopt));
  return Type::tuple(fields);
}

TypeRef infer_take(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::take);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr) return nullptr;
  TypeRef indices = c.tensor(1, "indices");
  if (indices == nullptr) return nullptr;
  if (indices->dtype() != DType::Unknown && !is_integer(indices->dtype()))
    return c.fail(fmt::format("indices must have an integer dtype, got {}", dtype_name(indices->dtype())));
  const std::string& mode = c.string_attr(1);
  if (mode != "fast" && mode != "clip" && mode != "wrap")
    return c.fail(fmt::format("mode \"{}\" must be \"fast\", \"clip\" or \"wrap\"", mode));
  std::optional<int64_t> axis = c.opt_int_attr(0);
  if (!axis) {
    if (x->rank() >= 0 && x->rank() != 1)
      return c.fail(fmt::format("without an axis the data must be 1-D, got rank {}", x->rank()));
    return with_dtype(indices, x->dtype());
  }
  if (x->rank() < 0) return Type::tensor_of_rank(x->dtype(), -1);
  int take_axis = 0;
  if (!c.normalize_axis(*axis, x->rank(), take_axis)) return nullptr;
  if (indices->rank() < 0) return Type::tensor_of_rank(x->dtype(), -1);
  int out_rank = x->rank() - 1 + indices->rank();
  if (!x->has_shape() || !indices->has_shape()) return Type::tensor_of_rank(x->dtype(), out_rank);
  Dims dims(x->dims().begin(), x->dims().begin() + take_axis);
  dims.append(indices->dims());
  dims.append(x->dims().subspan(static_cast<size_t>(take_axis) + 1));
  return Type::tensor(x->dtype(), dims);
}

// ---------------------------------------------------------------------------------------------------------
// Reductions and scans

template <OpId kOp>
TypeRef infer_reduction(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  const std::vector<int64_t>* axes = c.opt_list_attr(0);
  bool keepdims = c.bool_attr(1);
  if (x->rank() < 0) {
    if (axes == nullptr && !keepdims) return Type::tensor(x->dtype(), {});
    return x;
  }
  std::vector<bool> reduced(static_cast<size_t>(x->rank()), axes == nullptr);
  if (axes != nullptr) {
    std::vector<int> normalized;
    if (!c.normalize_axes(*axes, x->rank(), normalized)) return nullptr;
    for (int axis : normalized) reduced[axis] = true;
  }
  int out_rank = 0;
  for (int i = 0; i < x->rank(); ++i) out_rank += keepdims || !reduced[i] ? 1 : 0;
  if (!x->has_shape()) return Type::tensor_of_rank(x->dtype(), out_rank);
  Dims dims;
  for (int i = 0; i < x->rank(); ++i) {
    if (!reduced[i])
      dims.push_back(x->dims()[i]);
    else if (keepdims)
      dims.push_back(Dim::fixed(1));
  }
  return Type::tensor(x->dtype(), dims);
}

TypeRef infer_cumsum(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::cumsum);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  DType dtype = c.dtype_attr(1);
  if (dtype == DType::Unknown) dtype = x->dtype();
  std::optional<int64_t> axis = c.opt_int_attr(0);
  if (!axis) {
    const std::optional<Dim> count = x->has_shape() ? num_elements(x->dims()) : std::nullopt;
    if (!count) return Type::tensor_of_rank(dtype, 1);
    return Type::tensor(dtype, std::span<const Dim>(&*count, 1));
  }
  int scan_axis = 0;
  if (x->rank() >= 0 && !c.normalize_axis(*axis, x->rank(), scan_axis)) return nullptr;
  return with_dtype(x, dtype);
}

// ---------------------------------------------------------------------------------------------------------
// Creation

TypeRef infer_arange(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::arange);
  int64_t start = c.int_attr(0);
  std::optional<int64_t> end = c.opt_int_attr(1);
  int64_t step = c.int_attr(2);
  DType dtype = c.dtype_attr(3);
  if (dtype == DType::Unknown) dtype = DType::Int64;
  if (!end) {
    end = start;
    start = 0;
  }
  if (step == 0) return c.fail("step must not be 0");
  int64_t count = 0;
  if (step > 0 && *end > start) count = (*end - start + step - 1) / step;
  if (step < 0 && start > *end) count = (start - *end - step - 1) / -step;
  Dim dim = Dim::fixed(count);
  return Type::tensor(dtype, std::span<const Dim>(&dim, 1));
}

TypeRef infer_full(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::full);
  ShapeInfo shape;
  if (!c.shape(0, "shape", false, shape)) return nullptr;
  TypeRef fill = c.tensor(1, "fill_value");
  if (fill == nullptr) return nullptr;
  if (fill->rank() > 0) return c.fail(fmt::format("fill_value must be a scalar, got rank {}", fill->rank()));
  DType dtype = c.dtype_attr(0);
  if (dtype == DType::Unknown) dtype = fill->dtype();
  return make_tensor(dtype, shape);
}

template <OpId kOp>
TypeRef infer_filled(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  ShapeInfo shape;
  if (!c.shape(0, "shape", false, shape)) return nullptr;
  DType dtype = c.dtype_attr(0);
  if (dtype == DType::Unknown) return c.fail("dtype is required");
  return make_tensor(dtype, shape);
}

template <OpId kOp>
TypeRef infer_triangle(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr) return nullptr;
  if (x->rank() >= 0 && x->rank() < 2) return c.fail(fmt::format("operand must have rank >= 2, got {}", x->rank()));
  return x;
}

// ---------------------------------------------------------------------------------------------------------
// Neural-network ops

TypeRef infer_softmax(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::nn_softmax);
  TypeRef x = c.tensor(0, "operand");
  if (x == nullptr || !c.require_float(x, "operand")) return nullptr;
  int axis = 0;
  if (x->rank() >= 0 && !c.normalize_axis(c.int_attr(0), x->rank(), axis)) return nullptr;
  return x;
}

// A per-channel parameter (gamma, beta, running stats, bias) must have the extents of `x` at `axes`.
bool check_parameter(Ctx& c, TypeRef x, size_t operand, std::string_view role, const std::vector<int>& axes,
                     DType& dtype) {
  TypeRef param = c.tensor(operand, role);
  if (param == nullptr || !c.join_dtypes(dtype, param->dtype(), dtype)) return false;
  if (param->rank() < 0) return true;
  if (param->rank() != static_cast<int>(axes.size())) {
    c.fail(fmt::format("{} must have rank {}, got {}", role, axes.size(), param->str()));
    return false;
  }
  if (!param->has_shape() || !x->has_shape()) return true;
  Dims expected;
  for (int axis : axes) expected.push_back(x->dims()[axis]);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (same_dim(param->dims()[i], expected[i]) == Same::No) {
      c.fail(fmt::format("{} has shape {} but the data has {} on axes {}", role, dims_str(param->dims()),
                         dims_str(expected), list_str(std::vector<int64_t>(axes.begin(), axes.end()))));
      return false;
    }
  }
  return true;
}

// layer_norm(x, gamma, beta) and rms_norm(x, weight): parameters shaped like the normalized axes.
template <OpId kOp>
TypeRef infer_axes_norm(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr || !c.require_float(x, "data")) return nullptr;
  const std::vector<int64_t>& axes = c.list_attr(0);
  std::vector<int> normalized;
  if (x->rank() >= 0 && !c.normalize_axes(axes, x->rank(), normalized)) return nullptr;
  if (x->rank() < 0) normalized.assign(axes.size(), 0);
  DType dtype = x->dtype();
  constexpr bool kLayerNorm = kOp == op::nn_layer_norm;
  const char* roles[] = {kLayerNorm ? "gamma" : "weight", "beta"};
  for (size_t i = 1; i < c.num_operands(); ++i) {
    if (x->rank() < 0) {
      if (c.tensor(i, roles[i - 1]) == nullptr) return nullptr;
      continue;
    }
    if (!check_parameter(c, x, i, roles[i - 1], normalized, dtype)) return nullptr;
  }
  return x;
}

TypeRef infer_group_norm(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::nn_group_norm);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr || !c.require_float(x, "data")) return nullptr;
  int64_t groups = c.int_attr(0);
  if (groups <= 0) return c.fail(fmt::format("num_groups {} must be positive", groups));
  if (x->rank() < 0) return x;
  int channel = 0;
  std::vector<int> axes;
  if (!c.normalize_axis(c.int_attr(1), x->rank(), channel) || !c.normalize_axes(c.list_attr(2), x->rank(), axes))
    return nullptr;
  if (x->has_shape() && x->dims()[channel].is_static() && x->dims()[channel].extent() % groups != 0)
    return c.fail(
        fmt::format("channel extent {} is not divisible by num_groups {}", x->dims()[channel].extent(), groups));
  DType dtype = x->dtype();
  if (!check_parameter(c, x, 1, "gamma", {channel}, dtype) || !check_parameter(c, x, 2, "beta", {channel}, dtype))
    return nullptr;
  return x;
}

TypeRef infer_batch_norm(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::nn_batch_norm);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr || !c.require_float(x, "data")) return nullptr;
  int axis = 0;
  if (x->rank() >= 0 && !c.normalize_axis(c.int_attr(0), x->rank(), axis)) return nullptr;
  DType dtype = x->dtype();
  const char* roles[] = {"gamma", "beta", "moving_mean", "moving_var"};
  for (size_t i = 1; i < 5; ++i) {
    if (x->rank() < 0 ? c.tensor(i, roles[i - 1]) == nullptr : !check_parameter(c, x, i, roles[i - 1], {axis}, dtype))
      return nullptr;
  }
  TypeRef fields[] = {x, c.operand(3)->type(), c.operand(4)->type()};
  return Type::tuple(fields);
}

// conv1d / conv2d / conv2d_transpose: data (N, C, spatial...), weight (O, I, kernel...) in any letter order the
// layouts give. conv2d_transpose's attributes are conv2d's with output_padding after padding; its weight is
// (in channels, out channels / groups, kernel...), IOHW by default.
template <OpId kOp, int kSpatial, bool kTranspose = false>
TypeRef infer_conv(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  constexpr std::string_view kDataLetters = kSpatial == 1 ? "NCW" : "NCHW";
  constexpr std::string_view kKernelLetters = kSpatial == 1 ? "OIW" : "OIHW";
  constexpr size_t kShift = kTranspose ? 1 : 0;  // attributes after output_padding move one place
  TypeRef data = c.tensor(0, "data");
  if (data == nullptr) return nullptr;
  TypeRef weight = c.tensor(1, "weight");
  if (weight == nullptr) return nullptr;
  std::vector<int64_t> strides, dilation, output_padding(kSpatial, 0);
  std::vector<Window> windows(kSpatial);
  if (!c.spatial_list(0, "strides", kSpatial, strides) || !c.padding_list(1, kSpatial, windows) ||
      !c.spatial_list(2 + kShift, "dilation", kSpatial, dilation))
    return nullptr;
  if constexpr (kTranspose) {
    if (!c.spatial_list(2, "output_padding", kSpatial, output_padding, 0)) return nullptr;
    for (int s = 0; s < kSpatial; ++s)
      if (output_padding[s] >= strides[s])
        return c.fail(fmt::format("output_padding {} must be smaller than strides {}", list_str(output_padding),
                                  list_str(strides)));
  }
  int64_t groups = c.int_attr(3 + kShift);
  if (groups <= 0) return c.fail(fmt::format("groups {} must be positive", groups));
  std::vector<int> data_pos, kernel_pos, out_pos;
  const std::string& data_layout = c.string_attr(4 + kShift);
  const std::string* out_layout = c.opt_string_attr(6 + kShift);
  if (!parse_layout(c, "data_layout", data_layout, kDataLetters, data_pos) ||
      !parse_layout(c, "kernel_layout", c.string_attr(5 + kShift), kKernelLetters, kernel_pos) ||
      !parse_layout(c, "out_layout", out_layout ? *out_layout : data_layout, kDataLetters, out_pos))
    return nullptr;
  DType dtype = c.dtype_attr(7 + kShift);
  if (dtype == DType::Unknown && !c.join_dtypes(data->dtype(), weight->dtype(), dtype)) return nullptr;
  constexpr int kRank = kSpatial + 2;
  if (data->rank() >= 0 && data->rank() != kRank)
    return c.fail(fmt::format("data must have rank {}, got {}", kRank, data->str()));
  if (weight->rank() >= 0 && weight->rank() != kRank)
    return c.fail(fmt::format("weight must have rank {}, got {}", kRank, weight->str()));
  if (!data->has_shape() || !weight->has_shape()) return Type::tensor_of_rank(dtype, kRank);

  auto data_dim = [&](int letter) { return data->dims()[data_pos[letter]]; };
  auto kernel_dim = [&](int letter) { return weight->dims()[kernel_pos[letter]]; };
  Dim in_channels = data_dim(1);
  Dim out_channels = kernel_dim(0);
  Dim kernel_in = kernel_dim(1);
  if constexpr (kTranspose) {
    if (!c.expect_same(in_channels, kernel_in, "data channels and the weight's input channels")) return nullptr;
    if (in_channels.is_static() && in_channels.extent() % groups != 0)
      return c.fail(fmt::format("input channels {} are not divisible by groups {}", in_channels.extent(), groups));
    const std::optional<Dim> all_out_channels = dim_mul(out_channels, Dim::fixed(groups));
    if (!all_out_channels) return Type::tensor_of_rank(dtype, kRank);
    out_channels = *all_out_channels;
  } else {
    if (in_channels.is_static() && kernel_in.is_static() && in_channels.extent() != kernel_in.extent() * groups)
      return c.fail(fmt::format("data has {} channels but the weight expects {} (in-channels {} x groups {})",
                                in_channels.extent(), kernel_in.extent() * groups, kernel_in.extent(), groups));
    if (out_channels.is_static() && out_channels.extent() % groups != 0)
      return c.fail(fmt::format("output channels {} are not divisible by groups {}", out_channels.extent(), groups));
  }

  Dims out(kRank, Dim::fixed(0));
  out[out_pos[0]] = data_dim(0);
  out[out_pos[1]] = out_channels;
  for (int s = 0; s < kSpatial; ++s) {
    Dim kernel = kernel_dim(2 + s);
    if (!kernel.is_static()) return Type::tensor_of_rank(dtype, kRank);
    windows[s].kernel = kernel.extent();
    windows[s].stride = strides[s];
    windows[s].dilation = dilation[s];
    std::optional<Dim> extent;
    if (!(kTranspose ? c.transposed_window_output(data_dim(2 + s), windows[s], output_padding[s], extent)
                     : c.window_output(data_dim(2 + s), windows[s], extent)))
      return nullptr;
    if (!extent) return Type::tensor_of_rank(dtype, kRank);
    out[out_pos[2 + s]] = *extent;
  }
  return Type::tensor(dtype, out);
}

TypeRef infer_bias_add(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::nn_bias_add);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr) return nullptr;
  int axis = 0;
  DType dtype = x->dtype();
  if (x->rank() < 0) {
    TypeRef bias = c.tensor(1, "bias");
    return bias != nullptr && c.join_dtypes(dtype, bias->dtype(), dtype) ? x : nullptr;
  }
  if (!c.normalize_axis(c.int_attr(0), x->rank(), axis)) return nullptr;
  if (!check_parameter(c, x, 1, "bias", {axis}, dtype)) return nullptr;
  return x;
}

TypeRef infer_dense(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::nn_dense);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr) return nullptr;
  TypeRef w = c.tensor(1, "weight");
  if (w == nullptr) return nullptr;
  DType dtype = c.dtype_attr(1);
  if (dtype == DType::Unknown && !c.join_dtypes(x->dtype(), w->dtype(), dtype)) return nullptr;
  if (w->rank() >= 0 && w->rank() != 2) return c.fail(fmt::format("weight must have rank 2, got {}", w->str()));
  if (x->rank() == 0) return c.fail("data must have rank >= 1, got a scalar");
  if (x->rank() < 0) return Type::tensor_of_rank(dtype, -1);
  std::optional<int64_t> units = c.opt_int_attr(0);
  if (!x->has_shape() || !w->has_shape()) return Type::tensor_of_rank(dtype, x->rank());
  if (!c.expect_same(x->dims().back(), w->dims()[1], "reduction dimensions")) return nullptr;
  if (units && w->dims()[0].is_static() && w->dims()[0].extent() != *units)
    return c.fail(fmt::format("units {} differ from the weight's {} rows", *units, w->dims()[0].extent()));
  Dims dims(x->dims().begin(), x->dims().end() - 1);
  dims.push_back(w->dims()[0]);
  return Type::tensor(dtype, dims);
}

template <OpId kOp>
TypeRef infer_pool2d(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(kOp);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr) return nullptr;
  std::vector<int64_t> pool_size, strides, dilation;
  std::vector<Window> windows(2);
  if (!c.spatial_list(0, "pool_size", 2, pool_size) || !c.spatial_list(1, "strides", 2, strides) ||
      !c.spatial_list(2, "dilation", 2, dilation) || !c.padding_list(3, 2, windows))
    return nullptr;
  bool ceil_mode = c.bool_attr(4);
  std::vector<int> pos, out_pos;
  const std::string* out_layout = c.opt_string_attr(7);
  if (!parse_layout(c, "layout", c.string_attr(6), "NCHW", pos) ||
      !parse_layout(c, "out_layout", out_layout ? *out_layout : c.string_attr(6), "NCHW", out_pos))
    return nullptr;
  if (x->rank() >= 0 && x->rank() != 4) return c.fail(fmt::format("data must have rank 4, got {}", x->str()));
  if (!x->has_shape()) return Type::tensor_of_rank(x->dtype(), 4);
  Dims out(4, Dim::fixed(0));
  out[out_pos[0]] = x->dims()[pos[0]];
  out[out_pos[1]] = x->dims()[pos[1]];
  for (int s = 0; s < 2; ++s) {
    windows[s].kernel = pool_size[s];
    windows[s].stride = strides[s];
    windows[s].dilation = dilation[s];
    windows[s].ceil_mode = ceil_mode;
    std::optional<Dim> extent;
    if (!c.window_output(x->dims()[pos[2 + s]], windows[s], extent)) return nullptr;
    if (!extent) return Type::tensor_of_rank(x->dtype(), 4);
    out[out_pos[2 + s]] = *extent;
  }
  return Type::tensor(x->dtype(), out);
}

TypeRef infer_adaptive_avg_pool2d(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::nn_adaptive_avg_pool2d);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr) return nullptr;
  std::vector<int> pos, out_pos;
  const std::string* out_layout = c.opt_string_attr(2);
  if (!parse_layout(c, "layout", c.string_attr(1), "NCHW", pos) ||
      !parse_layout(c, "out_layout", out_layout ? *out_layout : c.string_attr(1), "NCHW", out_pos))
    return nullptr;
  std::vector<int64_t> size;
  if (const std::vector<int64_t>* output_size = c.opt_list_attr(0)) {
    if (output_size->size() != 1 && output_size->size() != 2)
      return c.fail(fmt::format("output_size {} must have 1 or 2 values", list_str(*output_size)));
    if (!c.spatial_list(0, "output_size", 2, size)) return nullptr;
  }
  if (x->rank() >= 0 && x->rank() != 4) return c.fail(fmt::format("data must have rank 4, got {}", x->str()));
  if (!x->has_shape()) return Type::tensor_of_rank(x->dtype(), 4);
  Dims out(4, Dim::fixed(0));
  for (int letter = 0; letter < 4; ++letter) {
    Dim dim = x->dims()[pos[letter]];
    if (letter >= 2 && !size.empty()) dim = Dim::fixed(size[letter - 2]);
    out[out_pos[letter]] = dim;
  }
  return Type::tensor(x->dtype(), out);
}

// Fails unless `value` is one of `choices`: "method \"x\" must be one of \"a\", \"b\"".
bool check_choice(Ctx& c, std::string_view attr_name, const std::string& value,
                  std::initializer_list<std::string_view> choices) {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return true;
  std::string listed;
  for (std::string_view choice : choices) listed += fmt::format("{}\"{}\"", listed.empty() ? "" : ", ", choice);
  c.fail(fmt::format("{} \"{}\" must be one of {}", attr_name, value, listed));
  return false;
}

// image.resize2d(data, size): the data's batch and channels, the size's two extents at the layout's H and W.
TypeRef infer_resize2d(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::image_resize2d);
  TypeRef x = c.tensor(0, "data");
  if (x == nullptr) return nullptr;
  ShapeInfo size;
  if (!c.shape(1, "size", false, size)) return nullptr;
  if (size.rank >= 0 && size.rank != 2) return c.fail(fmt::format("size must have 2 extents, got {}", size.rank));
  std::vector<int> pos;
  if (!parse_layout(c, "layout", c.string_attr(0), "NCHW", pos) ||
      !check_choice(c, "method", c.string_attr(1), {"nearest_neighbor", "linear", "cubic"}) ||
      !check_choice(c, "coordinate_transformation_mode", c.string_attr(2),
                    {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"}) ||
      !check_choice(c, "rounding_method", c.string_attr(3),
                    {"", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return nullptr;
  DType dtype = c.dtype_attr(7);
  if (dtype == DType::Unknown) dtype = x->dtype();
  if (x->rank() >= 0 && x->rank() != 4) return c.fail(fmt::format("data must have rank 4, got {}", x->str()));
  if (size.known) {
    for (const Dim& dim : size.dims)
      if (dim.is_static() && dim.extent() <= 0)
        return c.fail(fmt::format("size {} must be positive", dims_str(size.dims)));
  }
  if (!x->has_shape() || !size.known) return Type::tensor_of_rank(dtype, 4);
  Dims out(x->dims().begin(), x->dims().end());
  out[pos[2]] = size.dims[0];
  out[pos[3]] = size.dims[1];
  return Type::tensor(dtype, out);
}

TypeRef infer_attention(const InferInput& in, std::string& error) {
  DPL_INFER_BEGIN(op::nn_attention);
  TypeRef q = c.tensor(0, "query");
  if (q == nullptr) return nullptr;
  TypeRef k = c.tensor(1, "key");
  if (k == nullptr) return nullptr;
  TypeRef v = c.tensor(2, "value");
  if (v == nullptr) return nullptr;
  TypeRef bias = c.num_operands() > 3 ? c.tensor(3, "bias") : nullptr;
  if (c.num_operands() > 3 && bias == nullptr) return nullptr;
  if (const std::string* mask = c.opt_string_attr(1); mask && *mask != "TopLeft" && *mask != "BottomRight")
    return c.fail(fmt::format("causal_mask \"{}\" must be \"TopLeft\", \"BottomRight\" or None", *mask));
  if (std::optional<int64_t> window = c.opt_int_attr(2); window && *window <= 0)
    return c.fail(fmt::format("window_size {} must be positive", *window));
  DType dtype;
  if (!c.join_dtypes(q->dtype(), k->dtype(), dtype) || !c.join_dtypes(dtype, v->dtype(), dtype)) return nullptr;
  if (bias && !c.join_dtypes(dtype, bias->dtype(), dtype)) return nullptr;
  for (auto [type, role] : {std::pair{q, "query"}, {k, "key"}, {v, "value"}}) {
    if (type->rank() >= 0 && type->rank() != 4)
      return c.fail(fmt::format("{} must have rank 4 (batch, seq, heads, head_dim), got {}", role, type->str()));
  }
  if (!q->has_shape() || !k->has_shape() || !v->has_shape()) return Type::tensor_of_rank(dtype, 4);
  auto qd = q->dims();
  auto kd = k->dims();
  auto vd = v->dims();
  if (!c.expect_same(qd[0], kd[0], "batch sizes of query and key") ||
      !c.expect_same(qd[0], vd[0], "batch sizes of query and value") ||
      !c.expect_same(qd[3], kd[3], "head dimensions of query and key") ||
      !c.expect_same(kd[1], vd[1], "sequence lengths of key and value") ||
      !c.expect_same(kd[2], vd[2], "head counts of key and value"))
    return nullptr;
  if (qd[2].is_static() && kd[2].is_static() && (kd[2].extent() == 0 || qd[2].extent() % kd[2].extent() != 0))
    return c.fail(fmt::format("query heads {} are not a multiple of key heads {}", qd[2].extent(), kd[2].extent()));
  if (bias) {
    Dims logits = {qd[0], qd[2], qd[1], kd[1]};
    if (!c.broadcastable_to(ShapeInfo::of(bias), ShapeInfo::exactly(logits), "bias")) return nullptr;
  }
  Dims out = {qd[0], qd[1], qd[2], vd[3]};
  return Type::tensor(dtype, out);
}

#undef DPL_INFER_BEGIN

// ---------------------------------------------------------------------------------------------------------
// The table

AttrSpec attr(std::string name, AttrKind kind, AttrValue default_value) {
  return AttrSpec{std::move(name), kind, std::move(default_value)};
}

using Ints = std::vector<int64_t>;
constexpr std::monostate None{};

OpInfo make_op(OpId id, int min_operands, int max_operands, uint32_t traits, InferFn infer,
               std::vector<AttrSpec> attrs = {}) {
  OpInfo info;
  info.id = id;
  info.name = std::string(kOpNames[id]);
  info.min_operands = min_operands;
  info.max_operands = max_operands;
  info.traits = traits;
  info.infer = infer;
  info.attrs = std::move(attrs);
  return info;
}

// infer_binary's result is an operand's type (kTypeOfOperands) unless it makes a bool or checks the dtype.
template <OpId kOp>
OpInfo binary(uint32_t extra_traits = 0) {
  constexpr bool kOperandType = !is_comparison(kOp) && kOp != op::bitwise_and && kOp != op::bitwise_or;
  return make_op(kOp, 2, 2, kBroadcast | extra_traits | (kOperandType ? kTypeOfOperands : 0u), infer_binary<kOp>);
}

template <OpId kOp, bool kRequireFloat>
OpInfo unary(std::vector<AttrSpec> attrs = {}) {
  return make_op(kOp, 1, 1, kElementwise | (kRequireFloat ? 0u : kTypeOfOperands), infer_unary<kOp, kRequireFloat>,
                 std::move(attrs));
}

template <OpId kOp>
OpInfo reduction() {
  return make_op(kOp, 1, 1, kReduction, infer_reduction<kOp>,
                 {attr("axis", AttrKind::OptIntList, None), attr("keepdims", AttrKind::Bool, false)});
}

std::vector<AttrSpec> conv_attrs(int spatial, std::string data_layout, std::string kernel_layout) {
  Ints ones(static_cast<size_t>(spatial), 1);
  return {attr("strides", AttrKind::IntList, ones),
          attr("padding", AttrKind::IntList, Ints(static_cast<size_t>(2 * spatial), 0)),
          attr("dilation", AttrKind::IntList, ones),
          attr("groups", AttrKind::Int, int64_t{1}),
          attr("data_layout", AttrKind::String, std::move(data_layout)),
          attr("kernel_layout", AttrKind::String, std::move(kernel_layout)),
          attr("out_layout", AttrKind::OptString, None),
          attr("out_dtype", AttrKind::DType, std::string("void"))};
}

// conv2d's attributes with output_padding after padding, and the weight in IOHW.
std::vector<AttrSpec> conv_transpose_attrs() {
  std::vector<AttrSpec> attrs = conv_attrs(2, "NCHW", "IOHW");
  attrs.insert(attrs.begin() + 2, attr("output_padding", AttrKind::IntList, Ints{0, 0}));
  return attrs;
}

std::vector<AttrSpec> pool2d_attrs() {
  return {attr("pool_size", AttrKind::IntList, Ints{1, 1}),
          attr("strides", AttrKind::IntList, Ints{1, 1}),
          attr("dilation", AttrKind::IntList, Ints{1, 1}),
          attr("padding", AttrKind::IntList, Ints{0, 0, 0, 0}),
          attr("ceil_mode", AttrKind::Bool, false),
          attr("count_include_pad", AttrKind::Bool, false),
          attr("layout", AttrKind::String, std::string("NCHW")),
          attr("out_layout", AttrKind::OptString, None)};
}

}  // namespace

std::vector<OpInfo> builtin_ops() {
  const std::string kVoid = "void";
  std::vector<OpInfo> ops = {
      binary<op::add>(kCommutative),
      binary<op::subtract>(),
      binary<op::multiply>(kCommutative),
      binary<op::divide>(),
      binary<op::floor_divide>(),
      binary<op::power>(),
      binary<op::maximum>(kCommutative),
      binary<op::minimum>(kCommutative),
      binary<op::equal>(kCommutative),
      binary<op::not_equal>(kCommutative),
      binary<op::less>(),
      binary<op::less_equal>(),
      binary<op::greater>(),
      binary<op::greater_equal>(),
      binary<op::logical_and>(kCommutative),
      binary<op::logical_or>(kCommutative),
      binary<op::bitwise_and>(kCommutative),
      binary<op::bitwise_or>(kCommutative),

      unary<op::exp, true>(),
      unary<op::log, true>(),
      unary<op::sqrt, true>(),
      unary<op::rsqrt, true>(),
      unary<op::negative, false>(),
      unary<op::abs, false>(),
      unary<op::tanh, true>(),
      unary<op::sigmoid, true>(),
      unary<op::erf, true>(),
      unary<op::cos, true>(),
      unary<op::sin, true>(),
      unary<op::logical_not, false>(),
      make_op(op::astype, 1, 1, kElementwise, infer_astype, {attr("dtype", AttrKind::DType, kVoid)}),
      make_op(op::clip, 1, 1, kElementwise, infer_clip,
              {attr("min", AttrKind::OptFloat, None), attr("max", AttrKind::OptFloat, None)}),
      make_op(op::where, 3, 3, kBroadcast, infer_where),
      unary<op::nn_relu, false>(),
      unary<op::nn_leaky_relu, true>({attr("alpha", AttrKind::Float, 0.01)}),
      unary<op::nn_gelu, true>(),
      unary<op::nn_gelu_tanh, true>(),
      unary<op::nn_silu, true>(),

      make_op(op::matmul, 2, 2, kOpaque, infer_matmul, {attr("out_dtype", AttrKind::DType, kVoid)}),
      make_op(op::permute_dims, 1, 1, kInjective, infer_permute_dims, {attr("axes", AttrKind::OptIntList, None)}),
      make_op(op::reshape, 2, 2, kInjective, infer_reshape),
      make_op(op::broadcast_to, 2, 2, kBroadcast, infer_broadcast_to),
      make_op(op::expand_dims, 1, 1, kInjective, infer_expand_dims, {attr("axis", AttrKind::IntList, Ints{})}),
      make_op(op::squeeze, 1, 1, kInjective, infer_squeeze, {attr("axis", AttrKind::OptIntList, None)}),
      make_op(op::strided_slice, 1, 1, kInjective, infer_strided_slice,
              {attr("axes", AttrKind::IntList, Ints{}), attr("begin", AttrKind::IntList, Ints{}),
               attr("end", AttrKind::IntList, Ints{}), attr("strides", AttrKind::OptIntList, None),
               attr("assume_inbound", AttrKind::Bool, false)}),
      make_op(op::concat, 1, 1, kInjective, infer_concat, {attr("axis", AttrKind::OptInt, int64_t{0})}),
      make_op(
          op::split, 1, 1, kInjective, infer_split,
          {attr("indices_or_sections", AttrKind::IntOrIntList, int64_t{1}), attr("axis", AttrKind::Int, int64_t{0})}),
      make_op(op::take, 2, 2, kInjective, infer_take,
              {attr("axis", AttrKind::OptInt, None), attr("mode", AttrKind::String, std::string("fast"))}),

      reduction<op::sum>(),
      reduction<op::mean>(),
      reduction<op::max>(),
      reduction<op::min>(),
      make_op(op::cumsum, 1, 1, kOpaque, infer_cumsum,
              {attr("axis", AttrKind::OptInt, None), attr("dtype", AttrKind::DType, kVoid),
               attr("exclusive", AttrKind::Bool, false)}),

      make_op(op::arange, 0, 0, kOpaque, infer_arange,
              {attr("start", AttrKind::Int, int64_t{0}), attr("end", AttrKind::OptInt, None),
               attr("step", AttrKind::Int, int64_t{1}), attr("dtype", AttrKind::DType, kVoid)}),
      make_op(op::full, 2, 2, kElementwise, infer_full, {attr("dtype", AttrKind::DType, kVoid)}),
      make_op(op::zeros, 1, 1, kElementwise, infer_filled<op::zeros>, {attr("dtype", AttrKind::DType, kVoid)}),
      make_op(op::ones, 1, 1, kElementwise, infer_filled<op::ones>, {attr("dtype", AttrKind::DType, kVoid)}),
      make_op(op::triu, 1, 1, kElementwise, infer_triangle<op::triu>, {attr("k", AttrKind::Int, int64_t{0})}),
      make_op(op::tril, 1, 1, kElementwise, infer_triangle<op::tril>, {attr("k", AttrKind::Int, int64_t{0})}),

      make_op(op::nn_softmax, 1, 1, kOpaque, infer_softmax, {attr("axis", AttrKind::Int, int64_t{-1})}),
      make_op(op::nn_layer_norm, 3, 3, kOpaque, infer_axes_norm<op::nn_layer_norm>,
              {attr("axes", AttrKind::IntList, Ints{-1}), attr("epsilon", AttrKind::Float, 1e-5),
               attr("center", AttrKind::Bool, true), attr("scale", AttrKind::Bool, true)}),
      make_op(op::nn_rms_norm, 2, 2, kOpaque, infer_axes_norm<op::nn_rms_norm>,
              {attr("axes", AttrKind::IntList, Ints{-1}), attr("epsilon", AttrKind::Float, 1e-5)}),
      make_op(op::nn_group_norm, 3, 3, kOpaque, infer_group_norm,
              {attr("num_groups", AttrKind::Int, int64_t{1}), attr("channel_axis", AttrKind::Int, int64_t{1}),
               attr("axes", AttrKind::IntList, Ints{2, 3}), attr("epsilon", AttrKind::Float, 1e-5),
               attr("center", AttrKind::Bool, true), attr("scale", AttrKind::Bool, true)}),
      make_op(op::nn_batch_norm, 5, 5, kOpaque, infer_batch_norm,
              {attr("axis", AttrKind::Int, int64_t{1}), attr("epsilon", AttrKind::Float, 1e-5),
               attr("center", AttrKind::Bool, true), attr("scale", AttrKind::Bool, true),
               attr("momentum", AttrKind::Float, 0.1), attr("training", AttrKind::Bool, true)}),
      make_op(op::nn_conv1d, 2, 2, kOpaque, infer_conv<op::nn_conv1d, 1>, conv_attrs(1, "NCW", "OIW")),
      make_op(op::nn_conv2d, 2, 2, kOpaque, infer_conv<op::nn_conv2d, 2>, conv_attrs(2, "NCHW", "OIHW")),
      make_op(op::nn_conv2d_transpose, 2, 2, kOpaque, infer_conv<op::nn_conv2d_transpose, 2, true>,
              conv_transpose_attrs()),
      make_op(op::nn_bias_add, 2, 2, kBroadcast, infer_bias_add, {attr("axis", AttrKind::Int, int64_t{1})}),
      make_op(op::nn_dense, 2, 2, kOpaque, infer_dense,
              {attr("units", AttrKind::OptInt, None), attr("out_dtype", AttrKind::DType, kVoid)}),
      make_op(op::nn_max_pool2d, 1, 1, kOpaque, infer_pool2d<op::nn_max_pool2d>, pool2d_attrs()),
      make_op(op::nn_avg_pool2d, 1, 1, kOpaque, infer_pool2d<op::nn_avg_pool2d>, pool2d_attrs()),
      make_op(op::nn_adaptive_avg_pool2d, 1, 1, kOpaque, infer_adaptive_avg_pool2d,
              {attr("output_size", AttrKind::OptIntList, None), attr("layout", AttrKind::String, std::string("NCHW")),
               attr("out_layout", AttrKind::OptString, None)}),
      make_op(op::nn_attention, 3, 4, kOpaque, infer_attention,
              {attr("scale", AttrKind::OptFloat, None), attr("causal_mask", AttrKind::OptString, None),
               attr("window_size", AttrKind::OptInt, None)}),
      // TVM's roi (a float list, read only by tf_crop_and_resize) is not an attribute: dpl has no float lists.
      make_op(op::image_resize2d, 2, 2, kOpaque, infer_resize2d,
              {attr("layout", AttrKind::String, std::string("NCHW")),
               attr("method", AttrKind::String, std::string("linear")),
               attr("coordinate_transformation_mode", AttrKind::String, std::string("half_pixel")),
               attr("rounding_method", AttrKind::String, std::string("round")),
               attr("cubic_alpha", AttrKind::Float, -0.75), attr("cubic_exclude", AttrKind::Int, int64_t{0}),
               attr("extrapolation_value", AttrKind::Float, 0.0), attr("out_dtype", AttrKind::DType, kVoid)}),
  };
  return ops;
}

}  // namespace dpl::detail
