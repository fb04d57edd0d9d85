// Kernels of the neural-network and image ops (softmax, normalizations, convolution, transposed convolution, pooling,
// resizing, attention) against hand-computed values, and attention against its written-out definition evaluated by
// the interpreter itself.
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "interp_test_util.h"

namespace dpl {
namespace {

using interp_test::Doubles;
using interp_test::expect_f32;
using interp_test::f32;
using interp_test::Ints;
using interp_test::TestGraph;

TEST(Softmax, OfOneTwoThree) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {3});
  expect_f32(g.eval(g.b().call("nn.softmax", {x}), {f32({3}, {1, 2, 3})}), {3}, {0.09003057, 0.24472847, 0.66524096});
}

TEST(Softmax, IsStableForLargeInputsAndAlongAnAxis) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {3, 2});
  const Value out =
      g.eval(g.b().call("nn.softmax", {x}, {{"axis", int64_t{0}}}), {f32({3, 2}, {1000, 0, 1001, 0, 1002, 0})});
  expect_f32(out, {3, 2}, {0.09003057, 1.0 / 3, 0.24472847, 1.0 / 3, 0.66524096, 1.0 / 3});
}

TEST(LayerNorm, NormalizesTheLastAxisThenScalesAndShifts) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2, 3});
  Node* gamma = g.param("gamma", DType::Float32, {3});
  Node* beta = g.param("beta", DType::Float32, {3});
  Node* out = g.b().call("nn.layer_norm", {x, gamma, beta}, {{"axes", Ints{-1}}, {"epsilon", 0.0}});
  // Row [1, 2, 3]: mean 2, variance 2/3, so the normalized row is [-1.22474487, 0, 1.22474487].
  const Value value = g.eval(out, {f32({2, 3}, {1, 2, 3, 5, 5, 8}), f32({3}, {1, 2, 3}), f32({3}, {0.5, 0.5, 0.5})});
  // Row [5, 5, 8]: mean 6, variance 2, normalized [-0.70710678, -0.70710678, 1.41421356].
  expect_f32(value, {2, 3}, {-0.72474487, 0.5, 4.17423461, -0.20710678, -0.91421356, 4.74264069});
}

TEST(RmsNorm, DividesByTheRootMeanSquare) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {1, 2});
  Node* w = g.param("w", DType::Float32, {2});
  Node* out = g.b().call("nn.rms_norm", {x, w}, {{"epsilon", 0.0}});
  // mean square of [3, 4] is 12.5.
  expect_f32(g.eval(out, {f32({1, 2}, {3, 4}), f32({2}, {1, 2})}), {1, 2}, {0.84852814, 2.26274170});
}

TEST(GroupNorm, NormalizesEachGroupOfChannels) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {1, 4, 1, 2});
  Node* gamma = g.param("gamma", DType::Float32, {4});
  Node* beta = g.param("beta", DType::Float32, {4});
  Node* out =
      g.b().call("nn.group_norm", {x, gamma, beta},
                 {{"num_groups", int64_t{2}}, {"channel_axis", int64_t{1}}, {"axes", Ints{2, 3}}, {"epsilon", 0.0}});
  // Group 0 holds channels 0-1: [1, 3, 1, 3] (mean 2, variance 1); group 1 holds [0, 0, 4, 4] (mean 2, var 4).
  const Value value =
      g.eval(out, {f32({1, 4, 1, 2}, {1, 3, 1, 3, 0, 0, 4, 4}), f32({4}, {1, 1, 1, 2}), f32({4}, {0, 0, 0, 10})});
  expect_f32(value, {1, 4, 1, 2}, {-1, 1, -1, 1, -1, -1, 12, 12});  // channel 3: 1 * 2 + 10
}

