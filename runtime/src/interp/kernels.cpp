// Reference kernels for every built-in op: direct loops over doubles, rounded to the result dtype once at the end.
#include "kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace dpl::interp {

void fail(std::string message) { throw EvalError(std::move(message)); }

namespace {

using Shape = std::vector<int64_t>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

template <typename... Args>
[[noreturn]] void failf(fmt::format_string<Args...> format, Args&&... args) {
  fail(fmt::format(format, std::forward<Args>(args)...));
}

std::string shape_str(std::span<const int64_t> shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

std::string_view dtype_str(DType dtype) {
  const std::string_view name = dtype_name(dtype);
  return name.empty() ? "unknown" : name;
}

int64_t count_of(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

// Integer tensor elements as int64 (saturating: a double of 2^63 does not convert).
int64_t as_int64(double value) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isnan(value)) return 0;
  if (value >= kTwo63) return std::numeric_limits<int64_t>::max();
  if (value < -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

int normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) failf("axis {} is out of range for rank {}", axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<int> normalize_axes(std::span<const int64_t> axes, int64_t rank) {
  std::vector<int> result;
  for (int64_t axis : axes) {
    const int normalized = normalize_axis(axis, rank);
    if (std::find(result.begin(), result.end(), normalized) != result.end()) failf("axis {} appears twice", axis);
    result.push_back(normalized);
  }
  return result;
}

std::vector<int> all_axes_except(int rank, std::span<const int> excluded) {
  std::vector<int> result;
  for (int d = 0; d < rank; ++d) {
    if (std::find(excluded.begin(), excluded.end(), d) == excluded.end()) result.push_back(d);
  }
  return result;
}

Shape row_major_strides(std::span<const int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// The offsets `base + sum(index[d] * strides[d])` of every element of `shape`, in row-major order. This one
// indexing primitive serves broadcasting, transposes, slices, concatenation, reductions and normalizations.
std::vector<int64_t> strided_offsets(std::span<const int64_t> shape, std::span<const int64_t> strides,
                                     int64_t base = 0) {
  std::vector<int64_t> offsets(static_cast<size_t>(count_of(shape)));
  Shape index(shape.size(), 0);
  int64_t offset = base;
  for (int64_t& slot : offsets) {
    slot = offset;
    for (size_t d = shape.size(); d-- > 0;) {  // odometer step
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return offsets;
}

// Strides that number the coordinates along `axes` row-major, in the order given; 0 along the other dims.
Shape strides_over(std::span<const int64_t> shape, std::span<const int> axes) {
  Shape strides(shape.size(), 0);
  int64_t stride = 1;
  for (size_t i = axes.size(); i-- > 0;) {
    strides[axes[i]] = stride;
    stride *= shape[axes[i]];
  }
  return strides;
}

// For each element of `shape`, its position within the sub-tensor spanned by `axes`.
std::vector<int64_t> offsets_along(std::span<const int64_t> shape, std::span<const int> axes) {
  return strided_offsets(shape, strides_over(shape, axes));
}

int64_t count_along(std::span<const int64_t> shape, std::span<const int> axes) {
  int64_t count = 1;
  for (int axis : axes) count *= shape[axis];
  return count;
}

// ---------------------------------------------------------------------------------------------------------------
// Broadcasting

Shape broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) failf("shapes {} and {} do not broadcast", shape_str(a), shape_str(b));
    result[i] = da == 1 ? db : da;
  }
  return result;
}

// Where each element of `out_shape` reads from a tensor of `shape` broadcast to it.
std::vector<int64_t> broadcast_offsets(std::span<const int64_t> shape, std::span<const int64_t> out_shape) {
  if (broadcast_shapes(shape, out_shape) != Shape(out_shape.begin(), out_shape.end())) {
    failf("shape {} does not broadcast to {}", shape_str(shape), shape_str(out_shape));
  }
  const Shape own = row_major_strides(shape);
  Shape strides(out_shape.size(), 0);
  const size_t lead = out_shape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) strides[lead + d] = shape[d] == 1 ? 0 : own[d];
  return strided_offsets(out_shape, strides);
}

// ---------------------------------------------------------------------------------------------------------------
// Building results

Value make(DType dtype, Shape shape, std::vector<double> values) {
  return Tensor::from_values(dtype, std::move(shape), std::move(values));
}

DType common_dtype(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) failf("operand dtypes differ: {} and {}", dtype_str(a.dtype()), dtype_str(b.dtype()));
  return a.dtype();
}

Tensor gather(const KernelArgs& args, const Tensor& x, Shape out_shape, const std::vector<int64_t>& offsets) {
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> values = x.values();
  for (size_t i = 0; i < out.size(); ++i) out[i] = values[offsets[i]];
  return Tensor::from_values(x.dtype(), std::move(out_shape), std::move(out));
}

Tensor permute(const KernelArgs& args, const Tensor& x, std::span<const int> axes) {
  const Shape own = x.strides();
  Shape out_shape(axes.size());
  Shape strides(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    out_shape[i] = x.shape()[axes[i]];
    strides[i] = own[axes[i]];
  }
  const std::vector<int64_t> offsets = strided_offsets(out_shape, strides);
  return gather(args, x, std::move(out_shape), offsets);
}

// ---------------------------------------------------------------------------------------------------------------
// Elementwise ops

template <typename Fn>
Value map_unary(const KernelArgs& args, DType out_dtype, Fn fn) {
  const Tensor& x = args.tensor(0);
  std::vector<double> values = x.values();
  for (double& value : values) value = fn(value);
  return make(out_dtype, x.shape(), std::move(values));
}

template <typename Fn>
Value same_dtype_unary(const KernelArgs& args, Fn fn) {
  return map_unary(args, args.tensor(0).dtype(), fn);
}

template <typename Fn>
Value map_binary(const KernelArgs& args, DType out_dtype, Fn fn) {
  const Tensor& a = args.tensor(0);
  const Tensor& b = args.tensor(1);
  Shape shape = broadcast_shapes(a.shape(), b.shape());
  std::vector<double> out = args.buffer(shape);
  const std::vector<double> a_values = a.values();
  const std::vector<double> b_values = b.values();
  const std::vector<int64_t> a_offsets = broadcast_offsets(a.shape(), shape);
  const std::vector<int64_t> b_offsets = broadcast_offsets(b.shape(), shape);
  for (size_t i = 0; i < out.size(); ++i) out[i] = fn(a_values[a_offsets[i]], b_values[b_offsets[i]]);
  return make(out_dtype, std::move(shape), std::move(out));
}

template <typename Fn>
Value arithmetic(const KernelArgs& args, Fn fn) {
  return map_binary(args, common_dtype(args.tensor(0), args.tensor(1)), fn);
}

template <typename Predicate>
Value comparison(const KernelArgs& args, Predicate predicate) {
  common_dtype(args.tensor(0), args.tensor(1));
  return map_binary(args, DType::Bool, [&](double x, double y) { return predicate(x, y) ? 1.0 : 0.0; });
}

template <typename Fn>
Value bitwise(const KernelArgs& args, Fn fn) {
  const DType dtype = common_dtype(args.tensor(0), args.tensor(1));
  if (is_float(dtype)) failf("{} needs integer or bool operands, got {}", args.op().name, dtype_str(dtype));
  return map_binary(args, dtype, [&](double x, double y) { return static_cast<double>(fn(as_int64(x), as_int64(y))); });
}

double nan_propagating_max(double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y); }
double nan_propagating_min(double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::min(x, y); }

// Integer division truncates toward zero, as TVM's integer `divide` does.
Value divide_kernel(const KernelArgs& args) {
  const DType dtype = common_dtype(args.tensor(0), args.tensor(1));
  if (is_float(dtype)) return map_binary(args, dtype, [](double x, double y) { return x / y; });
  return map_binary(args, dtype, [](double x, double y) {
    const int64_t numerator = as_int64(x);
    const int64_t denominator = as_int64(y);
    if (denominator == 0) fail("integer division by zero");
    if (denominator == -1) return -static_cast<double>(numerator);  // INT64_MIN / -1 overflows
    return static_cast<double>(numerator / denominator);
  });
}

Value floor_divide_kernel(const KernelArgs& args) {
  const DType dtype = common_dtype(args.tensor(0), args.tensor(1));
  if (is_float(dtype)) return map_binary(args, dtype, [](double x, double y) { return std::floor(x / y); });
  return map_binary(args, dtype, [](double x, double y) {
    const int64_t numerator = as_int64(x);
    const int64_t denominator = as_int64(y);
    if (denominator == 0) fail("integer division by zero");
    if (denominator == -1) return -static_cast<double>(numerator);
    int64_t quotient = numerator / denominator;
    if (numerator % denominator != 0 && ((numerator < 0) != (denominator < 0))) --quotient;
    return static_cast<double>(quotient);
  });
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double gelu_tanh(double x) {
  const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
}

Value astype_kernel(const KernelArgs& args) {
  const std::optional<DType> dtype = args.dtype_attr("dtype");
  if (!dtype) fail("astype needs a dtype");
  return map_unary(args, *dtype, [](double x) { return x; });  // rounding to the new dtype does the cast
}

Value clip_kernel(const KernelArgs& args) {
  const double low = args.opt_float_attr("min").value_or(-kInfinity);  // None: unbounded
  const double high = args.opt_float_attr("max").value_or(kInfinity);
  return same_dtype_unary(args, [&](double x) { return std::isnan(x) ? x : std::min(std::max(x, low), high); });
}

Value leaky_relu_kernel(const KernelArgs& args) {
  const double alpha = args.has_attr("alpha") ? args.float_attr("alpha") : 0.01;
  return same_dtype_unary(args, [&](double x) { return x < 0.0 ? alpha * x : x; });
}

Value where_kernel(const KernelArgs& args) {
  const Tensor& condition = args.tensor(0);
  const Tensor& a = args.tensor(1);
  const Tensor& b = args.tensor(2);
  const DType dtype = common_dtype(a, b);
  Shape shape = broadcast_shapes(broadcast_shapes(condition.shape(), a.shape()), b.shape());
  std::vector<double> out = args.buffer(shape);
  const std::vector<double> c_values = condition.values();
  const std::vector<double> a_values = a.values();
  const std::vector<double> b_values = b.values();
  const std::vector<int64_t> c_offsets = broadcast_offsets(condition.shape(), shape);
  const std::vector<int64_t> a_offsets = broadcast_offsets(a.shape(), shape);
  const std::vector<int64_t> b_offsets = broadcast_offsets(b.shape(), shape);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = c_values[c_offsets[i]] != 0.0 ? a_values[a_offsets[i]] : b_values[b_offsets[i]];
  }
  return make(dtype, std::move(shape), std::move(out));
}

