// Concrete tensors for the reference interpreter: dtype, static shape, contiguous values rounded like the dtype.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dpl/ir/types.h"

namespace dpl {

// The range random values are drawn from: floats uniform in [low, high), integers uniform in [low, high)
// (both bounds rounded toward zero to integers).
struct ValueRange {
  double low = -1.0;
  double high = 1.0;
};

// The default range for `dtype`: floats [-1, 1), signed integers [-8, 8), unsigned [0, 8), bool [0, 2).
ValueRange default_range(DType dtype);

// Number of elements of `shape`, or nullopt when a dim is negative or the product overflows int64.
std::optional<int64_t> checked_num_elements(std::span<const int64_t> shape);

// A tensor value: dtype, static shape (row-major, contiguous) and its elements. Every element is exposed as a
// double, which is exact for every supported dtype (integers up to 2^53). Copies share the element storage
// (copy on write), so passing tensors around is cheap.
class Tensor {
 public:
  Tensor();  // a float32 scalar 0
  // A zero-filled tensor. Dims must be >= 0.
  Tensor(DType dtype, std::vector<int64_t> shape);

  static Tensor scalar(double value, DType dtype = DType::Float32);
  // Elements in row-major order, each rounded to `dtype`. Throws std::invalid_argument when the count differs
  // from the shape's.
  static Tensor from_values(DType dtype, std::vector<int64_t> shape, std::vector<double> values);
  // Deterministic random elements from `seed` (std::mt19937_64; the same numbers on every platform), drawn
  // from `range`, or default_range(dtype) when not given, then rounded to the dtype.
  static Tensor random(DType dtype, std::vector<int64_t> shape, uint64_t seed,
                       std::optional<ValueRange> range = std::nullopt);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  // Row-major element strides.
  std::vector<int64_t> strides() const;

  // Element access; the index is checked (std::out_of_range).
  double at(int64_t flat_index) const;
  double element(std::span<const int64_t> index) const;
  double element(std::initializer_list<int64_t> index) const;
  // Stores `value` rounded to the dtype.
  void set(int64_t flat_index, double value);

  // All elements in row-major order.
  std::vector<double> values() const;
  // The same elements viewed with another shape of equal element count (shares storage).
  Tensor reshaped(std::vector<int64_t> shape) const;
  bool all_finite() const;

  // `float32(2, 3)`: the dtype and shape.
  std::string type_str() const;
  // `float32(2, 3) [1, 2, 3, 4, 5, 6]`, eliding after `max_elements` elements.
  std::string str(size_t max_elements = 16) const;

 private:
  // float32, float16 and bfloat16 values are exactly floats: storing them as float halves the memory of big
  // weight tensors. Everything else (integers, bool, float64) is stored as double.
  static bool stored_as_float(DType dtype);
  void make_unique_storage();

  DType dtype_ = DType::Float32;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 1;
  std::shared_ptr<std::vector<float>> float_values_;
  std::shared_ptr<std::vector<double>> double_values_;
};

// How close two tensors must be: |actual - expected| <= absolute + relative * |expected| per element.
struct Tolerance {
  double absolute = 0.0;
  double relative = 0.0;
};

// Defaults by dtype: float32 (1e-5, 1e-4), float64 (1e-9, 1e-9), float16 (1e-3, 1e-2), bfloat16 (1e-2, 5e-2),
// integers and bool exact.
Tolerance default_tolerance(DType dtype);

// The result of comparing two tensors element by element.
struct Comparison {
  bool within_tolerance = true;
  std::string mismatch;        // set when dtypes or shapes differ (then no element errors are computed)
  int64_t num_outside = 0;     // elements outside the tolerance
  double max_abs_error = 0.0;  // NaN against a number, or infinities of different sign, count as infinite
  std::vector<int64_t> max_abs_index;
  double max_abs_actual = 0.0;  // the two values at max_abs_index
  double max_abs_expected = 0.0;
  double max_rel_error = 0.0;  // |actual - expected| / |expected|; infinite where expected is 0 and actual not
  std::vector<int64_t> max_rel_index;
  Tolerance tolerance;

  explicit operator bool() const { return within_tolerance; }
  // One line: "max abs error 3.1e-03 at [0, 4] (1.2345 vs 1.2376), max rel error ..., 2 of 6 elements outside
  // tolerance (abs 1e-05, rel 0.0001)".
  std::string str() const;
};

// Compares `actual` with `expected`; tolerance defaults by the dtype of `expected`. NaNs at the same position,
// and equal infinities, count as equal.
Comparison compare(const Tensor& actual, const Tensor& expected, std::optional<Tolerance> tolerance = std::nullopt);

}  // namespace dpl