TEST(BatchNorm, InferenceModeUsesTheMovingStatistics) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {1, 2, 1, 2});
  Node* gamma = g.param("gamma", DType::Float32, {2});
  Node* beta = g.param("beta", DType::Float32, {2});
  Node* mean = g.param("mean", DType::Float32, {2});
  Node* var = g.param("var", DType::Float32, {2});
  Node* bn = g.b().call("nn.batch_norm", {x, gamma, beta, mean, var},
                        {{"axis", int64_t{1}}, {"epsilon", 0.0}, {"training", false}});
  const Value value = g.eval(
      bn, {f32({1, 2, 1, 2}, {1, 2, 3, 4}), f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {1, 2}), f32({2}, {4, 1})});
  ASSERT_TRUE(value.is_tuple());
  ASSERT_EQ(value.fields().size(), 3u);
  // Channel 0: (x - 1) / 2; channel 1: (x - 2) / 1 * 2 + 1.
  expect_f32(value.fields()[0], {1, 2, 1, 2}, {0, 0.5, 3, 5});
  expect_f32(value.fields()[1], {2}, {1, 2});
  expect_f32(value.fields()[2], {2}, {4, 1});
}

TEST(BatchNorm, TrainingModeUsesTheBatchStatistics) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2, 1});
  Node* gamma = g.param("gamma", DType::Float32, {1});
  Node* beta = g.param("beta", DType::Float32, {1});
  Node* mean = g.param("mean", DType::Float32, {1});
  Node* var = g.param("var", DType::Float32, {1});
  Node* bn = g.b().call("nn.batch_norm", {x, gamma, beta, mean, var},
                        {{"epsilon", 0.0}, {"training", true}, {"momentum", 0.5}});
  // The batch [1, 3] has mean 2 and variance 1.
  const Value value = g.eval(bn, {f32({2, 1}, {1, 3}), f32({1}, {1}), f32({1}, {0}), f32({1}, {10}), f32({1}, {5})});
  ASSERT_TRUE(value.is_tuple());
  expect_f32(value.fields()[0], {2, 1}, {-1, 1});
  expect_f32(value.fields()[1], {1}, {6});  // 0.5 * 10 + 0.5 * 2
  expect_f32(value.fields()[2], {1}, {3});  // 0.5 * 5 + 0.5 * 1
}

TEST(BiasAdd, AddsAlongTheChannelAxis) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {1, 2, 2});
  Node* bias = g.param("bias", DType::Float32, {2});
  expect_f32(g.eval(g.b().call("nn.bias_add", {x, bias}), {f32({1, 2, 2}, {1, 2, 3, 4}), f32({2}, {10, 20})}),
             {1, 2, 2}, {11, 12, 23, 24});
}

// --- convolution ----------------------------------------------------------------------------------------------

const Tensor kImage = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

// `op` (nn.conv2d or nn.conv2d_transpose) of `data` and `weight`.
Value convolution(const std::string& op, const Tensor& data, const Tensor& weight, std::vector<Builder::KwArg> attrs) {
  TestGraph g;
  Node* x = g.param("x", data);
  Node* w = g.param("w", weight);
  return g.eval(g.b().call(op, {x, w}, attrs), {data, weight});
}

Value conv2d(const Tensor& data, const Tensor& weight, std::vector<Builder::KwArg> attrs) {
  return convolution("nn.conv2d", data, weight, std::move(attrs));
}

TEST(Conv2d, DiagonalDifferenceKernel) {
  // out[i][j] = x[i][j] - x[i+1][j+1] = -4 everywhere.
  expect_f32(conv2d(kImage, f32({1, 1, 2, 2}, {1, 0, 0, -1}), {}), {1, 1, 2, 2}, {-4, -4, -4, -4});
}