// ---------------------------------------------------------------------------------------------------------------
// Linear algebra

DType result_dtype(const KernelArgs& args, const Tensor& a, const Tensor& b) {
  const std::optional<DType> out_dtype = args.dtype_attr("out_dtype");
  return out_dtype ? *out_dtype : common_dtype(a, b);
}

// numpy matmul: 1-D operands are promoted (a row / a column vector, removed again from the result), batch dims
// broadcast. Accumulates in double; the result is rounded once.
Value matmul_kernel(const KernelArgs& args) {
  const Tensor& a = args.tensor(0);
  const Tensor& b = args.tensor(1);
  if (a.rank() == 0 || b.rank() == 0) fail("matmul operands must have rank >= 1");
  const DType dtype = result_dtype(args, a, b);
  Shape a_shape = a.shape();
  Shape b_shape = b.shape();
  if (a.rank() == 1) a_shape.insert(a_shape.begin(), 1);
  if (b.rank() == 1) b_shape.push_back(1);
  const int64_t rows = a_shape[a_shape.size() - 2];
  const int64_t inner = a_shape.back();
  const int64_t cols = b_shape.back();
  if (b_shape[b_shape.size() - 2] != inner) {
    failf("matmul: inner dimensions {} and {} differ", inner, b_shape[b_shape.size() - 2]);
  }
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2);
  const Shape b_batch(b_shape.begin(), b_shape.end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch);
  Shape out_shape = batch;
  out_shape.push_back(rows);
  out_shape.push_back(cols);
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<int64_t> a_batches = broadcast_offsets(a_batch, batch);
  const std::vector<int64_t> b_batches = broadcast_offsets(b_batch, batch);
  const std::vector<double> a_values = a.values();
  const std::vector<double> b_values = b.values();
  for (size_t n = 0; n < a_batches.size(); ++n) {
    const double* a_matrix = a_values.data() + a_batches[n] * rows * inner;
    const double* b_matrix = b_values.data() + b_batches[n] * inner * cols;
    double* out_matrix = out.data() + static_cast<int64_t>(n) * rows * cols;
    // k outermost: each row of b is read once and reused for every row of a.
    for (int64_t k = 0; k < inner; ++k) {
      const double* b_row = b_matrix + k * cols;
      for (int64_t i = 0; i < rows; ++i) {
        const double a_ik = a_matrix[i * inner + k];
        double* out_row = out_matrix + i * cols;
        for (int64_t j = 0; j < cols; ++j) out_row[j] += a_ik * b_row[j];
      }
    }
  }
  if (a.rank() == 1) out_shape.erase(out_shape.end() - 2);
  if (b.rank() == 1) out_shape.pop_back();
  return make(dtype, std::move(out_shape), std::move(out));
}

// dense(x, w) = x · wᵀ: x (..., K), w (N, K) -> (..., N).
Value dense_kernel(const KernelArgs& args) {
  const Tensor& data = args.tensor(0);
  const Tensor& weight = args.tensor(1);
  if (data.rank() < 1 || weight.rank() != 2) fail("dense expects data of rank >= 1 and a 2-D weight");
  const int64_t inner = data.shape().back();
  const int64_t units = weight.shape()[0];
  if (weight.shape()[1] != inner) failf("dense: data has {} features but the weight has {}", inner, weight.shape()[1]);
  const DType dtype = result_dtype(args, data, weight);
  Shape out_shape = data.shape();
  out_shape.back() = units;
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> x = data.values();
  const std::vector<double> w = weight.values();
  const int64_t rows = count_of(std::span(data.shape()).first(data.shape().size() - 1));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t u = 0; u < units; ++u) {
      double sum = 0.0;
      for (int64_t k = 0; k < inner; ++k) sum += x[r * inner + k] * w[u * inner + k];
      out[r * units + u] = sum;
    }
  }
  return make(dtype, std::move(out_shape), std::move(out));
}

// ---------------------------------------------------------------------------------------------------------------
// Layout and data movement

Value permute_dims_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  std::vector<int> axes;
  if (std::optional<Shape> given = args.opt_ints_attr("axes")) {
    if (static_cast<int>(given->size()) != x.rank()) {
      failf("permute_dims: {} axes for a tensor of rank {}", given->size(), x.rank());
    }
    axes = normalize_axes(*given, x.rank());
  } else {
    for (int d = x.rank(); d-- > 0;) axes.push_back(d);
  }
  return permute(args, x, axes);
}

// A new shape for `x`; one dim may be -1 (inferred).
Shape resolve_new_shape(const Tensor& x, Shape shape) {
  int64_t known = 1;
  int inferred = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1 && inferred < 0) {
      inferred = static_cast<int>(d);
    } else if (shape[d] < 0) {
      failf("reshape: invalid target shape {}", shape_str(shape));
    } else {
      known *= shape[d];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || x.num_elements() % known != 0) {
      failf("reshape: cannot infer -1 in {} for {} elements", shape_str(shape), x.num_elements());
    }
    shape[inferred] = x.num_elements() / known;
  }
  const std::optional<int64_t> count = checked_num_elements(shape);
  if (!count || *count != x.num_elements()) {
    failf("reshape: {} elements cannot take shape {}", x.num_elements(), shape_str(shape));
  }
  return shape;
}

Value reshape_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  Shape target = args.num_operands() > 1 ? args.shape_operand(1) : args.ints_attr("shape");
  return x.reshaped(resolve_new_shape(x, std::move(target)));
}

Value broadcast_to_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  Shape target = args.shape_operand(1);
  if (target.size() < x.shape().size()) {
    failf("broadcast_to: cannot broadcast {} to the lower-rank shape {}", shape_str(x.shape()), shape_str(target));
  }
  args.buffer(target);  // validates the target before computing offsets for it
  const std::vector<int64_t> offsets = broadcast_offsets(x.shape(), target);
  return gather(args, x, std::move(target), offsets);
}

Value expand_dims_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const Shape axes_attr = args.ints_attr("axis");
  const int out_rank = x.rank() + static_cast<int>(axes_attr.size());
  const std::vector<int> axes = normalize_axes(axes_attr, out_rank);
  Shape shape;
  size_t next_input_dim = 0;
  for (int d = 0; d < out_rank; ++d) {
    const bool inserted = std::find(axes.begin(), axes.end(), d) != axes.end();
    shape.push_back(inserted ? 1 : x.shape()[next_input_dim++]);
  }
  return x.reshaped(std::move(shape));
}

Value squeeze_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const std::optional<Shape> axes_attr = args.opt_ints_attr("axis");
  std::vector<int> axes;
  if (axes_attr) {
    axes = normalize_axes(*axes_attr, x.rank());
    for (int axis : axes) {
      if (x.shape()[axis] != 1) failf("squeeze: axis {} has extent {}, not 1", axis, x.shape()[axis]);
    }
  }
  Shape shape;
  for (int d = 0; d < x.rank(); ++d) {
    const bool squeezed = axes_attr ? std::find(axes.begin(), axes.end(), d) != axes.end() : x.shape()[d] == 1;
    if (!squeezed) shape.push_back(x.shape()[d]);
  }
  return x.reshaped(std::move(shape));
}

// One axis of a slice: the first index, the step, and how many elements.
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t length = 0;
};

// Python's slice semantics (negative indices count from the end; out-of-range bounds are clamped).
SliceRange python_slice(int64_t extent, int64_t begin, int64_t end, int64_t step) {
  if (step == 0) fail("strided_slice: a stride is 0");
  const int64_t lower = step > 0 ? 0 : -1;
  const int64_t upper = step > 0 ? extent : extent - 1;
  auto clamp_index = [&](int64_t index) {
    if (index < 0) index = std::max(index + extent, lower);
    return std::min(index, upper);
  };
  const int64_t start = clamp_index(begin);
  const int64_t stop = clamp_index(end);
  const int64_t distance = step > 0 ? stop - start : start - stop;
  const int64_t magnitude = step > 0 ? step : (step == std::numeric_limits<int64_t>::min() ? -(step + 1) : -step);
  return {start, step, distance > 0 ? (distance - 1) / magnitude + 1 : 0};
}

// The elements of `x` selected by one SliceRange per dim.
Tensor slice(const KernelArgs& args, const Tensor& x, std::span<const SliceRange> ranges) {
  const Shape own = x.strides();
  Shape out_shape(ranges.size());
  Shape strides(ranges.size());
  int64_t base = 0;
  for (size_t d = 0; d < ranges.size(); ++d) {
    out_shape[d] = ranges[d].length;
    // With one element the step is never taken (and a huge step would overflow the product).
    strides[d] = ranges[d].length > 1 ? own[d] * ranges[d].step : 0;
    base += own[d] * ranges[d].start;
  }
  const std::vector<int64_t> offsets = strided_offsets(out_shape, strides, base);
  return gather(args, x, std::move(out_shape), offsets);
}

std::vector<SliceRange> full_ranges(const Tensor& x) {
  std::vector<SliceRange> ranges;
  for (int64_t extent : x.shape()) ranges.push_back({0, 1, extent});
  return ranges;
}

Value strided_slice_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const Shape axes_attr = args.ints_attr("axes");
  const Shape begin = args.ints_attr("begin");
  const Shape end = args.ints_attr("end");
  const Shape strides = args.opt_ints_attr("strides").value_or(Shape(axes_attr.size(), 1));
  if (begin.size() != axes_attr.size() || end.size() != axes_attr.size() || strides.size() != axes_attr.size()) {
    fail("strided_slice: axes, begin, end and strides differ in length");
  }
  const std::vector<int> axes = normalize_axes(axes_attr, x.rank());
  std::vector<SliceRange> ranges = full_ranges(x);
  for (size_t i = 0; i < axes.size(); ++i) {
    ranges[axes[i]] = python_slice(x.shape()[axes[i]], begin[i], end[i], strides[i]);
  }
  return slice(args, x, ranges);
}

