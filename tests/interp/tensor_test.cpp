// Tensors: dtype rounding, element access, copy-on-write storage, seeded random values and comparison.
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "dpl/interp/tensor.h"
#include "interp_test_util.h"

namespace dpl {
namespace {

using interp_test::f32;
using interp_test::i64;

const double kInfinity = std::numeric_limits<double>::infinity();

TEST(RoundToDType, Float32RoundsToNearestEven) {
  EXPECT_EQ(round_to_dtype(16777217.0, DType::Float32), 16777216.0);  // 2^24 + 1: a tie, to even
  EXPECT_EQ(round_to_dtype(16777219.0, DType::Float32), 16777220.0);  // 2^24 + 3: a tie, to even (up)
  EXPECT_EQ(round_to_dtype(0.1, DType::Float32), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_dtype(1e39, DType::Float32), kInfinity);
  EXPECT_EQ(round_to_dtype(-1e39, DType::Float32), -kInfinity);
  EXPECT_TRUE(std::isnan(round_to_dtype(std::nan(""), DType::Float32)));
}

TEST(RoundToDType, Float16) {
  EXPECT_EQ(round_to_dtype(2049.0, DType::Float16), 2048.0);  // 11 significant bits: a tie, to even
  EXPECT_EQ(round_to_dtype(2051.0, DType::Float16), 2052.0);
  EXPECT_EQ(round_to_dtype(0.1, DType::Float16), 0.0999755859375);
  EXPECT_EQ(round_to_dtype(65504.0, DType::Float16), 65504.0);  // the largest half
  EXPECT_EQ(round_to_dtype(65519.0, DType::Float16), 65504.0);
  EXPECT_EQ(round_to_dtype(65520.0, DType::Float16), kInfinity);  // rounds up past the largest: overflow
  EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -24), DType::Float16), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -26), DType::Float16), 0.0);
  EXPECT_EQ(round_to_dtype(-3.0, DType::Float16), -3.0);
}

TEST(RoundToDType, BFloat16) {
  EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -8), DType::BFloat16), 1.0);  // 8 significant bits, tie to even
  EXPECT_EQ(round_to_dtype(1.0 + 3 * std::ldexp(1.0, -8), DType::BFloat16), 1.015625);
  EXPECT_EQ(round_to_dtype(257.0, DType::BFloat16), 256.0);
  EXPECT_EQ(round_to_dtype(1e30, DType::BFloat16), std::ldexp(202.0, 92));  // 1e30 / 2^92 = 201.95
}

TEST(RoundToDType, IntegersTruncateAndWrap) {
  EXPECT_EQ(round_to_dtype(1.7, DType::Int32), 1.0);
  EXPECT_EQ(round_to_dtype(-1.7, DType::Int32), -1.0);
  EXPECT_EQ(round_to_dtype(2147483648.0, DType::Int32), -2147483648.0);
  EXPECT_EQ(round_to_dtype(300.0, DType::UInt8), 44.0);
  EXPECT_EQ(round_to_dtype(-1.0, DType::UInt8), 255.0);
  EXPECT_EQ(round_to_dtype(128.0, DType::Int8), -128.0);
  EXPECT_EQ(round_to_dtype(40000.0, DType::Int16), -25536.0);
  EXPECT_EQ(round_to_dtype(std::nan(""), DType::Int64), 0.0);
  EXPECT_EQ(round_to_dtype(1e300, DType::Int64), 9223372036854775807.0);            // saturates instead of undefined
  EXPECT_EQ(round_to_dtype(9007199254740993.0, DType::Int64), 9007199254740992.0);  // beyond 2^53: inexact
}

TEST(RoundToDType, Bool) {
  EXPECT_EQ(round_to_dtype(0.0, DType::Bool), 0.0);
  EXPECT_EQ(round_to_dtype(-0.5, DType::Bool), 1.0);
  EXPECT_EQ(round_to_dtype(7.0, DType::Bool), 1.0);
}

