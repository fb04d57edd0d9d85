// Concrete tensors: storage, seeded random values and tolerance-based comparison.
#include "dpl/interp/tensor.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

namespace dpl {
namespace {

// splitmix64: turns nearby seeds into unrelated generator seeds.
uint64_t mix_seed(uint64_t seed) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Platform-independent draws (the std distributions differ between standard libraries).
class RandomSource {
 public:
  RandomSource(uint64_t seed, DType dtype, ValueRange range) : engine_(mix_seed(seed)), range_(range) {
    integral_ = !is_float(dtype);
    if (integral_) {
      int_low_ = static_cast<int64_t>(std::trunc(range.low));
      const int64_t high = static_cast<int64_t>(std::trunc(range.high));
      int_span_ = high > int_low_ ? static_cast<uint64_t>(high - int_low_) : 0;
    }
  }
  double next() {
    if (integral_) {
      if (int_span_ == 0) return static_cast<double>(int_low_);
      return static_cast<double>(int_low_ + static_cast<int64_t>(engine_() % int_span_));
    }
    const double unit = static_cast<double>(engine_() >> 11) * 0x1.0p-53;  // [0, 1)
    return range_.low + unit * (range_.high - range_.low);
  }

 private:
  std::mt19937_64 engine_;
  ValueRange range_;
  bool integral_ = false;
  int64_t int_low_ = 0;
  uint64_t int_span_ = 0;
};

std::string format_index(std::span<const int64_t> index) { return fmt::format("[{}]", fmt::join(index, ", ")); }

std::vector<int64_t> unflatten(int64_t flat, std::span<const int64_t> shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return index;
}

}  // namespace

ValueRange default_range(DType dtype) {
  switch (dtype) {
    case DType::Bool: return {0.0, 2.0};
    case DType::UInt8: return {0.0, 8.0};
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: return {-8.0, 8.0};
    default: return {-1.0, 1.0};
  }
}

std::optional<int64_t> checked_num_elements(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) return std::nullopt;
    count *= dim;
  }
  return count;
}

bool Tensor::stored_as_float(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
}

Tensor::Tensor() : Tensor(DType::Float32, {}) {}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  const std::optional<int64_t> count = checked_num_elements(shape_);
  if (!count) throw std::invalid_argument("Tensor: negative or overflowing shape");
  num_elements_ = *count;
  const auto size = static_cast<size_t>(num_elements_);
  if (stored_as_float(dtype_)) {
    float_values_ = std::make_shared<std::vector<float>>(size, 0.0f);
  } else {
    double_values_ = std::make_shared<std::vector<double>>(size, 0.0);
  }
}

Tensor Tensor::scalar(double value, DType dtype) { return from_values(dtype, {}, {value}); }

Tensor Tensor::from_values(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  const std::optional<int64_t> count = checked_num_elements(shape);
  if (!count || static_cast<size_t>(*count) != values.size()) {
    throw std::invalid_argument(
        fmt::format("Tensor::from_values: {} values for shape ({})", values.size(), fmt::join(shape, ", ")));
  }
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_ = std::move(shape);
  tensor.num_elements_ = *count;
  if (stored_as_float(dtype)) {
    auto stored = std::make_shared<std::vector<float>>(values.size());
    for (size_t i = 0; i < values.size(); ++i) (*stored)[i] = static_cast<float>(round_to_dtype(values[i], dtype));
    tensor.float_values_ = std::move(stored);
    tensor.double_values_.reset();
  } else {
    for (double& value : values) value = round_to_dtype(value, dtype);
    tensor.double_values_ = std::make_shared<std::vector<double>>(std::move(values));
    tensor.float_values_.reset();
  }
  return tensor;
}

Tensor Tensor::random(DType dtype, std::vector<int64_t> shape, uint64_t seed, std::optional<ValueRange> range) {
  Tensor tensor(dtype, std::move(shape));
  RandomSource source(seed, dtype, range.value_or(default_range(dtype)));
  // Written straight into the storage: model weights can hold a billion elements.
  if (tensor.float_values_) {
    for (float& value : *tensor.float_values_) value = static_cast<float>(round_to_dtype(source.next(), dtype));
  } else {
    for (double& value : *tensor.double_values_) value = round_to_dtype(source.next(), dtype);
  }
  return tensor;
}

std::vector<int64_t> Tensor::strides() const {
  std::vector<int64_t> result(shape_.size(), 1);
  for (size_t d = shape_.size(); d-- > 1;) result[d - 1] = result[d] * shape_[d];
  return result;
}

double Tensor::at(int64_t flat_index) const {
  if (flat_index < 0 || flat_index >= num_elements_) {
    throw std::out_of_range(fmt::format("Tensor::at: index {} outside {} elements", flat_index, num_elements_));
  }
  const auto i = static_cast<size_t>(flat_index);
  return float_values_ ? (*float_values_)[i] : (*double_values_)[i];
}

double Tensor::element(std::span<const int64_t> index) const {
  if (index.size() != shape_.size()) {
    throw std::out_of_range(fmt::format("Tensor::element: {} indices for rank {}", index.size(), shape_.size()));
  }
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape_[d]) {
      throw std::out_of_range(
          fmt::format("Tensor::element: index {} outside shape ({})", format_index(index), fmt::join(shape_, ", ")));
    }
    flat = flat * shape_[d] + index[d];
  }
  return at(flat);
}

double Tensor::element(std::initializer_list<int64_t> index) const {
  return element(std::span<const int64_t>(index.begin(), index.size()));
}