// concat's and other variadic ops' inputs: one tuple operand, or the operands themselves.
std::vector<const Tensor*> tensor_list(const KernelArgs& args) {
  std::vector<const Tensor*> tensors;
  if (args.num_operands() == 1 && args.operand(0).is_tuple()) {
    for (const Value& field : args.operand(0).fields()) {
      if (!field.is_tensor()) failf("{}: every input must be a tensor, got {}", args.op().name, field.type_str());
      tensors.push_back(&field.tensor());
    }
  } else {
    for (size_t i = 0; i < args.num_operands(); ++i) tensors.push_back(&args.tensor(i));
  }
  return tensors;
}

Value concat_kernel(const KernelArgs& args) {
  std::vector<const Tensor*> inputs = tensor_list(args);
  if (inputs.empty()) fail("concat needs at least one tensor");
  std::vector<Tensor> flattened;  // axis=None concatenates the flattened inputs
  const std::optional<int64_t> axis_attr = args.opt_int_attr("axis");
  if (!axis_attr) {
    for (const Tensor* input : inputs) flattened.push_back(input->reshaped({input->num_elements()}));
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = &flattened[i];
  }
  const Tensor& first = *inputs[0];
  const int axis = normalize_axis(axis_attr.value_or(0), first.rank());
  Shape out_shape = first.shape();
  out_shape[axis] = 0;
  for (const Tensor* input : inputs) {
    Shape expected = first.shape();
    expected[axis] = input->shape()[axis];
    if (input->rank() != first.rank() || input->shape() != expected || input->dtype() != first.dtype()) {
      failf("concat: {} does not fit {} along axis {}", input->type_str(), first.type_str(), axis);
    }
    out_shape[axis] += input->shape()[axis];
  }
  std::vector<double> out = args.buffer(out_shape);
  const Shape out_strides = row_major_strides(out_shape);
  int64_t position = 0;  // where the next input starts along `axis`
  for (const Tensor* input : inputs) {
    const std::vector<double> values = input->values();
    const std::vector<int64_t> offsets = strided_offsets(input->shape(), out_strides, position * out_strides[axis]);
    for (size_t i = 0; i < values.size(); ++i) out[offsets[i]] = values[i];
    position += input->shape()[axis];
  }
  return make(first.dtype(), std::move(out_shape), std::move(out));
}

// Relax split: n sections of ceil(extent / n) elements (the last ones take what is left, possibly nothing), or
// split points (a point below an earlier one gives an empty piece).
Value split_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const int axis = normalize_axis(args.has_attr("axis") ? args.int_attr("axis") : 0, x.rank());
  const int64_t extent = x.shape()[axis];
  const AttrValue* split_attr = args.find_attr("indices_or_sections");
  if (split_attr == nullptr) fail("split: the registry has no indices_or_sections attribute");
  std::vector<std::pair<int64_t, int64_t>> pieces;  // [begin, end) along the axis
  if (const auto* sections = std::get_if<int64_t>(split_attr)) {
    if (*sections <= 0) failf("split: {} sections", *sections);
    const int64_t chunk = (extent + *sections - 1) / *sections;
    for (int64_t i = 0; i < *sections; ++i) {
      const int64_t begin = std::min(chunk * i, extent);
      pieces.emplace_back(begin, begin + std::clamp<int64_t>(extent - chunk * i, 0, chunk));
    }
  } else if (const auto* indices = std::get_if<std::vector<int64_t>>(split_attr)) {
    int64_t previous = 0;
    for (size_t i = 0; i <= indices->size(); ++i) {
      const int64_t next = i < indices->size() ? (*indices)[i] : extent;
      if (next < 0) failf("split: negative split point {}", next);
      const int64_t begin = std::min(previous, extent);
      pieces.emplace_back(begin, std::max(begin, std::min(next, extent)));
      previous = std::max(previous, next);
    }
  } else {
    fail("split: indices_or_sections must be an integer or an integer list");
  }
  std::vector<Value> parts;
  for (const auto& [begin, end] : pieces) {
    std::vector<SliceRange> ranges = full_ranges(x);
    ranges[axis] = {begin, 1, end - begin};
    parts.emplace_back(slice(args, x, ranges));
  }
  return Value::tuple(std::move(parts));
}

// take along an axis (axis=None: of the flattened tensor). Out-of-range indices are errors in the default "fast"
// mode, where TVM's result is undefined; "clip", "wrap" and "nan" follow their definitions.
Value take_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const Tensor& indices = args.tensor(1);
  if (is_float(indices.dtype())) failf("take: indices must be integers, got {}", dtype_str(indices.dtype()));
  const std::optional<int64_t> axis_attr = args.opt_int_attr("axis");
  const Tensor data = axis_attr ? x : x.reshaped({x.num_elements()});
  const int axis = normalize_axis(axis_attr.value_or(0), data.rank());
  const std::string mode = args.string_attr("mode", "fast");
  const Shape& shape = data.shape();
  const int64_t outer = count_of(std::span(shape).first(axis));
  const int64_t extent = shape[axis];
  const int64_t inner = count_of(std::span(shape).subspan(axis + 1));
  Shape out_shape(shape.begin(), shape.begin() + axis);
  out_shape.insert(out_shape.end(), indices.shape().begin(), indices.shape().end());
  out_shape.insert(out_shape.end(), shape.begin() + axis + 1, shape.end());
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> values = data.values();
  const std::vector<double> index_values = indices.values();
  const auto num_indices = static_cast<int64_t>(index_values.size());
  for (int64_t j = 0; j < num_indices; ++j) {
    int64_t index = as_int64(index_values[j]);
    bool valid = index >= 0 && index < extent;
    if (!valid && extent > 0 && mode == "clip") {
      index = std::clamp<int64_t>(index, 0, extent - 1);
      valid = true;
    } else if (!valid && extent > 0 && mode == "wrap") {
      index = ((index % extent) + extent) % extent;
      valid = true;
    } else if (!valid && mode != "nan") {
      failf("take: index {} is out of range for an axis of extent {}", index, extent);
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        out[(o * num_indices + j) * inner + i] = valid ? values[(o * extent + index) * inner + i] : kNaN;
      }
    }
  }
  return make(x.dtype(), std::move(out_shape), std::move(out));
}

// ---------------------------------------------------------------------------------------------------------------
// Reductions and scans

// Which output element each input element reduces into, for reductions over `axes` (None: all).
struct Reduction {
  Shape out_shape;
  std::vector<int64_t> target;  // per input element
  int64_t group_size = 1;       // input elements per output element
};

Reduction plan_reduction(const KernelArgs& args, const Tensor& x) {
  const std::optional<Shape> axes_attr = args.opt_ints_attr("axis");
  std::vector<int> reduced;
  if (axes_attr) {
    reduced = normalize_axes(*axes_attr, x.rank());
  } else {
    for (int d = 0; d < x.rank(); ++d) reduced.push_back(d);
  }
  const std::vector<int> kept = all_axes_except(x.rank(), reduced);
  Reduction plan;
  plan.group_size = count_along(x.shape(), reduced);
  const bool keepdims = args.flag("keepdims", false);
  for (int d = 0; d < x.rank(); ++d) {
    const bool is_reduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (!is_reduced) {
      plan.out_shape.push_back(x.shape()[d]);
    } else if (keepdims) {
      plan.out_shape.push_back(1);
    }
  }
  plan.target = offsets_along(x.shape(), kept);
  return plan;
}

template <typename Combine>
Value reduce(const KernelArgs& args, double initial, Combine combine) {
  const Tensor& x = args.tensor(0);
  Reduction plan = plan_reduction(args, x);
  std::vector<double> out = args.buffer(plan.out_shape);
  std::fill(out.begin(), out.end(), initial);
  const std::vector<double> values = x.values();
  for (size_t i = 0; i < values.size(); ++i) out[plan.target[i]] = combine(out[plan.target[i]], values[i]);
  return make(x.dtype(), std::move(plan.out_shape), std::move(out));
}

Value sum_kernel(const KernelArgs& args) {
  return reduce(args, 0.0, [](double acc, double x) { return acc + x; });
}

Value mean_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  Reduction plan = plan_reduction(args, x);
  std::vector<double> out = args.buffer(plan.out_shape);
  const std::vector<double> values = x.values();
  for (size_t i = 0; i < values.size(); ++i) out[plan.target[i]] += values[i];
  for (double& value : out) value /= static_cast<double>(plan.group_size);  // 0/0 gives NaN for empty axes
  return make(x.dtype(), std::move(plan.out_shape), std::move(out));
}

template <typename Pick>
Value extremum(const KernelArgs& args, double initial, Pick pick) {
  if (plan_reduction(args, args.tensor(0)).group_size == 0) failf("{} over an empty axis", args.op().name);
  return reduce(args, initial, pick);
}

Value cumsum_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const std::optional<int64_t> axis_attr = args.opt_int_attr("axis");
  const Tensor data = axis_attr ? x : x.reshaped({x.num_elements()});
  const int axis = normalize_axis(axis_attr.value_or(0), data.rank());
  const DType dtype = args.dtype_attr("dtype").value_or(x.dtype());
  const bool exclusive = args.flag("exclusive", false);
  const Shape& shape = data.shape();
  const int64_t outer = count_of(std::span(shape).first(axis));
  const int64_t extent = shape[axis];
  const int64_t inner = count_of(std::span(shape).subspan(axis + 1));
  const std::vector<double> values = data.values();
  std::vector<double> out = args.buffer(shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double running = 0.0;
      for (int64_t e = 0; e < extent; ++e) {
        const int64_t at = (o * extent + e) * inner + i;
        if (exclusive) out[at] = running;
        running += round_to_dtype(values[at], dtype);
        if (!exclusive) out[at] = running;
      }
    }
  }
  return make(dtype, shape, std::move(out));
}

// ---------------------------------------------------------------------------------------------------------------
// Creation

