// Read → print → read gives a structurally equal module, and printing again gives identical text (a fixed point),
// for the seed snippets and the four real models in the shared model directory.
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dpl/ir/analysis.h"
#include "dpl/support/format.h"
#include "text_test_util.h"

namespace dpl {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define DPL_TEXT_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DPL_TEXT_TEST_SANITIZED 1
#endif
#if defined(__OPTIMIZE__) && !defined(DPL_TEXT_TEST_SANITIZED)
constexpr bool kTimingIsMeaningful = true;
#else
constexpr bool kTimingIsMeaningful = false;
#endif

using text_test::kDataDir;
using text_test::kModelDir;
using text_test::read_file;
using text_test::read_string;

void expect_round_trip(const text_test::ReadResult& first) {
  ASSERT_NE(first.module, nullptr) << first.diags.str();
  EXPECT_EQ(verify(*first.module), "");
  const std::string printed = print_module(*first.module);
  auto second = read_string(printed, "printed.relax");
  ASSERT_NE(second->module, nullptr) << second->diags.str() << "\n" << printed.substr(0, 2000);
  const EqualityResult equal = structurally_equal(*first.module, *second->module);
  EXPECT_TRUE(equal.equal) << equal.difference;
  EXPECT_EQ(print_module(*second->module), printed);
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, PrintReadsBackEqualAndIsAFixedPoint) { expect_round_trip(*read_file(GetParam())); }

const std::vector<std::string> kModels = {
    kModelDir + "/bert_base_uncased.relax", kModelDir + "/tinyllama_1_1b_chat.relax",
    kModelDir + "/resnet50.relax", kModelDir + "/vit_base_patch16_224.relax"};

std::string file_stem(const ::testing::TestParamInfo<std::string>& info) {
  const std::string& path = info.param;
  const size_t slash = path.rfind('/');
  return path.substr(slash + 1, path.rfind('.') - slash - 1);
}

INSTANTIATE_TEST_SUITE_P(Models, RoundTrip, ::testing::ValuesIn(kModels), file_stem);

INSTANTIATE_TEST_SUITE_P(
    Seeds, RoundTrip,
    ::testing::Values(kDataDir + "/seed000_add_input.relax", kDataDir + "/seed000_add_shown.relax",
                      kDataDir + "/seed000_add_rewritten_x2.relax", kDataDir + "/seed000_add_rewritten_x4.relax",
                      kDataDir + "/seed000_attention_input.relax", kDataDir + "/seed000_attention_shown.relax",
                      kDataDir + "/seed000_attention_rewritten.relax", kDataDir + "/seed000_commutative_input.relax",
                      kDataDir + "/seed000_commutative_shown.relax",
                      kDataDir + "/seed000_commutative_rewritten.relax", kDataDir + "/seed000_repeated_input.relax",
                      kDataDir + "/seed000_repeated_shown.relax", kDataDir + "/seed000_repeated_rewritten.relax",
                      kDataDir + "/seed003_mlp_params.relax", kDataDir + "/module_composite.relax",
                      kDataDir + "/symbolic_expressions.relax"),
    file_stem);

// The model files are written the way TVM prints, so our printer reproduces them line by line except for the
// three differences the models' README lists: their header comments, attributes the converter left at their
// defaults (take's mode="fast", strided_slice's assume_inbound=False; we print every attribute, as TVM does),
// and float32 constants, which TVM and we print at full precision (1e-05 is 9.999999747378752e-06 in float32).
std::string as_printed(const std::string& model_text) {
  std::istringstream lines(model_text);
  std::string out, line;
  while (std::getline(lines, line)) {
    if (line.starts_with("# ") && !line.starts_with("# from tvm.script")) continue;
    for (size_t at = line.find("R.const("); at != std::string::npos; at = line.find("R.const(", at + 1)) {
      const size_t begin = at + 8;
      const size_t comma = line.find(", \"float32\")", begin);
      if (comma == std::string::npos) continue;
      const double value = static_cast<float>(std::strtod(line.substr(begin, comma - begin).c_str(), nullptr));
      line.replace(begin, comma - begin, format_double_like_python(value));
    }
    out += line + "\n";
  }
  return out;
}

std::string without_default_attributes(std::string text) {
  for (const std::string attribute : {", mode=\"fast\"", ", assume_inbound=False"}) {
    for (size_t at = text.find(attribute); at != std::string::npos; at = text.find(attribute, at)) {
      text.erase(at, attribute.size());
    }
  }
  return text;
}

// The upsampling ops of imported detection networks, as TVM spells them (image.resize2d's size is a shape
// literal; its roi is not modelled), with and without their default attributes.
TEST(RoundTripOps, ResizeAndTransposedConvolution) {
  auto result = read_string(R"(# from tvm.script import relax as R

@R.function
def main(x: R.Tensor((1, 24, 8, 8), dtype="float32"), w: R.Tensor((24, 4, 2, 2), dtype="float32")) -> R.Tensor((1, 4, 32, 32), dtype="float32"):
    up: R.Tensor((1, 24, 16, 16), dtype="float32") = R.image.resize2d(x, R.shape([16, 16]), method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="floor")
    y: R.Tensor((1, 4, 32, 32), dtype="float32") = R.nn.conv2d_transpose(up, w, strides=[2, 2], padding=[0, 0, 0, 0], output_padding=[0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="IOHW", out_layout="NCHW", out_dtype="void")
    return y
)",
                            "upsample.relax");
  expect_round_trip(*result);
  ASSERT_NE(result->module, nullptr);
  EXPECT_NE(print_module(*result->module).find(
                "R.image.resize2d(x, R.shape([16, 16]), layout=\"NCHW\", method=\"nearest_neighbor\", "
                "coordinate_transformation_mode=\"asymmetric\", rounding_method=\"floor\", cubic_alpha=-0.75, "
                "cubic_exclude=0, extrapolation_value=0.0, out_dtype=\"void\")"),
            std::string::npos)
      << print_module(*result->module);
}

// Extents that are expressions (`n * 48`, `(h - 1) // 2 + 1`), quoted in the signature and bare in the body, print
// back byte for byte when written as TVM prints them; another spelling of the same extent prints canonically.
TEST(RoundTripOps, SymbolicExpressionsPrintAsWritten) {
  const std::string path = kDataDir + "/symbolic_expressions.relax";
  auto result = read_file(path);
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  EXPECT_EQ(print_module(*result->module), text_test::load_text(path));

  auto respelled = read_string(R"(@R.function
def main(x: R.Tensor(("n", 48), "float32")) -> R.Tensor(("48 * n",), "float32"):
    n = T.int64()
    y: R.Tensor((2 * (n * 24) + 0,), "float32") = R.reshape(x, R.shape([48*n]))
    return y
)",
                               "respelled.relax");
  ASSERT_NE(respelled->module, nullptr) << respelled->diags.str();
  const std::string printed = print_module(*respelled->module);
  EXPECT_NE(printed.find("-> R.Tensor((\"n * 48\",), dtype=\"float32\"):"), std::string::npos) << printed;
  EXPECT_NE(printed.find("y: R.Tensor((n * 48,), dtype=\"float32\") = R.reshape(x, R.shape([n * 48]))"),
            std::string::npos)
      << printed;
}