TEST(Conv2d, PaddingAndStride) {
  // A 3x3 box sum with padding 1 and stride 2 samples the corners' neighbourhoods.
  const Tensor ones = f32({1, 1, 3, 3}, Doubles(9, 1.0));
  expect_f32(conv2d(kImage, ones, {{"padding", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}), {1, 1, 2, 2},
             {12, 16, 24, 28});
}

TEST(Conv2d, Dilation) {
  // A 2x2 kernel dilated by 2 reads the four corners.
  expect_f32(conv2d(kImage, f32({1, 1, 2, 2}, {1, 10, 100, 1000}), {{"dilation", Ints{2, 2}}}), {1, 1, 1, 1},
             {1 + 30 + 700 + 9000});
}

TEST(Conv2d, GroupsConvolveChannelsSeparately) {
  const Tensor data = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  const Tensor weight = f32({2, 1, 1, 1}, {10, 100});  // depthwise: one 1x1 kernel per channel
  expect_f32(conv2d(data, weight, {{"groups", int64_t{2}}}), {1, 2, 1, 2}, {10, 20, 300, 400});
}

TEST(Conv2d, MultipleInputAndOutputChannels) {
  const Tensor data = f32({1, 2, 1, 1}, {1, 2});
  const Tensor weight = f32({3, 2, 1, 1}, {1, 0, 0, 1, 1, 1});
  expect_f32(conv2d(data, weight, {}), {1, 3, 1, 1}, {1, 2, 3});
}

TEST(Conv2d, NhwcOhwiMatchesNchwOihw) {
  const Tensor data = Tensor::random(DType::Float32, {1, 3, 5, 4}, 1);
  const Tensor weight = Tensor::random(DType::Float32, {2, 3, 3, 2}, 2);
  const std::vector<Builder::KwArg> geometry = {{"padding", Ints{1, 0, 1, 1}}, {"strides", Ints{1, 2}}};
  const Value nchw = conv2d(data, weight, geometry);

  TestGraph g;
  Node* x = g.param("x", data);
  Node* w = g.param("w", weight);
  Node* x_nhwc = g.b().call("permute_dims", {x}, {{"axes", Ints{0, 2, 3, 1}}});
  Node* w_ohwi = g.b().call("permute_dims", {w}, {{"axes", Ints{0, 2, 3, 1}}});
  Node* conv = g.b().call("nn.conv2d", {x_nhwc, w_ohwi},
                          {{"padding", Ints{1, 0, 1, 1}},
                           {"strides", Ints{1, 2}},
                           {"data_layout", std::string("NHWC")},
                           {"kernel_layout", std::string("OHWI")},
                           {"out_layout", std::string("NCHW")}});
  const Value nhwc = g.eval(conv, {data, weight});
  const ValueComparison same = compare(nhwc, nchw, Tolerance{1e-6, 0.0});
  EXPECT_TRUE(same) << same.str();
}

TEST(Conv1d, SlidingSum) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {1, 1, 4});
  Node* w = g.param("w", DType::Float32, {1, 1, 2});
  const Value out = g.eval(g.b().call("nn.conv1d", {x, w}, {{"padding", Ints{1, 0}}}),
                           {f32({1, 1, 4}, {1, 2, 3, 4}), f32({1, 1, 2}, {1, 1})});
  expect_f32(out, {1, 1, 4}, {1, 3, 5, 7});
}

// --- transposed convolution -----------------------------------------------------------------------------------

Value conv2d_transpose(const Tensor& data, const Tensor& weight, std::vector<Builder::KwArg> attrs) {
  return convolution("nn.conv2d_transpose", data, weight, std::move(attrs));
}

TEST(Conv2dTranspose, StrideTwoStampsTheKernelPerInputPixel) {
  const Tensor data = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor kernel = f32({1, 1, 2, 2}, {1, 10, 100, 1000});
  expect_f32(conv2d_transpose(data, kernel, {{"strides", Ints{2, 2}}}), {1, 1, 4, 4},
             {1, 10, 2, 20, 100, 1000, 200, 2000, 3, 30, 4, 40, 300, 3000, 400, 4000});
}

TEST(Conv2dTranspose, OverlapsAddAndPaddingCropsAndOutputPaddingExtends) {
  const Tensor data = f32({1, 1, 1, 2}, {1, 2});
  const Tensor kernel = f32({1, 1, 1, 2}, {1, 10});
  // Stride 1: the two stamps overlap in the middle column.
  expect_f32(conv2d_transpose(data, kernel, {}), {1, 1, 1, 3}, {1, 12, 20});
  expect_f32(conv2d_transpose(data, kernel, {{"padding", Ints{0, 1, 0, 1}}}), {1, 1, 1, 1}, {12});
  // Stride 2 with output_padding 1: one more column of zeros at the end.
  expect_f32(conv2d_transpose(data, kernel, {{"strides", Ints{1, 2}}, {"output_padding", Ints{0, 1}}}), {1, 1, 1, 5},
             {1, 10, 2, 20, 0});
}