Value arange_kernel(const KernelArgs& args) {
  // arange(start=n) with end=None counts [0, n), like Python's range(n).
  double start = args.has_attr("start") ? args.float_attr("start") : 0.0;
  const std::optional<double> given_end = args.opt_float_attr("end");
  const double end = given_end.value_or(start);
  if (!given_end) start = 0.0;
  const double step = args.has_attr("step") ? args.float_attr("step") : 1.0;
  if (step == 0.0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step)) {
    failf("arange: invalid range start={} end={} step={}", start, end, step);
  }
  const DType dtype = args.dtype_attr("dtype").value_or(DType::Int64);
  const double count = std::max(0.0, std::ceil((end - start) / step));
  if (count > 9.0e18) failf("arange: {} elements", count);
  std::vector<double> out = args.buffer(Shape{static_cast<int64_t>(count)});
  for (size_t i = 0; i < out.size(); ++i) out[i] = start + static_cast<double>(i) * step;
  return make(dtype, {static_cast<int64_t>(count)}, std::move(out));
}

Value filled(const KernelArgs& args, Shape shape, DType dtype, double value) {
  std::vector<double> out = args.buffer(shape);
  std::fill(out.begin(), out.end(), value);
  return make(dtype, std::move(shape), std::move(out));
}

Value full_kernel(const KernelArgs& args) {
  const Tensor& fill_value = args.tensor(1);
  if (fill_value.num_elements() != 1) failf("full: the fill value must be a scalar, got {}", fill_value.type_str());
  return filled(args, args.shape_operand(0), args.dtype_attr("dtype").value_or(fill_value.dtype()), fill_value.at(0));
}

template <int kValue>
Value constant_fill_kernel(const KernelArgs& args) {
  const std::optional<DType> dtype = args.dtype_attr("dtype");
  if (!dtype) failf("{} needs a dtype", args.op().name);
  return filled(args, args.shape_operand(0), *dtype, kValue);
}

// triu keeps elements with column - row >= k, tril those with column - row <= k (over the last two dims).
template <bool kUpper>
Value triangle_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  if (x.rank() < 2) failf("{} needs a tensor of rank >= 2, got {}", args.op().name, x.type_str());
  const int64_t k = args.opt_int_attr("k").value_or(0);
  const int64_t rows = x.shape()[x.rank() - 2];
  const int64_t cols = x.shape()[x.rank() - 1];
  std::vector<double> values = x.values();
  for (size_t i = 0; i < values.size(); ++i) {
    const auto flat = static_cast<int64_t>(i);
    const int64_t diagonal = flat % cols - (flat / cols) % rows;
    if (kUpper ? diagonal < k : diagonal > k) values[i] = 0.0;
  }
  return make(x.dtype(), x.shape(), std::move(values));
}

// ---------------------------------------------------------------------------------------------------------------
// Normalizations and softmax

// The mean of the values in each group (`group_of[i]` is element i's group).
std::vector<double> group_means(const std::vector<double>& values, const std::vector<int64_t>& group_of,
                                int64_t num_groups) {
  std::vector<double> sums(static_cast<size_t>(num_groups), 0.0);
  std::vector<int64_t> counts(static_cast<size_t>(num_groups), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    sums[group_of[i]] += values[i];
    ++counts[group_of[i]];
  }
  for (size_t g = 0; g < sums.size(); ++g) sums[g] /= static_cast<double>(counts[g]);
  return sums;
}

// Mean and biased variance of each group (two passes, for accuracy).
struct Moments {
  std::vector<double> mean;
  std::vector<double> variance;
};

Moments group_moments(const std::vector<double>& values, const std::vector<int64_t>& group_of, int64_t num_groups) {
  Moments moments;
  moments.mean = group_means(values, group_of, num_groups);
  std::vector<double> squared_deviation(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double deviation = values[i] - moments.mean[group_of[i]];
    squared_deviation[i] = deviation * deviation;
  }
  moments.variance = group_means(squared_deviation, group_of, num_groups);
  return moments;
}

// (x - mean) / sqrt(variance + epsilon), with the statistics of each element's group.
std::vector<double> normalize_with(const std::vector<double>& values, const std::vector<int64_t>& group_of,
                                   const std::vector<double>& mean, const std::vector<double>& variance,
                                   double epsilon) {
  std::vector<double> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = (values[i] - mean[group_of[i]]) / std::sqrt(variance[group_of[i]] + epsilon);
  }
  return out;
}

std::vector<double> normalize(const std::vector<double>& values, const std::vector<int64_t>& group_of,
                              int64_t num_groups, double epsilon) {
  const Moments moments = group_moments(values, group_of, num_groups);
  return normalize_with(values, group_of, moments.mean, moments.variance, epsilon);
}

// out = out * gamma[param] + beta[param], where enabled.
void scale_and_shift(const KernelArgs& args, std::vector<double>& out, const std::vector<int64_t>& param_of,
                     int64_t param_count, std::optional<size_t> gamma_operand, std::optional<size_t> beta_operand) {
  for (std::optional<size_t> operand : {gamma_operand, beta_operand}) {
    if (!operand) continue;
    const Tensor& param = args.tensor(*operand);
    if (param.num_elements() != param_count) {
      failf("{}: operand {} has {} elements, expected {}", args.op().name, *operand, param.num_elements(), param_count);
    }
    const std::vector<double> values = param.values();
    const bool is_scale = operand == gamma_operand;
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = is_scale ? out[i] * values[param_of[i]] : out[i] + values[param_of[i]];
    }
  }
}

std::optional<size_t> operand_if(bool enabled, size_t index) {
  return enabled ? std::optional<size_t>(index) : std::nullopt;
}

Value layer_norm_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const std::vector<int> axes = normalize_axes(args.ints_attr("axes"), x.rank());
  const std::vector<int> kept = all_axes_except(x.rank(), axes);
  std::vector<double> out =
      normalize(x.values(), offsets_along(x.shape(), kept), count_along(x.shape(), kept), args.float_attr("epsilon"));
  scale_and_shift(args, out, offsets_along(x.shape(), axes), count_along(x.shape(), axes),
                  operand_if(args.flag("scale", true), 1), operand_if(args.flag("center", true), 2));
  return make(x.dtype(), x.shape(), std::move(out));
}

Value rms_norm_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const std::vector<int> axes = normalize_axes(args.opt_ints_attr("axes").value_or(Shape{-1}), x.rank());
  const std::vector<int> kept = all_axes_except(x.rank(), axes);
  const std::vector<int64_t> group_of = offsets_along(x.shape(), kept);
  const double epsilon = args.float_attr("epsilon");
  std::vector<double> out = x.values();
  std::vector<double> squares(out.size());
  for (size_t i = 0; i < out.size(); ++i) squares[i] = out[i] * out[i];
  const std::vector<double> mean_square = group_means(squares, group_of, count_along(x.shape(), kept));
  for (size_t i = 0; i < out.size(); ++i) out[i] /= std::sqrt(mean_square[group_of[i]] + epsilon);
  scale_and_shift(args, out, offsets_along(x.shape(), axes), count_along(x.shape(), axes), 1, std::nullopt);
  return make(x.dtype(), x.shape(), std::move(out));
}

Value group_norm_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const int64_t num_groups = args.int_attr("num_groups");
  const int channel_axis = normalize_axis(args.int_attr("channel_axis"), x.rank());
  const std::vector<int> axes = normalize_axes(args.ints_attr("axes"), x.rank());
  if (std::find(axes.begin(), axes.end(), channel_axis) != axes.end())
    fail("group_norm: axes contain the channel axis");
  const int64_t channels = x.shape()[channel_axis];
  if (num_groups <= 0 || channels % num_groups != 0) {
    failf("group_norm: {} channels do not split into {} groups", channels, num_groups);
  }
  // A group is a (kept coordinates, channel group) pair; its statistics span `axes` and the group's channels.
  std::vector<int> kept = all_axes_except(x.rank(), axes);
  kept.erase(std::find(kept.begin(), kept.end(), channel_axis));
  const std::array<int, 1> channel_axes = {channel_axis};
  const std::vector<int64_t> channel_of = offsets_along(x.shape(), channel_axes);
  const std::vector<int64_t> kept_of = offsets_along(x.shape(), kept);
  std::vector<int64_t> group_of(channel_of.size());
  for (size_t i = 0; i < group_of.size(); ++i) {
    group_of[i] = kept_of[i] * num_groups + channel_of[i] / (channels / num_groups);
  }
  std::vector<double> out =
      normalize(x.values(), group_of, count_along(x.shape(), kept) * num_groups, args.float_attr("epsilon"));
  scale_and_shift(args, out, channel_of, channels, operand_if(args.flag("scale", true), 1),
                  operand_if(args.flag("center", true), 2));
  return make(x.dtype(), x.shape(), std::move(out));
}

// Returns (out, moving_mean, moving_var) as Relax does. Inference mode (training=False) normalizes with the
// moving statistics and returns them unchanged. Training mode normalizes each channel with the batch's own
// mean and biased variance and returns the moving statistics updated with `momentum`.
Value batch_norm_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const int axis = normalize_axis(args.int_attr("axis"), x.rank());
  const int64_t channels = x.shape()[axis];
  const Tensor& moving_mean = args.tensor(3);
  const Tensor& moving_var = args.tensor(4);
  if (moving_mean.num_elements() != channels || moving_var.num_elements() != channels) {
    failf("batch_norm: the moving statistics must have {} elements", channels);
  }
  const double epsilon = args.float_attr("epsilon");
  const std::array<int, 1> channel_axes = {axis};
  const std::vector<int64_t> channel_of = offsets_along(x.shape(), channel_axes);
  const std::vector<double> values = x.values();
  std::vector<double> out;
  Value new_mean = moving_mean;
  Value new_var = moving_var;
  if (args.flag("training", true)) {
    const Moments batch = group_moments(values, channel_of, channels);
    out = normalize_with(values, channel_of, batch.mean, batch.variance, epsilon);
    const double momentum = args.float_attr("momentum");
    auto updated = [&](const Tensor& moving, const std::vector<double>& batch_statistic) {
      std::vector<double> result = moving.values();
      for (size_t c = 0; c < result.size(); ++c) {
        result[c] = (1.0 - momentum) * result[c] + momentum * batch_statistic[c];
      }
      return make(moving.dtype(), moving.shape(), std::move(result));
    };
    new_mean = updated(moving_mean, batch.mean);
    new_var = updated(moving_var, batch.variance);
  } else {
    out = normalize_with(values, channel_of, moving_mean.values(), moving_var.values(), epsilon);
  }
  scale_and_shift(args, out, channel_of, channels, operand_if(args.flag("scale", true), 1),
                  operand_if(args.flag("center", true), 2));
  return Value::tuple({make(x.dtype(), x.shape(), std::move(out)), std::move(new_mean), std::move(new_var)});
}

