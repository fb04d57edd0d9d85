// Truncated and corrupted model files never crash the reader: each one reads, or fails with diagnostics.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "dpl/ir/analysis.h"
#include "text_test_util.h"

namespace dpl {
namespace {

using text_test::kModelDir;
using text_test::load_text;
using text_test::read_string;

// Either a well-formed module and no error, or no module and at least one error with a location.
void expect_clean_outcome(const std::string& text, const std::string& what) {
  auto result = read_string(text, "mutated.relax");
  if (result->module != nullptr) {
    EXPECT_FALSE(result->diags.has_errors()) << what;
    EXPECT_EQ(verify(*result->module), "") << what;
    // Whatever was read also prints and reads back.
    auto again = read_string(print_module(*result->module));
    EXPECT_NE(again->module, nullptr) << what << "\n" << again->diags.str();
  } else {
    ASSERT_TRUE(result->diags.has_errors()) << what;
    for (const Diagnostic& diag : result->diags.diagnostics()) {
      EXPECT_TRUE(diag.loc.valid()) << what << ": " << diag.message;
    }
    EXPECT_FALSE(result->diags.str().empty());
  }
}

TEST(Robustness, Truncations) {
  const std::string model = load_text(kModelDir + "/resnet50.relax");
  ASSERT_FALSE(model.empty());
  size_t failures = 0;
  for (size_t length = 0; length < model.size(); length += 97) {
    const std::string prefix = model.substr(0, length);
    expect_clean_outcome(prefix, "truncated at " + std::to_string(length));
    if (read_string(prefix)->module == nullptr) ++failures;
  }
  // A prefix cut inside the function cannot be a complete function.
  EXPECT_GT(failures, model.size() / 97 - 2);
}

TEST(Robustness, ByteMutations) {
  const std::string model = load_text(kModelDir + "/bert_base_uncased.relax");
  ASSERT_FALSE(model.empty());
  std::mt19937 random(20240611);
  const std::string interesting = "()[]{},:=.-@#\"'\n\t \\0123456789eRTx_\x80\xff";
  size_t failures = 0;
  for (int round = 0; round < 600; ++round) {
    std::string mutated = model;
    const int edits = 1 + round % 3;
    for (int i = 0; i < edits; ++i) {
      const size_t at = random() % mutated.size();
      switch (random() % 3) {
        case 0: mutated[at] = interesting[random() % interesting.size()]; break;
        case 1: mutated.erase(at, 1 + random() % 8); break;
        default: mutated.insert(at, 1, interesting[random() % interesting.size()]); break;
      }
    }
    expect_clean_outcome(mutated, "mutation round " + std::to_string(round));
    if (read_string(mutated)->module == nullptr) ++failures;
  }
  EXPECT_GT(failures, 0u);  // the mutations do break things; the point is that they break cleanly
}

TEST(Robustness, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string text = "@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\n    y = ";
  for (int i = 0; i < 100000; ++i) text += "(";
  text += "x";
  for (int i = 0; i < 100000; ++i) text += ")";
  text += "\n    return y\n";
  auto result = read_string(text);
  ASSERT_EQ(result->module, nullptr);
  EXPECT_EQ(result->diags.diagnostics()[0].message, "nested too deeply");
}

TEST(Robustness, BinaryGarbage) {
  std::mt19937 random(7);
  std::string garbage(20000, '\0');
  for (char& c : garbage) c = static_cast<char>(random() % 256);
  expect_clean_outcome(garbage, "random bytes");
  auto result = read_string(garbage);
  EXPECT_EQ(result->module, nullptr);
}

}  // namespace
}  // namespace dpl