class ModelText : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelText, PrintsAsWritten) {
  auto result = read_file(GetParam());
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  EXPECT_EQ(without_default_attributes(print_module(*result->module)), as_printed(text_test::load_text(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(Models, ModelText, ::testing::ValuesIn(kModels), file_stem);

// A synthetic chain of 100,000 bindings (the size of a large model) reads fast and round-trips.
TEST(RoundTripLarge, HundredThousandBindings) {
  constexpr int kBindings = 100000;
  std::string text =
      "@R.function\n"
      "def main(x: R.Tensor((1, 64), dtype=\"float32\"), w: R.Tensor((64, 64), dtype=\"float32\")) -> "
      "R.Tensor((1, 64), dtype=\"float32\"):\n"
      "    with R.dataflow():\n"
      "        lv0: R.Tensor((1, 64), dtype=\"float32\") = R.add(x, x)\n";
  const std::string type = ": R.Tensor((1, 64), dtype=\"float32\") = ";
  for (int i = 1; i < kBindings; ++i) {
    const std::string prev = "lv" + std::to_string(i - 1);
    text += "        lv" + std::to_string(i) + type;
    switch (i % 4) {
      case 0: text += "R.matmul(" + prev + ", w, out_dtype=\"void\")\n"; break;
      case 1: text += "R.multiply(" + prev + ", R.const(0.125, \"float32\"))\n"; break;
      case 2: text += "R.nn.softmax(" + prev + ", axis=-1)\n"; break;
      default: text += "R.add(" + prev + ", x)\n"; break;
    }
  }
  const std::string last = "lv" + std::to_string(kBindings - 1);
  text += "        R.output(" + last + ")\n    return " + last + "\n";
  const auto start = std::chrono::steady_clock::now();
  auto result = read_string(text);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_NE(result->module, nullptr) << result->diags.str();
  EXPECT_EQ(result->module->functions()[0]->num_live_nodes(), 2u + kBindings + kBindings / 4);
  // Measured at about 0.2 s (optimized); the bound leaves room for a loaded machine. Debug and sanitizer builds
  // are several times slower by design, so there the time is only recorded.
  RecordProperty("read_seconds", std::to_string(seconds));
  if (kTimingIsMeaningful) {
    EXPECT_LT(seconds, 1.0);
  }
  expect_round_trip(*result);
}

}  // namespace
}  // namespace dpl