Value bias_add_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const DType dtype = common_dtype(x, args.tensor(1));
  const int axis = normalize_axis(args.has_attr("axis") ? args.int_attr("axis") : 1, x.rank());
  const std::array<int, 1> channel_axes = {axis};
  std::vector<double> out = x.values();
  scale_and_shift(args, out, offsets_along(x.shape(), channel_axes), x.shape()[axis], std::nullopt, 1);
  return make(dtype, x.shape(), std::move(out));
}

// The lanes of a tensor along one axis: `outer` x `inner` lanes of `extent` elements, `inner` apart.
struct Lanes {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner = 1;
};

Lanes lanes_along(const Shape& shape, int axis) {
  return {count_of(std::span(shape).first(axis)), shape[axis], count_of(std::span(shape).subspan(axis + 1))};
}

// Numerically stable: subtracts the lane maximum before exponentiating.
Value softmax_kernel(const KernelArgs& args) {
  const Tensor& x = args.tensor(0);
  const int axis = normalize_axis(args.has_attr("axis") ? args.int_attr("axis") : -1, x.rank());
  const Lanes lanes = lanes_along(x.shape(), axis);
  std::vector<double> values = x.values();
  for (int64_t o = 0; o < lanes.outer; ++o) {
    for (int64_t i = 0; i < lanes.inner; ++i) {
      const int64_t base = o * lanes.extent * lanes.inner + i;
      double max = -kInfinity;
      for (int64_t e = 0; e < lanes.extent; ++e) max = std::max(max, values[base + e * lanes.inner]);
      double sum = 0.0;
      for (int64_t e = 0; e < lanes.extent; ++e) {
        double& value = values[base + e * lanes.inner];
        value = std::exp(value - max);
        sum += value;
      }
      for (int64_t e = 0; e < lanes.extent; ++e) values[base + e * lanes.inner] /= sum;
    }
  }
  return make(x.dtype(), x.shape(), std::move(values));
}

// ---------------------------------------------------------------------------------------------------------------
// Convolution and pooling, computed in the canonical NCHW / OIHW layouts

// The axes that permute a tensor in layout `from` ("NHWC") into layout `to` ("NCHW").
std::vector<int> layout_permutation(std::string_view from, std::string_view to) {
  std::string sorted_from(from);
  std::string sorted_to(to);
  std::sort(sorted_from.begin(), sorted_from.end());
  std::sort(sorted_to.begin(), sorted_to.end());
  if (sorted_from != sorted_to || std::adjacent_find(sorted_from.begin(), sorted_from.end()) != sorted_from.end()) {
    failf("unsupported layout \"{}\" (expected a permutation of \"{}\")", from, to);
  }
  std::vector<int> axes;
  for (char letter : to) axes.push_back(static_cast<int>(from.find(letter)));
  return axes;
}

// A 2-D window geometry (conv or pool): strides, dilation, padding (top, left, bottom, right).
struct Window {
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

// Strides and dilation positive, padding not negative, all below 2^31 so window arithmetic cannot overflow.
Window checked(const KernelArgs& args, const Window& window) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (int64_t value : {window.stride_h, window.stride_w, window.dilation_h, window.dilation_w}) {
    if (value <= 0 || value >= kLimit)
      failf("{}: strides and dilation must be positive (and below 2^31)", args.op().name);
  }
  for (int64_t value : {window.pad_top, window.pad_left, window.pad_bottom, window.pad_right}) {
    if (value < 0 || value >= kLimit) failf("{}: padding must not be negative (and below 2^31)", args.op().name);
  }
  return window;
}

std::pair<int64_t, int64_t> pair_attr(const KernelArgs& args, std::string_view name) {
  const Shape values = args.ints_attr(name);
  if (values.size() == 1) return {values[0], values[0]};
  if (values.size() == 2) return {values[0], values[1]};
  failf("{}: {} must have 1 or 2 values", args.op().name, name);
}

// Relax padding: one value (all sides), two (top/bottom, left/right) or four (top, left, bottom, right).
Window window_attrs(const KernelArgs& args) {
  Window window;
  std::tie(window.stride_h, window.stride_w) = pair_attr(args, "strides");
  std::tie(window.dilation_h, window.dilation_w) = pair_attr(args, "dilation");
  const Shape padding = args.ints_attr("padding");
  if (padding.size() == 1) {
    window.pad_top = window.pad_left = window.pad_bottom = window.pad_right = padding[0];
  } else if (padding.size() == 2) {
    window.pad_top = window.pad_bottom = padding[0];
    window.pad_left = window.pad_right = padding[1];
  } else if (padding.size() == 4) {
    window.pad_top = padding[0];
    window.pad_left = padding[1];
    window.pad_bottom = padding[2];
    window.pad_right = padding[3];
  } else {
    failf("{}: padding must have 1, 2 or 4 values", args.op().name);
  }
  return checked(args, window);
}

// Conv1d as conv2d over a height of 1: padding (left, right) or one value.
Window window_attrs_1d(const KernelArgs& args) {
  Window window;
  const Shape strides = args.ints_attr("strides");
  const Shape dilation = args.ints_attr("dilation");
  const Shape padding = args.ints_attr("padding");
  if (strides.size() != 1 || dilation.size() != 1) fail("conv1d: strides and dilation must have 1 value");
  window.stride_w = strides[0];
  window.dilation_w = dilation[0];
  if (padding.empty() || padding.size() > 2) fail("conv1d: padding must have 1 or 2 values");
  window.pad_left = padding[0];
  window.pad_right = padding.back();
  return checked(args, window);
}

int64_t window_output_extent(int64_t input, int64_t padding, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t numerator = input + padding - dilation * (kernel - 1) - 1;
  if (numerator < 0)
    failf("the window ({} with dilation {}) is larger than the padded input ({})", kernel, dilation, input + padding);
  return numerator / stride + 1;
}

// Direct convolution in NCHW x OIHW; the innermost loop runs over a contiguous output row.
Tensor conv2d_nchw(const KernelArgs& args, const Tensor& data, const Tensor& weight, const Window& w, int64_t groups,
                   DType dtype) {
  const int64_t batch = data.shape()[0], channels = data.shape()[1], height = data.shape()[2], width = data.shape()[3];
  const int64_t out_channels = weight.shape()[0], group_channels = weight.shape()[1];
  const int64_t kernel_h = weight.shape()[2], kernel_w = weight.shape()[3];
  if (groups <= 0 || group_channels * groups != channels || out_channels % groups != 0) {
    failf("conv: {} input channels do not match a weight of {} input channels with groups={}", channels, group_channels,
          groups);
  }
  const int64_t out_h = window_output_extent(height, w.pad_top + w.pad_bottom, kernel_h, w.stride_h, w.dilation_h);
  const int64_t out_w = window_output_extent(width, w.pad_left + w.pad_right, kernel_w, w.stride_w, w.dilation_w);
  const Shape out_shape = {batch, out_channels, out_h, out_w};
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> input = data.values();
  const std::vector<double> kernel = weight.values();
  const int64_t outs_per_group = out_channels / groups;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      double* out_plane = out.data() + (n * out_channels + o) * out_h * out_w;
      for (int64_t i = 0; i < group_channels; ++i) {
        const int64_t c = (o / outs_per_group) * group_channels + i;
        const double* in_plane = input.data() + (n * channels + c) * height * width;
        for (int64_t kh = 0; kh < kernel_h; ++kh) {
          for (int64_t kw = 0; kw < kernel_w; ++kw) {
            const double weight_value = kernel[((o * group_channels + i) * kernel_h + kh) * kernel_w + kw];
            // Output columns ow read input column ow * stride + shift; keep those inside the image.
            const int64_t shift = kw * w.dilation_w - w.pad_left;
            const int64_t ow_begin = shift >= 0 ? 0 : (-shift + w.stride_w - 1) / w.stride_w;
            const int64_t ow_end = width - 1 - shift < 0 ? 0 : std::min(out_w, (width - 1 - shift) / w.stride_w + 1);
            for (int64_t oh = 0; oh < out_h; ++oh) {
              const int64_t ih = oh * w.stride_h + kh * w.dilation_h - w.pad_top;
              if (ih < 0 || ih >= height) continue;
              const double* in_row = in_plane + ih * width;
              double* out_row = out_plane + oh * out_w;
              for (int64_t ow = ow_begin; ow < ow_end; ++ow)
                out_row[ow] += weight_value * in_row[ow * w.stride_w + shift];
            }
          }
        }
      }
    }
  }
  return Tensor::from_values(dtype, out_shape, std::move(out));
}

Value conv_kernel(const KernelArgs& args, bool one_dimensional) {
  const std::string_view data_canonical = one_dimensional ? "NCW" : "NCHW";
  const std::string_view kernel_canonical = one_dimensional ? "OIW" : "OIHW";
  const Tensor& data = args.tensor(0);
  const Tensor& weight = args.tensor(1);
  const std::string data_layout = args.string_attr("data_layout", data_canonical);
  const std::string kernel_layout = args.string_attr("kernel_layout", kernel_canonical);
  const std::string out_layout = args.string_attr("out_layout", data_layout);
  if (data.rank() != static_cast<int>(data_canonical.size()) || weight.rank() != data.rank()) {
    failf("{}: expected data and weight of rank {}, got {} and {}", args.op().name, data_canonical.size(),
          data.type_str(), weight.type_str());
  }
  const DType dtype = result_dtype(args, data, weight);
  Tensor canonical_data = permute(args, data, layout_permutation(data_layout, data_canonical));
  Tensor canonical_weight = permute(args, weight, layout_permutation(kernel_layout, kernel_canonical));
  const Window window = one_dimensional ? window_attrs_1d(args) : window_attrs(args);
  if (one_dimensional) {  // as conv2d over a height of 1
    const Shape& d = canonical_data.shape();
    const Shape& k = canonical_weight.shape();
    canonical_data = canonical_data.reshaped({d[0], d[1], 1, d[2]});
    canonical_weight = canonical_weight.reshaped({k[0], k[1], 1, k[2]});
  }
  Tensor out = conv2d_nchw(args, canonical_data, canonical_weight, window, args.int_attr("groups"), dtype);
  if (one_dimensional) out = out.reshaped({out.shape()[0], out.shape()[1], out.shape()[3]});
  return permute(args, out, layout_permutation(data_canonical, out_layout));
}