TEST(Conv2dTranspose, GroupsKeepChannelsApart) {
  const Tensor data = f32({1, 2, 1, 1}, {1, 2});
  const Tensor kernel = f32({2, 2, 1, 1}, {1, 10, 100, 1000});  // IOHW: channel c feeds outputs 2c, 2c + 1
  expect_f32(conv2d_transpose(data, kernel, {{"groups", int64_t{2}}}), {1, 4, 1, 1}, {1, 10, 200, 2000});
}

// conv2d_transpose is the adjoint of conv2d with the same weight: <conv2d(x, w), y> = <x, conv2d_transpose(y, w)>.
TEST(Conv2dTranspose, IsTheAdjointOfConv2d) {
  const Tensor x = Tensor::random(DType::Float32, {1, 3, 7, 6}, 1);
  const Tensor w = Tensor::random(DType::Float32, {4, 3, 3, 2}, 2);
  const Tensor y = Tensor::random(DType::Float32, {1, 4, 4, 5}, 3);
  const std::vector<Builder::KwArg> geometry = {
      {"strides", Ints{2, 1}}, {"padding", Ints{1, 0, 1, 1}}, {"dilation", Ints{1, 2}}};
  const Value forward = conv2d(x, w, geometry);
  const Value backward = conv2d_transpose(y, w, geometry);
  ASSERT_EQ(forward.tensor().shape(), y.shape());
  ASSERT_EQ(backward.tensor().shape(), x.shape());
  double lhs = 0.0, rhs = 0.0;
  for (int64_t i = 0; i < y.num_elements(); ++i) lhs += forward.tensor().at(i) * y.at(i);
  for (int64_t i = 0; i < x.num_elements(); ++i) rhs += x.at(i) * backward.tensor().at(i);
  EXPECT_NEAR(lhs, rhs, 1e-4 * (std::fabs(lhs) + 1.0));
}

// --- resizing -------------------------------------------------------------------------------------------------

Value resize(const Tensor& data, Ints size, std::vector<Builder::KwArg> attrs) {
  TestGraph g;
  Node* x = g.param("x", data);
  return g.eval(g.b().call("image.resize2d", {x, g.b().shape(size)}, attrs), {data});
}