TEST(Tensor, FromValuesRoundsToTheDType) {
  const Tensor half = Tensor::from_values(DType::Float16, {3}, {0.1, 2049.0, 1e6});
  EXPECT_EQ(half.at(0), 0.0999755859375);
  EXPECT_EQ(half.at(1), 2048.0);
  EXPECT_EQ(half.at(2), kInfinity);
  const Tensor ints = Tensor::from_values(DType::Int32, {2}, {2.9, -2.9});
  EXPECT_EQ(ints.values(), (std::vector<double>{2.0, -2.0}));
}

TEST(Tensor, ShapeAndElementAccess) {
  const Tensor t = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.element({1, 2}), 6.0);
  EXPECT_EQ(t.element({0, 1}), 2.0);
  EXPECT_EQ(t.type_str(), "float32(2, 3)");
  EXPECT_EQ(t.str(), "float32(2, 3) [1, 2, 3, 4, 5, 6]");
  EXPECT_EQ(t.str(2), "float32(2, 3) [1, 2, ...]");
  EXPECT_THROW(t.element({2, 0}), std::out_of_range);
  EXPECT_THROW(t.element({0}), std::out_of_range);
  EXPECT_THROW(t.at(6), std::out_of_range);
  EXPECT_THROW(f32({2, 2}, {1, 2, 3}), std::invalid_argument);
  const Tensor scalar = Tensor::scalar(2.5);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.num_elements(), 1);
  EXPECT_EQ(scalar.at(0), 2.5);
  EXPECT_EQ(Tensor(DType::Int64, {0, 4}).num_elements(), 0);
}