// Transposed convolution in NCHW x IOHW: every input element scatters the kernel, scaled, into the output at
// (ih * stride + kh * dilation - pad_top, iw * stride + kw * dilation - pad_left).
Value conv2d_transpose_kernel(const KernelArgs& args) {
  const Tensor& data_in = args.tensor(0);
  const Tensor& weight_in = args.tensor(1);
  if (data_in.rank() != 4 || weight_in.rank() != 4) {
    failf("{}: expected data and weight of rank 4, got {} and {}", args.op().name, data_in.type_str(),
          weight_in.type_str());
  }
  const std::string data_layout = args.string_attr("data_layout", "NCHW");
  const std::string out_layout = args.string_attr("out_layout", data_layout);
  const Tensor data = permute(args, data_in, layout_permutation(data_layout, "NCHW"));
  const Tensor weight = permute(args, weight_in, layout_permutation(args.string_attr("kernel_layout", "IOHW"), "IOHW"));
  const Window w = window_attrs(args);
  const auto [extra_h, extra_w] = pair_attr(args, "output_padding");
  const int64_t groups = args.int_attr("groups");
  const int64_t batch = data.shape()[0], channels = data.shape()[1], height = data.shape()[2], width = data.shape()[3];
  const int64_t outs_per_group = weight.shape()[1], kernel_h = weight.shape()[2], kernel_w = weight.shape()[3];
  if (groups <= 0 || weight.shape()[0] != channels || channels % groups != 0)
    failf("{}: {} input channels do not match a weight of {} input channels with groups={}", args.op().name, channels,
          weight.shape()[0], groups);
  if (extra_h < 0 || extra_w < 0 || extra_h >= w.stride_h || extra_w >= w.stride_w)
    failf("{}: output_padding must be non-negative and smaller than strides", args.op().name);
  const int64_t out_h =
      (height - 1) * w.stride_h + w.dilation_h * (kernel_h - 1) + 1 + extra_h - w.pad_top - w.pad_bottom;
  const int64_t out_w =
      (width - 1) * w.stride_w + w.dilation_w * (kernel_w - 1) + 1 + extra_w - w.pad_left - w.pad_right;
  if (out_h <= 0 || out_w <= 0) failf("{}: the padding leaves no output", args.op().name);
  const int64_t out_channels = outs_per_group * groups;
  const Shape out_shape = {batch, out_channels, out_h, out_w};
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> input = data.values();
  const std::vector<double> kernel = weight.values();
  const int64_t ins_per_group = channels / groups;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const double* in_plane = input.data() + (n * channels + c) * height * width;
      for (int64_t o = 0; o < outs_per_group; ++o) {
        double* out_plane = out.data() + (n * out_channels + (c / ins_per_group) * outs_per_group + o) * out_h * out_w;
        for (int64_t kh = 0; kh < kernel_h; ++kh) {
          for (int64_t kw = 0; kw < kernel_w; ++kw) {
            const double weight_value = kernel[((c * outs_per_group + o) * kernel_h + kh) * kernel_w + kw];
            for (int64_t ih = 0; ih < height; ++ih) {
              const int64_t oh = ih * w.stride_h + kh * w.dilation_h - w.pad_top;
              if (oh < 0 || oh >= out_h) continue;
              for (int64_t iw = 0; iw < width; ++iw) {
                const int64_t ow = iw * w.stride_w + kw * w.dilation_w - w.pad_left;
                if (ow >= 0 && ow < out_w) out_plane[oh * out_w + ow] += weight_value * in_plane[ih * width + iw];
              }
            }
          }
        }
      }
    }
  }
  const Tensor result = Tensor::from_values(result_dtype(args, data, weight), out_shape, std::move(out));
  return permute(args, result, layout_permutation("NCHW", out_layout));
}

// Pool output extent as the op registry infers it (ceil mode rounds the window count up; windows that start in
// the bottom/right padding average over their in-image part).
int64_t pool_output_extent(int64_t input, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t stride,
                           int64_t dilation, bool ceil_mode) {
  int64_t numerator = input + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (numerator < 0) failf("pool: the window is larger than the padded input ({})", input + pad_begin + pad_end);
  if (ceil_mode) numerator += stride - 1;
  return numerator / stride + 1;
}

Value pool2d_kernel(const KernelArgs& args, bool is_max) {
  const std::string layout = args.string_attr("layout", "NCHW");
  const std::string out_layout = args.string_attr("out_layout", layout);
  if (args.tensor(0).rank() != 4) failf("{} expects a 4-D input, got {}", args.op().name, args.tensor(0).type_str());
  const Tensor x = permute(args, args.tensor(0), layout_permutation(layout, "NCHW"));
  const auto [kernel_h, kernel_w] = pair_attr(args, "pool_size");
  const Window w = window_attrs(args);
  const bool ceil_mode = args.flag("ceil_mode", false);
  const bool count_include_pad = args.flag("count_include_pad", false);
  if (kernel_h <= 0 || kernel_w <= 0 || kernel_h >= (int64_t{1} << 31) || kernel_w >= (int64_t{1} << 31)) {
    failf("{}: pool_size must be positive (and below 2^31)", args.op().name);
  }
  const int64_t batch = x.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  const int64_t out_h =
      pool_output_extent(height, w.pad_top, w.pad_bottom, kernel_h, w.stride_h, w.dilation_h, ceil_mode);
  const int64_t out_w =
      pool_output_extent(width, w.pad_left, w.pad_right, kernel_w, w.stride_w, w.dilation_w, ceil_mode);
  const Shape out_shape = {batch, channels, out_h, out_w};
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> input = x.values();
  for (int64_t plane = 0; plane < batch * channels; ++plane) {
    const double* in_plane = input.data() + plane * height * width;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      for (int64_t ow = 0; ow < out_w; ++ow) {
        double max = -kInfinity;
        double sum = 0.0;
        int64_t inside_image = 0;
        int64_t inside_padding = 0;  // window positions within the padded input
        for (int64_t kh = 0; kh < kernel_h; ++kh) {
          const int64_t ih = oh * w.stride_h + kh * w.dilation_h - w.pad_top;
          for (int64_t kw = 0; kw < kernel_w; ++kw) {
            const int64_t iw = ow * w.stride_w + kw * w.dilation_w - w.pad_left;
            if (ih < height + w.pad_bottom && iw < width + w.pad_right) ++inside_padding;
            if (ih < 0 || ih >= height || iw < 0 || iw >= width) continue;
            const double value = in_plane[ih * width + iw];
            max = std::isnan(value) || std::isnan(max) ? kNaN : std::max(max, value);
            sum += value;
            ++inside_image;
          }
        }
        const int64_t divisor = count_include_pad ? inside_padding : inside_image;
        out[(plane * out_h + oh) * out_w + ow] =
            is_max ? max : (divisor == 0 ? 0.0 : sum / static_cast<double>(divisor));
      }
    }
  }
  const Tensor result = Tensor::from_values(x.dtype(), out_shape, std::move(out));
  return permute(args, result, layout_permutation("NCHW", out_layout));
}

// Output cell i averages input rows [floor(i * H / OH), ceil((i + 1) * H / OH)).
Value adaptive_avg_pool2d_kernel(const KernelArgs& args) {
  const std::string layout = args.string_attr("layout", "NCHW");
  const std::string out_layout = args.string_attr("out_layout", layout);
  if (args.tensor(0).rank() != 4) failf("{} expects a 4-D input, got {}", args.op().name, args.tensor(0).type_str());
  const Tensor x = permute(args, args.tensor(0), layout_permutation(layout, "NCHW"));
  const int64_t batch = x.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  int64_t out_h = height;
  int64_t out_w = width;
  if (std::optional<Shape> size = args.opt_ints_attr("output_size")) {
    if (size->empty() || size->size() > 2) fail("adaptive_avg_pool2d: output_size must have 1 or 2 values");
    out_h = size->front();
    out_w = size->back();
  }
  if (out_h <= 0 || out_w <= 0) fail("adaptive_avg_pool2d: output_size must be positive");
  const Shape out_shape = {batch, channels, out_h, out_w};
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> input = x.values();
  for (int64_t plane = 0; plane < batch * channels; ++plane) {
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const int64_t h_begin = oh * height / out_h;
      const int64_t h_end = ((oh + 1) * height + out_h - 1) / out_h;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const int64_t w_begin = ow * width / out_w;
        const int64_t w_end = ((ow + 1) * width + out_w - 1) / out_w;
        double sum = 0.0;
        for (int64_t ih = h_begin; ih < h_end; ++ih) {
          for (int64_t iw = w_begin; iw < w_end; ++iw) sum += input[(plane * height + ih) * width + iw];
        }
        const auto cells = static_cast<double>((h_end - h_begin) * (w_end - w_begin));
        out[(plane * out_h + oh) * out_w + ow] = cells == 0.0 ? 0.0 : sum / cells;
      }
    }
  }
  const Tensor result = Tensor::from_values(x.dtype(), out_shape, std::move(out));
  return permute(args, result, layout_permutation("NCHW", out_layout));
}

// ---------------------------------------------------------------------------------------------------------------
// Image resizing

// How image.resize2d samples: its method, coordinate transformation, nearest rounding and cubic parameters.
struct ResizeMode {
  std::string method;
  std::string coordinates;
  std::string rounding;
  double cubic_alpha = -0.75;
  bool cubic_exclude = false;
};

// The input positions one output coordinate reads along an axis (clamped into the image) and their weights.
struct Taps {
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
  int count = 0;
};

// Where output coordinate `x` of `out` samples an axis of `in` elements. Products come before the division, so an
// exact ratio gives an exact coordinate (asymmetric 3 * 2 / 6 is 1, where 3 * (2 / 6) is 0.999...).
double source_coordinate(std::string_view mode, int64_t x, int64_t in, int64_t out) {
  const auto position = static_cast<double>(x);
  const auto in_extent = static_cast<double>(in);
  const auto out_extent = static_cast<double>(out);
  if (mode == "half_pixel") return (position + 0.5) * in_extent / out_extent - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (position + 0.5) * in_extent / out_extent - 0.5 : 0.0;
  if (mode == "align_corners") return out > 1 ? position * (in_extent - 1) / (out_extent - 1) : 0.0;
  if (mode == "tf_half_pixel_for_nn") return (position + 0.5) * in_extent / out_extent;
  if (mode == "asymmetric") return position * in_extent / out_extent;
  failf("image.resize2d: unsupported coordinate_transformation_mode \"{}\"", mode);
}