TEST(Resize2d, NearestAsymmetricFloorRepeatsPixels) {
  expect_f32(resize(f32({1, 1, 2, 2}, {1, 2, 3, 4}), {4, 4},
                    {{"method", std::string("nearest_neighbor")},
                     {"coordinate_transformation_mode", std::string("asymmetric")},
                     {"rounding_method", std::string("floor")}}),
             {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(Resize2d, NearestRoundingModesBreakTiesTheirWay) {
  // 2 -> 4 asymmetric samples 0, 0.5, 1, 1.5 (the last clamped into the image).
  auto nearest = [](const std::string& rounding) {
    return resize(f32({1, 1, 1, 2}, {10, 20}), {1, 4},
                  {{"method", std::string("nearest_neighbor")},
                   {"coordinate_transformation_mode", std::string("asymmetric")},
                   {"rounding_method", rounding}});
  };
  expect_f32(nearest("round_prefer_floor"), {1, 1, 1, 4}, {10, 10, 20, 20});
  expect_f32(nearest("round_prefer_ceil"), {1, 1, 1, 4}, {10, 20, 20, 20});
  expect_f32(nearest("round"), {1, 1, 1, 4}, {10, 10, 20, 20});  // half to even
  expect_f32(nearest("ceil"), {1, 1, 1, 4}, {10, 20, 20, 20});
}

TEST(Resize2d, LinearCoordinateModes) {
  const Tensor row = f32({1, 1, 1, 2}, {0, 4});
  // half_pixel samples -0.25, 0.25, 0.75, 1.25; outside the image the edge value holds.
  expect_f32(resize(row, {1, 4}, {}), {1, 1, 1, 4}, {0, 1, 3, 4});
  expect_f32(resize(row, {1, 3}, {{"coordinate_transformation_mode", std::string("align_corners")}}), {1, 1, 1, 3},
             {0, 2, 4});
  expect_f32(resize(row, {1, 4}, {{"coordinate_transformation_mode", std::string("asymmetric")}}), {1, 1, 1, 4},
             {0, 2, 4, 4});
  // pytorch_half_pixel maps an output of extent 1 to coordinate 0; half_pixel to the middle.
  expect_f32(resize(row, {1, 1}, {{"coordinate_transformation_mode", std::string("pytorch_half_pixel")}}),
             {1, 1, 1, 1}, {0});
  expect_f32(resize(row, {1, 1}, {}), {1, 1, 1, 1}, {2});
}

TEST(Resize2d, CubicWeightsOfAlphaMinusThreeQuarters) {
  // Asymmetric 4 -> 8 samples i / 2. At 0.5 the taps -1 (clamped to 0), 0, 1, 2 weigh W(1.5) = -0.09375,
  // W(0.5) = 0.59375, W(0.5), W(1.5); at 1.5 the ramp is reproduced exactly.
  const Value out = resize(f32({1, 1, 1, 4}, {0, 1, 2, 3}), {1, 8},
                           {{"method", std::string("cubic")},
                            {"coordinate_transformation_mode", std::string("asymmetric")}});
  EXPECT_NEAR(out.tensor().at(1), 0.59375 - 2 * 0.09375, 1e-6);
  EXPECT_NEAR(out.tensor().at(3), 1.5, 1e-6);
  // Excluding the outside tap renormalizes: at 0.5 the weights are those of taps 0, 1, 2 over their sum.
  const Value excluded = resize(f32({1, 1, 1, 4}, {0, 1, 2, 3}), {1, 8},
                                {{"method", std::string("cubic")},
                                 {"coordinate_transformation_mode", std::string("asymmetric")},
                                 {"cubic_exclude", int64_t{1}}});
  EXPECT_NEAR(excluded.tensor().at(1), (0.59375 - 2 * 0.09375) / (1 + 0.09375), 1e-6);
}

TEST(Resize2d, NhwcLayoutAndOutDtype) {
  const Tensor nhwc = f32({1, 1, 2, 2}, {1, 10, 2, 20});  // channel 0: 1, 2; channel 1: 10, 20
  const Value out = resize(nhwc, {1, 4},
                           {{"layout", std::string("NHWC")},
                            {"method", std::string("nearest_neighbor")},
                            {"coordinate_transformation_mode", std::string("asymmetric")},
                            {"rounding_method", std::string("floor")},
                            {"out_dtype", std::string("float16")}});
  EXPECT_EQ(out.tensor().dtype(), DType::Float16);
  EXPECT_EQ(out.tensor().shape(), (Ints{1, 1, 4, 2}));
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(out.tensor().at(i), (Doubles{1, 10, 1, 10, 2, 20, 2, 20}[i])) << i;
}

// --- pooling --------------------------------------------------------------------------------------------------

const Tensor kSixteen = f32({1, 1, 4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});

Value pool(const std::string& op, const Tensor& data, std::vector<Builder::KwArg> attrs) {
  TestGraph g;
  Node* x = g.param("x", data);
  return g.eval(g.b().call(op, {x}, attrs), {data});
}

TEST(Pool2d, MaxPool) {
  expect_f32(pool("nn.max_pool2d", kSixteen, {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}}), {1, 1, 2, 2},
             {5, 7, 13, 15});
  // ResNet's stem: 3x3 windows, stride 2, padding 1 (padding never wins the max).
  expect_f32(pool("nn.max_pool2d", f32({1, 1, 4, 4}, Doubles(16, -1.0)),
                  {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}}),
             {1, 1, 2, 2}, {-1, -1, -1, -1});
}

TEST(Pool2d, AvgPoolWithAndWithoutPadding) {
  expect_f32(pool("nn.avg_pool2d", kSixteen, {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}}), {1, 1, 2, 2},
             {2.5, 4.5, 10.5, 12.5});
  // Top-left window of a padded 3x3 pool covers 4 image cells (0, 1, 4, 5) out of 9.
  const std::vector<Builder::KwArg> padded = {
      {"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}};
  const Value excluding = pool("nn.avg_pool2d", kSixteen, padded);
  EXPECT_NEAR(excluding.tensor().at(0), 10.0 / 4, 1e-6);
  std::vector<Builder::KwArg> including = padded;
  including.emplace_back("count_include_pad", true);
  EXPECT_NEAR(pool("nn.avg_pool2d", kSixteen, including).tensor().at(0), 10.0 / 9, 1e-6);
}

TEST(Pool2d, NhwcLayout) {
  const Tensor nhwc = f32({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});  // channel 0: 1..4, channel 1: 10..40
  expect_f32(pool("nn.max_pool2d", nhwc, {{"pool_size", Ints{2, 2}}, {"layout", std::string("NHWC")}}), {1, 1, 1, 2},
             {4, 40});
}

TEST(AdaptiveAvgPool2d, GlobalAndOverlappingBins) {
  expect_f32(pool("nn.adaptive_avg_pool2d", kSixteen, {{"output_size", Ints{1, 1}}}), {1, 1, 1, 1}, {7.5});
  // 3x3 -> 2x2: rows and columns [0, 2) and [1, 3).
  expect_f32(pool("nn.adaptive_avg_pool2d", kImage, {{"output_size", Ints{2, 2}}}), {1, 1, 2, 2}, {3, 4, 6, 7});
}

// --- attention ------------------------------------------------------------------------------------------------

// softmax(q kᵀ * scale + bias) v, written out in Relax ops the way the models do it.
Node* written_out_attention(Builder& b, Node* q, Node* k, Node* v, double scale, Node* bias) {
  const Ints to_bnsh = {0, 2, 1, 3};
  Node* qt = b.call("permute_dims", {q}, {{"axes", to_bnsh}});
  Node* kt = b.call("permute_dims", {k}, {{"axes", Ints{0, 2, 3, 1}}});
  Node* vt = b.call("permute_dims", {v}, {{"axes", to_bnsh}});
  Node* scores = b.call("multiply", {b.call("matmul", {qt, kt}), b.scalar(scale)});
  if (bias != nullptr) scores = b.call("add", {scores, bias});
  Node* probabilities = b.call("nn.softmax", {scores}, {{"axis", int64_t{-1}}});
  return b.call("permute_dims", {b.call("matmul", {probabilities, vt})}, {{"axes", to_bnsh}});
}

struct AttentionInputs {
  Tensor q, k, v;
};

AttentionInputs attention_inputs(int64_t seq, int64_t seq_kv) {
  return {Tensor::random(DType::Float32, {2, seq, 3, 4}, 11), Tensor::random(DType::Float32, {2, seq_kv, 3, 4}, 12),
          Tensor::random(DType::Float32, {2, seq_kv, 3, 5}, 13)};
}

TEST(Attention, EqualsTheWrittenOutFormula) {
  const AttentionInputs in = attention_inputs(6, 7);
  TestGraph fused;
  Node* q = fused.param("q", in.q);
  Node* k = fused.param("k", in.k);
  Node* v = fused.param("v", in.v);
  const Value actual = fused.eval(fused.b().call("nn.attention", {q, k, v}), {in.q, in.k, in.v});

  TestGraph unfused;
  Node* q2 = unfused.param("q", in.q);
  Node* k2 = unfused.param("k", in.k);
  Node* v2 = unfused.param("v", in.v);
  const Value reference =
      unfused.eval(written_out_attention(unfused.b(), q2, k2, v2, 0.5, nullptr), {in.q, in.k, in.v});  // 1/sqrt(4)

  ASSERT_EQ(actual.tensor().shape(), (Ints{2, 6, 3, 5}));
  const ValueComparison same = compare(actual, reference);
  EXPECT_TRUE(same) << same.str();
}

TEST(Attention, SwappingKeyAndValueIsCaught) {
  // The seed's mistake: attention(q, v, k) where k and v have the same shape computes something else.
  const Tensor q = Tensor::random(DType::Float32, {1, 4, 2, 8}, 1);
  const Tensor k = Tensor::random(DType::Float32, {1, 4, 2, 8}, 2);
  const Tensor v = Tensor::random(DType::Float32, {1, 4, 2, 8}, 3);
  TestGraph right;
  const Value good = right.eval(
      right.b().call("nn.attention", {right.param("q", q), right.param("k", k), right.param("v", v)}), {q, k, v});
  TestGraph swapped;
  Node* sq = swapped.param("q", q);
  Node* sk = swapped.param("k", k);
  Node* sv = swapped.param("v", v);
  const Value bad = swapped.eval(swapped.b().call("nn.attention", {sq, sv, sk}), {q, k, v});
  EXPECT_FALSE(compare(bad, good));
}

TEST(Attention, ScaleAndBiasMatchTheWrittenOutFormula) {
  const AttentionInputs in = attention_inputs(5, 5);
  const Tensor bias = Tensor::random(DType::Float32, {1, 3, 5, 5}, 14);
  TestGraph fused;
  Node* q = fused.param("q", in.q);
  Node* k = fused.param("k", in.k);
  Node* v = fused.param("v", in.v);
  Node* b = fused.param("bias", bias);
  const Value actual =
      fused.eval(fused.b().call("nn.attention", {q, k, v, b}, {{"scale", 0.25}}), {in.q, in.k, in.v, bias});

  TestGraph unfused;
  Node* q2 = unfused.param("q", in.q);
  Node* k2 = unfused.param("k", in.k);
  Node* v2 = unfused.param("v", in.v);
  Node* b2 = unfused.param("bias", bias);
  const Value reference =
      unfused.eval(written_out_attention(unfused.b(), q2, k2, v2, 0.25, b2), {in.q, in.k, in.v, bias});
  const ValueComparison same = compare(actual, reference);
  EXPECT_TRUE(same) << same.str();
}

// A causal mask equals an additive bias of -inf where key t > query s + offset.
void expect_causal_mask_matches_bias(const std::string& mode, int64_t seq, int64_t seq_kv, int64_t offset) {
  const AttentionInputs in = attention_inputs(seq, seq_kv);
  std::vector<double> mask_values;
  for (int64_t s = 0; s < seq; ++s) {
    for (int64_t t = 0; t < seq_kv; ++t) {
      mask_values.push_back(t <= s + offset ? 0.0 : -std::numeric_limits<double>::infinity());
    }
  }
  const Tensor mask = f32({1, 1, seq, seq_kv}, mask_values);
  TestGraph fused;
  Node* q = fused.param("q", in.q);
  Node* k = fused.param("k", in.k);
  Node* v = fused.param("v", in.v);
  const Value actual =
      fused.eval(fused.b().call("nn.attention", {q, k, v}, {{"causal_mask", mode}}), {in.q, in.k, in.v});

  TestGraph unfused;
  Node* q2 = unfused.param("q", in.q);
  Node* k2 = unfused.param("k", in.k);
  Node* v2 = unfused.param("v", in.v);
  Node* m = unfused.param("mask", mask);
  const Value reference =
      unfused.eval(written_out_attention(unfused.b(), q2, k2, v2, 0.5, m), {in.q, in.k, in.v, mask});
  const ValueComparison same = compare(actual, reference);
  EXPECT_TRUE(same) << mode << ": " << same.str();
}

TEST(Attention, CausalMasks) {
  expect_causal_mask_matches_bias("TopLeft", 4, 6, 0);
  expect_causal_mask_matches_bias("BottomRight", 4, 6, 2);
}

}  // namespace
}  // namespace dpl