TEST(Tensor, CopiesShareStorageUntilWritten) {
  const Tensor original = f32({2}, {1, 2});
  Tensor copy = original;
  copy.set(0, 10.0);
  EXPECT_EQ(original.at(0), 1.0);
  EXPECT_EQ(copy.at(0), 10.0);
  const Tensor reshaped = original.reshaped({2, 1});
  EXPECT_EQ(reshaped.shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(reshaped.element({1, 0}), 2.0);
  EXPECT_THROW(original.reshaped({3}), std::invalid_argument);
}

TEST(Tensor, SetRoundsToTheDType) {
  Tensor t(DType::Float16, {1});
  t.set(0, 2049.0);
  EXPECT_EQ(t.at(0), 2048.0);
  Tensor b(DType::Bool, {1});
  b.set(0, 3.0);
  EXPECT_EQ(b.at(0), 1.0);
}

TEST(Tensor, AllFinite) {
  EXPECT_TRUE(f32({2}, {1, -1}).all_finite());
  EXPECT_FALSE(f32({2}, {1, kInfinity}).all_finite());
  EXPECT_FALSE(Tensor::from_values(DType::Float64, {1}, {std::nan("")}).all_finite());
}

TEST(TensorRandom, SameSeedSameValues) {
  const Tensor a = Tensor::random(DType::Float32, {4, 5}, 42);
  const Tensor b = Tensor::random(DType::Float32, {4, 5}, 42);
  const Tensor c = Tensor::random(DType::Float32, {4, 5}, 43);
  EXPECT_EQ(a.values(), b.values());
  EXPECT_NE(a.values(), c.values());
}

TEST(TensorRandom, DefaultRangesByDType) {
  const Tensor floats = Tensor::random(DType::Float32, {1000}, 1);
  std::set<double> distinct;
  for (double value : floats.values()) {
    EXPECT_GE(value, -1.0);
    EXPECT_LT(value, 1.0);
    distinct.insert(value);
  }
  EXPECT_GT(distinct.size(), 990u);
  std::set<double> ints;
  for (double value : Tensor::random(DType::Int64, {1000}, 1).values()) {
    EXPECT_EQ(value, std::trunc(value));
    ints.insert(value);
  }
  EXPECT_EQ(*ints.begin(), -8.0);
  EXPECT_EQ(*ints.rbegin(), 7.0);
  std::set<double> bools;
  for (double value : Tensor::random(DType::Bool, {100}, 1).values()) bools.insert(value);
  EXPECT_EQ(bools, (std::set<double>{0.0, 1.0}));
}

TEST(TensorRandom, GivenRange) {
  for (double value : Tensor::random(DType::Int32, {500}, 3, ValueRange{0, 30522}).values()) {
    EXPECT_GE(value, 0.0);
    EXPECT_LT(value, 30522.0);
  }
  for (double value : Tensor::random(DType::Float16, {500}, 3, ValueRange{0.5, 1.5}).values()) {
    EXPECT_GE(value, 0.5);
    EXPECT_LE(value, 1.5);
    EXPECT_EQ(value, round_to_dtype(value, DType::Float16));  // already a half
  }
  // An empty range gives its lower bound.
  EXPECT_EQ(Tensor::random(DType::Int64, {3}, 1, ValueRange{4, 4}).values(), (std::vector<double>{4, 4, 4}));
}

// The values are fixed by the seed on every platform: mt19937_64 seeded with splitmix64(seed), floats from the
// top 53 bits, integers by modulo. The expected numbers come from an independent Python implementation.
TEST(TensorRandom, StableAcrossPlatforms) {
  const Tensor floats = Tensor::random(DType::Float64, {3}, 0);
  EXPECT_EQ(floats.values(), (std::vector<double>{0.7847483295531241, 0.8482155118736889, 0.5486022868015601}));
  const Tensor ints = Tensor::random(DType::Int64, {4}, 7, ValueRange{0, 1000});
  EXPECT_EQ(ints.values(), (std::vector<double>{687, 520, 229, 712}));
}

TEST(Compare, EqualTensorsAreWithinTolerance) {
  const Comparison result = compare(f32({2}, {1, 2}), f32({2}, {1, 2}));
  EXPECT_TRUE(result);
  EXPECT_EQ(result.max_abs_error, 0.0);
  EXPECT_EQ(result.num_outside, 0);
}

TEST(Compare, ReportsLargestErrorsAndWhere) {
  const Comparison result = compare(f32({2, 2}, {1, 2, 3, 4.5}), f32({2, 2}, {1, 2.001, 3, 4}));
  EXPECT_FALSE(result);
  EXPECT_EQ(result.num_outside, 2);
  EXPECT_NEAR(result.max_abs_error, 0.5, 1e-6);
  EXPECT_EQ(result.max_abs_index, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(result.max_abs_actual, 4.5);
  EXPECT_EQ(result.max_abs_expected, 4.0);
  EXPECT_NEAR(result.max_rel_error, 0.125, 1e-6);
  EXPECT_EQ(result.max_rel_index, (std::vector<int64_t>{1, 1}));
  EXPECT_NE(result.str().find("max abs error 0.5 at [1, 1] (4.5 vs 4)"), std::string::npos) << result.str();
}

TEST(Compare, DefaultToleranceFollowsTheDType) {
  EXPECT_TRUE(compare(f32({1}, {1.00005}), f32({1}, {1.0})));
  EXPECT_FALSE(compare(f32({1}, {1.001}), f32({1}, {1.0})));
  const Tensor half_a = Tensor::from_values(DType::Float16, {1}, {1.005});
  const Tensor half_b = Tensor::from_values(DType::Float16, {1}, {1.0});
  EXPECT_TRUE(compare(half_a, half_b));
  EXPECT_FALSE(compare(i64({1}, {3}), i64({1}, {4})));
  EXPECT_TRUE(compare(i64({1}, {3}), i64({1}, {4}), Tolerance{1.0, 0.0}));
  EXPECT_EQ(default_tolerance(DType::Int32).absolute, 0.0);
}

TEST(Compare, NaNsAndInfinities) {
  const double nan = std::nan("");
  EXPECT_TRUE(compare(f32({2}, {nan, kInfinity}), f32({2}, {nan, kInfinity})));
  const Comparison one_nan = compare(f32({1}, {nan}), f32({1}, {1.0}));
  EXPECT_FALSE(one_nan);
  EXPECT_EQ(one_nan.max_abs_error, kInfinity);
  EXPECT_FALSE(compare(f32({1}, {kInfinity}), f32({1}, {-kInfinity})));
}

TEST(Compare, DifferentTypesAreAMismatch) {
  const Comparison shape = compare(f32({2}, {1, 2}), f32({1, 2}, {1, 2}));
  EXPECT_FALSE(shape);
  EXPECT_EQ(shape.str(), "type differs: float32(2) vs expected float32(1, 2)");
  EXPECT_FALSE(compare(i64({1}, {1}), f32({1}, {1})));
}

}  // namespace
}  // namespace dpl