// The nearest input position; "round" (TVM's default) rounds half to even.
double nearest_position(std::string_view rounding, double x) {
  if (rounding == "round_prefer_floor") return std::ceil(x - 0.5);
  if (rounding == "round_prefer_ceil") return std::floor(x + 0.5);
  if (rounding == "floor") return std::floor(x);
  if (rounding == "ceil") return std::ceil(x);
  return std::nearbyint(x);
}

// Keys' cubic convolution weight at distance `d` with coefficient `alpha`.
double cubic_weight(double alpha, double d) {
  d = std::fabs(d);
  if (d <= 1.0) return ((alpha + 2.0) * d - (alpha + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((alpha * d - 5.0 * alpha) * d + 8.0 * alpha) * d - 4.0 * alpha;
  return 0.0;
}

Taps taps_along(const ResizeMode& mode, int64_t x, int64_t in, int64_t out) {
  const double source = source_coordinate(mode.coordinates, x, in, out);
  Taps taps;
  auto add = [&](int64_t index, double weight) {
    taps.index[taps.count] = std::clamp<int64_t>(index, 0, in - 1);
    taps.weight[taps.count++] = weight;
  };
  if (mode.method == "nearest_neighbor") {
    add(static_cast<int64_t>(nearest_position(mode.rounding, source)), 1.0);
    return taps;
  }
  const double floor = std::floor(source);
  const double t = source - floor;
  const auto first = static_cast<int64_t>(floor);
  if (mode.method == "linear") {
    add(first, 1.0 - t);
    add(first + 1, t);
    return taps;
  }
  if (mode.method != "cubic") failf("image.resize2d: unsupported method \"{}\"", mode.method);
  double total = 0.0;
  for (int64_t k = -1; k <= 2; ++k) {
    const bool outside = first + k < 0 || first + k >= in;
    const double weight =
        mode.cubic_exclude && outside ? 0.0 : cubic_weight(mode.cubic_alpha, t - static_cast<double>(k));
    add(first + k, weight);
    total += weight;
  }
  // cubic_exclude drops the taps outside the image and renormalizes the rest.
  if (mode.cubic_exclude && total != 0.0)
    for (double& weight : taps.weight) weight /= total;
  return taps;
}

// Each output element is the tap-weighted sum of the input elements its row and column taps select.
Value resize2d_kernel(const KernelArgs& args) {
  const std::string layout = args.string_attr("layout", "NCHW");
  if (args.tensor(0).rank() != 4) failf("{} expects a 4-D input, got {}", args.op().name, args.tensor(0).type_str());
  const Tensor x = permute(args, args.tensor(0), layout_permutation(layout, "NCHW"));
  const Shape size = args.shape_operand(1);
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0)
    failf("{}: size must be two positive extents, got {}", args.op().name, shape_str(size));
  const ResizeMode mode{args.string_attr("method", "linear"),
                        args.string_attr("coordinate_transformation_mode", "half_pixel"),
                        args.string_attr("rounding_method", "round"), args.float_attr("cubic_alpha"),
                        args.int_attr("cubic_exclude") != 0};
  const int64_t planes = x.shape()[0] * x.shape()[1], height = x.shape()[2], width = x.shape()[3];
  const int64_t out_h = size[0], out_w = size[1];
  const Shape out_shape = {x.shape()[0], x.shape()[1], out_h, out_w};
  if (height == 0 || width == 0) failf("{}: cannot resize an empty image", args.op().name);
  std::vector<double> out = args.buffer(out_shape);
  std::vector<Taps> rows, columns;
  for (int64_t oh = 0; oh < out_h; ++oh) rows.push_back(taps_along(mode, oh, height, out_h));
  for (int64_t ow = 0; ow < out_w; ++ow) columns.push_back(taps_along(mode, ow, width, out_w));
  const std::vector<double> input = x.values();
  for (int64_t plane = 0; plane < planes; ++plane) {
    const double* in_plane = input.data() + plane * height * width;
    double* out_plane = out.data() + plane * out_h * out_w;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const Taps& row = rows[static_cast<size_t>(oh)];
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const Taps& column = columns[static_cast<size_t>(ow)];
        double sum = 0.0;
        for (int r = 0; r < row.count; ++r)
          for (int k = 0; k < column.count; ++k)
            sum += row.weight[r] * column.weight[k] * in_plane[row.index[r] * width + column.index[k]];
        out_plane[oh * out_w + ow] = sum;
      }
    }
  }
  const DType dtype = args.dtype_attr("out_dtype").value_or(x.dtype());
  const Tensor result = Tensor::from_values(dtype, out_shape, std::move(out));
  return permute(args, result, layout_permutation("NCHW", layout));
}

// ---------------------------------------------------------------------------------------------------------------
// Attention

// Relax nn.attention: q (B, S, N, H), k (B, Skv, Nkv, H), v (B, Skv, Nkv, Hv) -> (B, S, N, Hv).
// softmax(q·kᵀ * scale + bias) · v per batch and head; query head n uses key/value head n / (N / Nkv). A causal
// mask keeps key t for query s when t <= s + offset (offset 0 for "TopLeft", |S - Skv| for "BottomRight").
Value attention_kernel(const KernelArgs& args) {
  const Tensor& q = args.tensor(0);
  const Tensor& k = args.tensor(1);
  const Tensor& v = args.tensor(2);
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) {
    failf("attention: query, key and value must be 4-D (B, S, N, H), got {}, {}, {}", q.type_str(), k.type_str(),
          v.type_str());
  }
  common_dtype(q, k);
  const DType dtype = common_dtype(q, v);
  const int64_t batch = q.shape()[0], seq = q.shape()[1], heads = q.shape()[2], head_dim = q.shape()[3];
  const int64_t seq_kv = k.shape()[1], kv_heads = k.shape()[2], v_heads = v.shape()[2], v_dim = v.shape()[3];
  if (k.shape()[0] != batch || v.shape()[0] != batch || v.shape()[1] != seq_kv || k.shape()[3] != head_dim ||
      kv_heads <= 0 || v_heads <= 0 || heads % kv_heads != 0 || heads % v_heads != 0) {
    failf("attention: incompatible shapes query {}, key {}, value {}", q.type_str(), k.type_str(), v.type_str());
  }
  const double scale =
      args.opt_float_attr("scale").value_or(1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(head_dim, 1))));
  const std::string causal = args.string_attr("causal_mask", "");
  if (!causal.empty() && causal != "TopLeft" && causal != "BottomRight") {
    failf("attention: unknown causal_mask \"{}\"", causal);
  }
  if (args.opt_int_attr("window_size")) fail("attention: sliding-window attention (window_size) is not supported");
  const int64_t causal_offset = causal == "BottomRight" ? std::abs(seq - seq_kv) : 0;
  const Shape scores_shape = {batch, heads, seq, seq_kv};
  std::vector<double> bias_values;
  std::vector<int64_t> bias_offsets;
  if (args.num_operands() > 3) {
    const Tensor& bias = args.tensor(3);
    args.buffer(scores_shape);  // validates the size of the offsets below
    bias_values = bias.values();
    bias_offsets = broadcast_offsets(bias.shape(), scores_shape);
  }
  const Shape out_shape = {batch, seq, heads, v_dim};
  std::vector<double> out = args.buffer(out_shape);
  const std::vector<double> qv = q.values();
  const std::vector<double> kv = k.values();
  const std::vector<double> vv = v.values();
  std::vector<double> weights(static_cast<size_t>(seq_kv));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t n = 0; n < heads; ++n) {
      const int64_t kn = n / (heads / kv_heads);
      const int64_t vn = n / (heads / v_heads);
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t visible = causal.empty() ? seq_kv : std::min(seq_kv, s + causal_offset + 1);
        double max = -kInfinity;
        for (int64_t t = 0; t < visible; ++t) {
          double dot = 0.0;
          for (int64_t h = 0; h < head_dim; ++h) {
            dot +=
                qv[((b * seq + s) * heads + n) * head_dim + h] * kv[((b * seq_kv + t) * kv_heads + kn) * head_dim + h];
          }
          double score = dot * scale;
          if (!bias_offsets.empty()) score += bias_values[bias_offsets[((b * heads + n) * seq + s) * seq_kv + t]];
          weights[t] = score;
          max = std::max(max, score);
        }
        double sum = 0.0;
        for (int64_t t = 0; t < visible; ++t) {
          weights[t] = std::exp(weights[t] - max);
          sum += weights[t];
        }
        double* out_row = out.data() + ((b * seq + s) * heads + n) * v_dim;
        for (int64_t t = 0; t < visible; ++t) {
          const double p = weights[t] / sum;
          for (int64_t h = 0; h < v_dim; ++h) out_row[h] += p * vv[((b * seq_kv + t) * v_heads + vn) * v_dim + h];
        }
      }
    }
  }
  return make(dtype, out_shape, std::move(out));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Argument access

KernelArgs::KernelArgs(const Node& call, std::span<const Value> operands, int64_t max_elements)
    : call_(call), op_(OpRegistry::global().get(call.op())), operands_(operands), max_elements_(max_elements) {}

const Value& KernelArgs::operand(size_t i) const {
  if (i >= operands_.size()) failf("{} expects at least {} operands, got {}", op_.name, i + 1, operands_.size());
  return operands_[i];
}

const Tensor& KernelArgs::tensor(size_t i) const {
  const Value& value = operand(i);
  if (!value.is_tensor()) failf("operand {} of {} must be a tensor, got {}", i, op_.name, value.type_str());
  return value.tensor();
}

std::vector<int64_t> KernelArgs::shape_operand(size_t i) const {
  const Value& value = operand(i);
  if (value.is_shape()) return value.dims();
  if (value.is_tensor() && value.tensor().rank() == 1 && !is_float(value.tensor().dtype())) {
    Shape dims;
    for (double dim : value.tensor().values()) dims.push_back(as_int64(dim));
    return dims;
  }
  failf("operand {} of {} must be a shape, got {}", i, op_.name, value.type_str());
}