void Tensor::make_unique_storage() {
  if (float_values_ && float_values_.use_count() > 1) {
    float_values_ = std::make_shared<std::vector<float>>(*float_values_);
  }
  if (double_values_ && double_values_.use_count() > 1) {
    double_values_ = std::make_shared<std::vector<double>>(*double_values_);
  }
}

void Tensor::set(int64_t flat_index, double value) {
  if (flat_index < 0 || flat_index >= num_elements_) {
    throw std::out_of_range(fmt::format("Tensor::set: index {} outside {} elements", flat_index, num_elements_));
  }
  make_unique_storage();
  const auto i = static_cast<size_t>(flat_index);
  if (float_values_) {
    (*float_values_)[i] = static_cast<float>(round_to_dtype(value, dtype_));
  } else {
    (*double_values_)[i] = round_to_dtype(value, dtype_);
  }
}

std::vector<double> Tensor::values() const {
  if (double_values_) return *double_values_;
  return std::vector<double>(float_values_->begin(), float_values_->end());
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  const std::optional<int64_t> count = checked_num_elements(shape);
  if (!count || *count != num_elements_) {
    throw std::invalid_argument(fmt::format("Tensor::reshaped: ({}) has a different element count than ({})",
                                            fmt::join(shape, ", "), fmt::join(shape_, ", ")));
  }
  Tensor result = *this;
  result.shape_ = std::move(shape);
  return result;
}

bool Tensor::all_finite() const {
  if (float_values_) {
    for (float value : *float_values_) {
      if (!std::isfinite(value)) return false;
    }
    return true;
  }
  for (double value : *double_values_) {
    if (!std::isfinite(value)) return false;
  }
  return true;
}

std::string Tensor::type_str() const {
  const std::string_view name = dtype_name(dtype_);
  return fmt::format("{}({})", name.empty() ? "unknown" : name, fmt::join(shape_, ", "));
}

std::string Tensor::str(size_t max_elements) const {
  std::string text = type_str() + " [";
  const auto shown = std::min(static_cast<size_t>(num_elements_), max_elements);
  for (size_t i = 0; i < shown; ++i) {
    text += fmt::format("{}{:.6g}", i == 0 ? "" : ", ", at(static_cast<int64_t>(i)));
  }
  if (shown < static_cast<size_t>(num_elements_)) text += ", ...";
  return text + "]";
}

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float32: return {1e-5, 1e-4};
    case DType::Float64: return {1e-9, 1e-9};
    case DType::Float16: return {1e-3, 1e-2};
    case DType::BFloat16: return {1e-2, 5e-2};
    default: return {0.0, 0.0};
  }
}

std::string Comparison::str() const {
  if (!mismatch.empty()) return mismatch;
  return fmt::format(
      "max abs error {:.3g} at {} ({:.8g} vs {:.8g}), max rel error {:.3g} at {}, {} element(s) outside "
      "tolerance (abs {:g}, rel {:g})",
      max_abs_error, format_index(max_abs_index), max_abs_actual, max_abs_expected, max_rel_error,
      format_index(max_rel_index), num_outside, tolerance.absolute, tolerance.relative);
}

Comparison compare(const Tensor& actual, const Tensor& expected, std::optional<Tolerance> tolerance) {
  Comparison result;
  result.tolerance = tolerance.value_or(default_tolerance(expected.dtype()));
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    result.within_tolerance = false;
    result.mismatch = fmt::format("type differs: {} vs expected {}", actual.type_str(), expected.type_str());
    return result;
  }
  const std::vector<double> actual_values = actual.values();
  const std::vector<double> expected_values = expected.values();
  const double infinity = std::numeric_limits<double>::infinity();
  int64_t max_abs_at = -1;
  int64_t max_rel_at = -1;
  for (size_t i = 0; i < actual_values.size(); ++i) {
    const double a = actual_values[i];
    const double e = expected_values[i];
    double abs_error = 0.0;
    double rel_error = 0.0;
    if (std::isnan(a) || std::isnan(e)) {
      abs_error = rel_error = std::isnan(a) && std::isnan(e) ? 0.0 : infinity;
    } else if (a == e) {  // equal infinities included: their difference would be NaN
      abs_error = rel_error = 0.0;
    } else if (!std::isfinite(a) || !std::isfinite(e)) {
      abs_error = rel_error = infinity;
    } else {
      abs_error = std::fabs(a - e);
      rel_error = e == 0.0 ? infinity : abs_error / std::fabs(e);
    }
    const double allowed = result.tolerance.absolute + result.tolerance.relative * std::fabs(e);
    const bool inside = abs_error == 0.0 || (std::isfinite(abs_error) && abs_error <= allowed);
    if (!inside) ++result.num_outside;
    if (max_abs_at < 0 || abs_error > result.max_abs_error) {
      result.max_abs_error = abs_error;
      max_abs_at = static_cast<int64_t>(i);
    }
    if (max_rel_at < 0 || rel_error > result.max_rel_error) {
      result.max_rel_error = rel_error;
      max_rel_at = static_cast<int64_t>(i);
    }
  }
  result.within_tolerance = result.num_outside == 0;
  if (max_abs_at >= 0) {
    result.max_abs_index = unflatten(max_abs_at, expected.shape());
    result.max_abs_actual = actual_values[static_cast<size_t>(max_abs_at)];
    result.max_abs_expected = expected_values[static_cast<size_t>(max_abs_at)];
    result.max_rel_index = unflatten(max_rel_at, expected.shape());
  }
  return result;
}

}  // namespace dpl