const AttrValue* KernelArgs::find_attr(std::string_view name) const {
  const int index = op_.attr_index(name);
  if (index < 0 || static_cast<size_t>(index) >= call_.attrs().size()) return nullptr;
  return &call_.attr(static_cast<size_t>(index));
}

bool KernelArgs::has_attr(std::string_view name) const { return find_attr(name) != nullptr; }

const AttrValue& KernelArgs::attr(std::string_view name) const {
  const AttrValue* value = find_attr(name);
  if (value == nullptr) failf("{} has no attribute '{}' in the op registry", op_.name, name);
  return *value;
}

int64_t KernelArgs::int_attr(std::string_view name) const {
  const AttrValue& value = attr(name);
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* b = std::get_if<bool>(&value)) return *b ? 1 : 0;
  if (const auto* d = std::get_if<double>(&value); d != nullptr && *d == std::trunc(*d) && std::fabs(*d) < 9e18) {
    return static_cast<int64_t>(*d);
  }
  failf("{}: attribute '{}' must be an integer, got {}", op_.name, name, attr_value_str(value));
}

std::optional<int64_t> KernelArgs::opt_int_attr(std::string_view name) const {
  const AttrValue* value = find_attr(name);
  if (value == nullptr || std::holds_alternative<std::monostate>(*value)) return std::nullopt;
  return int_attr(name);
}

double KernelArgs::float_attr(std::string_view name) const {
  const AttrValue& value = attr(name);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? 1.0 : 0.0;
  failf("{}: attribute '{}' must be a number, got {}", op_.name, name, attr_value_str(value));
}

std::optional<double> KernelArgs::opt_float_attr(std::string_view name) const {
  const AttrValue* value = find_attr(name);
  if (value == nullptr || std::holds_alternative<std::monostate>(*value)) return std::nullopt;
  return float_attr(name);
}

bool KernelArgs::flag(std::string_view name, bool fallback) const {
  const AttrValue* value = find_attr(name);
  if (value == nullptr || std::holds_alternative<std::monostate>(*value)) return fallback;
  if (const auto* b = std::get_if<bool>(value)) return *b;
  if (const auto* i = std::get_if<int64_t>(value)) return *i != 0;
  failf("{}: attribute '{}' must be a bool, got {}", op_.name, name, attr_value_str(*value));
}

std::string KernelArgs::string_attr(std::string_view name, std::string_view fallback) const {
  const AttrValue* value = find_attr(name);
  if (value == nullptr || std::holds_alternative<std::monostate>(*value)) return std::string(fallback);
  if (const auto* s = std::get_if<std::string>(value)) return s->empty() ? std::string(fallback) : *s;
  failf("{}: attribute '{}' must be a string, got {}", op_.name, name, attr_value_str(*value));
}

std::vector<int64_t> KernelArgs::ints_attr(std::string_view name) const {
  const AttrValue& value = attr(name);
  if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) return *list;
  if (const auto* i = std::get_if<int64_t>(&value)) return {*i};
  failf("{}: attribute '{}' must be an integer list, got {}", op_.name, name, attr_value_str(value));
}

std::optional<std::vector<int64_t>> KernelArgs::opt_ints_attr(std::string_view name) const {
  const AttrValue* value = find_attr(name);
  if (value == nullptr || std::holds_alternative<std::monostate>(*value)) return std::nullopt;
  return ints_attr(name);
}

std::optional<DType> KernelArgs::dtype_attr(std::string_view name) const {
  const std::string text = string_attr(name, "");
  if (text.empty() || text == "void") return std::nullopt;
  const std::optional<DType> dtype = parse_dtype(text);
  if (!dtype || *dtype == DType::Unknown) failf("{}: unknown dtype \"{}\"", op_.name, text);
  return dtype;
}

std::vector<double> KernelArgs::buffer(std::span<const int64_t> shape) const {
  const std::optional<int64_t> count = checked_num_elements(shape);
  if (!count) failf("{}: invalid result shape {}", op_.name, shape_str(shape));
  if (*count > max_elements_) {
    failf("{}: the result {} would have {} elements, more than the limit of {}", op_.name, shape_str(shape), *count,
          max_elements_);
  }
  return std::vector<double>(static_cast<size_t>(*count), 0.0);
}

// ---------------------------------------------------------------------------------------------------------------
// The kernel table

BuiltinKernel builtin_kernel(OpId id) {
  using A = const KernelArgs&;
  switch (id) {
    case op::add: return [](A a) { return arithmetic(a, [](double x, double y) { return x + y; }); };
    case op::subtract: return [](A a) { return arithmetic(a, [](double x, double y) { return x - y; }); };
    case op::multiply: return [](A a) { return arithmetic(a, [](double x, double y) { return x * y; }); };
    case op::divide: return divide_kernel;
    case op::floor_divide: return floor_divide_kernel;
    case op::power: return [](A a) { return arithmetic(a, [](double x, double y) { return std::pow(x, y); }); };
    case op::maximum: return [](A a) { return arithmetic(a, nan_propagating_max); };
    case op::minimum: return [](A a) { return arithmetic(a, nan_propagating_min); };
    case op::equal: return [](A a) { return comparison(a, [](double x, double y) { return x == y; }); };
    case op::not_equal: return [](A a) { return comparison(a, [](double x, double y) { return x != y; }); };
    case op::less: return [](A a) { return comparison(a, [](double x, double y) { return x < y; }); };
    case op::less_equal: return [](A a) { return comparison(a, [](double x, double y) { return x <= y; }); };
    case op::greater: return [](A a) { return comparison(a, [](double x, double y) { return x > y; }); };
    case op::greater_equal: return [](A a) { return comparison(a, [](double x, double y) { return x >= y; }); };
    case op::logical_and:
      return [](A a) { return comparison(a, [](double x, double y) { return x != 0.0 && y != 0.0; }); };
    case op::logical_or:
      return [](A a) { return comparison(a, [](double x, double y) { return x != 0.0 || y != 0.0; }); };
    case op::bitwise_and: return [](A a) { return bitwise(a, [](int64_t x, int64_t y) { return x & y; }); };
    case op::bitwise_or: return [](A a) { return bitwise(a, [](int64_t x, int64_t y) { return x | y; }); };
    case op::exp: return [](A a) { return same_dtype_unary(a, [](double x) { return std::exp(x); }); };
    case op::log: return [](A a) { return same_dtype_unary(a, [](double x) { return std::log(x); }); };
    case op::sqrt: return [](A a) { return same_dtype_unary(a, [](double x) { return std::sqrt(x); }); };
    case op::rsqrt: return [](A a) { return same_dtype_unary(a, [](double x) { return 1.0 / std::sqrt(x); }); };
    case op::negative: return [](A a) { return same_dtype_unary(a, [](double x) { return -x; }); };
    case op::abs: return [](A a) { return same_dtype_unary(a, [](double x) { return std::fabs(x); }); };
    case op::tanh: return [](A a) { return same_dtype_unary(a, [](double x) { return std::tanh(x); }); };
    case op::sigmoid: return [](A a) { return same_dtype_unary(a, sigmoid); };
    case op::erf: return [](A a) { return same_dtype_unary(a, [](double x) { return std::erf(x); }); };
    case op::cos: return [](A a) { return same_dtype_unary(a, [](double x) { return std::cos(x); }); };
    case op::sin: return [](A a) { return same_dtype_unary(a, [](double x) { return std::sin(x); }); };
    case op::logical_not:
      return [](A a) { return map_unary(a, DType::Bool, [](double x) { return x == 0.0 ? 1.0 : 0.0; }); };
    case op::astype: return astype_kernel;
    case op::clip: return clip_kernel;
    case op::where: return where_kernel;
    case op::nn_relu: return [](A a) { return same_dtype_unary(a, [](double x) { return x < 0.0 ? 0.0 : x; }); };
    case op::nn_leaky_relu: return leaky_relu_kernel;
    case op::nn_gelu: return [](A a) { return same_dtype_unary(a, gelu); };
    case op::nn_gelu_tanh: return [](A a) { return same_dtype_unary(a, gelu_tanh); };
    case op::nn_silu: return [](A a) { return same_dtype_unary(a, [](double x) { return x * sigmoid(x); }); };
    case op::matmul: return matmul_kernel;
    case op::permute_dims: return permute_dims_kernel;
    case op::reshape: return reshape_kernel;
    case op::broadcast_to: return broadcast_to_kernel;
    case op::expand_dims: return expand_dims_kernel;
    case op::squeeze: return squeeze_kernel;
    case op::strided_slice: return strided_slice_kernel;
    case op::concat: return concat_kernel;
    case op::split: return split_kernel;
    case op::take: return take_kernel;
    case op::sum: return sum_kernel;
    case op::mean: return mean_kernel;
    case op::max: return [](A a) { return extremum(a, -kInfinity, nan_propagating_max); };
    case op::min: return [](A a) { return extremum(a, kInfinity, nan_propagating_min); };
    case op::cumsum: return cumsum_kernel;
    case op::arange: return arange_kernel;
    case op::full: return full_kernel;
    case op::zeros: return constant_fill_kernel<0>;
    case op::ones: return constant_fill_kernel<1>;
    case op::triu: return triangle_kernel<true>;
    case op::tril: return triangle_kernel<false>;
    case op::nn_softmax: return softmax_kernel;
    case op::nn_layer_norm: return layer_norm_kernel;
    case op::nn_rms_norm: return rms_norm_kernel;
    case op::nn_group_norm: return group_norm_kernel;
    case op::nn_batch_norm: return batch_norm_kernel;
    case op::nn_conv1d: return [](A a) { return conv_kernel(a, true); };
    case op::nn_conv2d: return [](A a) { return conv_kernel(a, false); };
    case op::nn_conv2d_transpose: return conv2d_transpose_kernel;
    case op::nn_bias_add: return bias_add_kernel;
    case op::nn_dense: return dense_kernel;
    case op::nn_max_pool2d: return [](A a) { return pool2d_kernel(a, true); };
    case op::nn_avg_pool2d: return [](A a) { return pool2d_kernel(a, false); };
    case op::nn_adaptive_avg_pool2d: return adaptive_avg_pool2d_kernel;
    case op::nn_attention: return attention_kernel;
    case op::image_resize2d: return resize2d_kernel;
    default: return nullptr;
  }
}

}  // namespace dpl::interp
