// Seed 002's multi-root and group rules on generated graphs: a group of 32 parallel matmuls, groups of 22 and 3
// in one function, two separate QKV triples, and graphs where the guard (shape, constness, group size) does not
// fit. Each pass runs with the verifier after every rewrite; each rewritten graph computes what the input did.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "combine_branches.dpl.h"
#include "combine_parallel_matmuls.dpl.h"
#include "combine_qkv.dpl.h"
#include "example_support.h"

namespace dpl::example_test {
namespace {

using namespace dpl_passes;

std::string tensor(const std::string& shape) { return "R.Tensor((" + shape + "), dtype=\"float32\")"; }

// A function of parameters `params` whose dataflow block holds `bindings` and returns the concat (axis 1) of the
// values named in `outputs`, `width` columns wide in all.
std::string function_text(const std::string& params, const std::string& bindings, const std::string& outputs,
                          int width) {
  return "@R.function\ndef main(" + params + ") -> " + tensor("2, " + std::to_string(width)) +
         ":\n    with R.dataflow():\n" + bindings + "        out: " + tensor("2, " + std::to_string(width)) +
         " = R.concat((" + outputs + (outputs.find(',') == std::string::npos ? "," : "") +
         "), axis=1)\n        R.output(out)\n    return out\n";
}

// `count` matmuls of parameter `input` (2x8) with parameter weights `<prefix>i` of 8 x (1 + i % 3) columns.
struct Fan {
  std::string params;
  std::string bindings;
  std::string outputs;
  int width = 0;
};
void add_fan(Fan& fan, const std::string& input, const std::string& prefix, int count, int rank = 2) {
  fan.params += (fan.params.empty() ? "" : ", ") + input + ": " + tensor("2, 8");
  for (int i = 0; i < count; ++i) {
    int columns = 1 + i % 3;
    std::string weight = prefix + std::to_string(i);
    std::string shape = rank == 2 ? "8, " + std::to_string(columns) : "1, 8, " + std::to_string(columns);
    std::string result_shape = rank == 2 ? "2, " + std::to_string(columns) : "1, 2, " + std::to_string(columns);
    fan.params += ", " + weight + ": " + tensor(shape);
    std::string name = prefix + "_mm" + std::to_string(i);
    fan.bindings += "        " + name + ": " + tensor(result_shape) + " = R.matmul(" + input + ", " + weight +
                    ", out_dtype=\"void\")\n";
    if (rank == 3) {
      std::string flat = name + "_2d";
      fan.bindings += "        " + flat + ": " + tensor("2, " + std::to_string(columns)) + " = R.reshape(" + name +
                      ", R.shape([2, " + std::to_string(columns) + "]))\n";
      name = flat;
    }
    fan.outputs += (fan.outputs.empty() ? "" : ", ") + name;
    fan.width += columns;
  }
}

size_t count_calls(const Module& module, OpId op) {
  size_t count = 0;
  for (const Node* node : main_function(module)->nodes()) count += node->is_call_of(op) && !node->is_dead() ? 1 : 0;
  return count;
}

struct GroupCase {
  const char* name;
  const PassDef& (*pass)();
  std::vector<std::pair<int, int>> fans;  // (members, weight rank) per shared input
  uint64_t rewrites;
  size_t matmuls_after;
};

void PrintTo(const GroupCase& group, std::ostream* out) { *out << group.name; }

class Seed002Groups : public ::testing::TestWithParam<GroupCase> {};

TEST_P(Seed002Groups, CombinesEveryFittingGroupAndKeepsTheValues) {
  const GroupCase& group = GetParam();
  Fan fan;
  for (size_t i = 0; i < group.fans.size(); ++i) {
    add_fan(fan, "x" + std::to_string(i), "w" + std::to_string(i) + "_", group.fans[i].first, group.fans[i].second);
  }
  const std::string text = function_text(fan.params, fan.bindings, fan.outputs, fan.width);
  Loaded original = parse_text(text, std::string(group.name) + ".relax");
  Loaded rewritten = parse_text(text, std::string(group.name) + ".relax");
  ASSERT_TRUE(original && rewritten);
  EXPECT_EQ(run_verified(group.pass(), *rewritten.module).rewrites, group.rewrites) << text;
  EXPECT_EQ(count_calls(*rewritten.module, op::matmul), group.matmuls_after);
  EXPECT_TRUE(verifies_and_rereads(*rewritten.module));
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 2));
}

INSTANTIATE_TEST_SUITE_P(
    Seed002, Seed002Groups,
    ::testing::Values(
        // The seed's Stable Diffusion UNet sizes: one group of 32; groups of 22 and 3 in one function.
        GroupCase{"group_of_32", seed002_combine_parallel_matmuls_pass, {{32, 2}}, 1, 1},
        GroupCase{"groups_of_22_and_3", seed002_combine_parallel_matmuls_pass, {{22, 2}, {3, 2}}, 2, 2},
        // Two separate QKV triples, each rewritten by the three-root rule.
        GroupCase{"two_qkv_triples", seed002_combine_qkv_pass, {{3, 2}, {3, 2}}, 2, 2},
        // A lone matmul is no group; 3-D weights do not fit the guard (w.rank == 2).
        GroupCase{"lone_matmul", seed002_combine_parallel_matmuls_pass, {{1, 2}}, 0, 1},
        GroupCase{"weights_of_rank_3", seed002_combine_parallel_matmuls_pass, {{4, 3}}, 0, 4},
        GroupCase{"qkv_weights_of_rank_3", seed002_combine_qkv_pass, {{3, 3}}, 0, 3},
        // Parameter weights are not constants: the constant-weight rules do not fire.
        GroupCase{"parameter_weights_with_bias_rule", seed002_combine_branches_pass, {{3, 2}}, 0, 3}),
    [](const ::testing::TestParamInfo<GroupCase>& info) { return std::string(info.param.name); });

// Two matmuls with constant weights and one with a parameter weight share x: the constant-weight rule combines
// the two; the parameter-weight rule finds a group of one and does not fire.
TEST(Seed002, OnlyTheMembersThatFitTheGroupAreCombined) {
  const std::string text = function_text(
      "x: " + tensor("2, 4") + ", w: " + tensor("4, 2"),
      "        a: " + tensor("2, 2") +
          " = R.matmul(x, R.const([[1.0, 2.0], [0.5, -1.0], [0.0, 1.0], [2.0, 0.25]], \"float32\"), "
          "out_dtype=\"void\")\n        b: " +
          tensor("2, 1") +
          " = R.matmul(x, R.const([[1.0], [-2.0], [0.5], [0.25]], \"float32\"), out_dtype=\"void\")\n        c: " +
          tensor("2, 2") + " = R.matmul(x, w, out_dtype=\"void\")\n",
      "a, b, c", 5);
  Loaded original = parse_text(text, "mixed.relax");
  Loaded rewritten = parse_text(text, "mixed.relax");
  ASSERT_TRUE(original && rewritten);
  PassStats stats = run_verified(seed002_combine_parallel_matmuls_pass(), *rewritten.module);
  EXPECT_EQ(fired_by_rule(stats)["combine_constant_weights"], 1u);
  EXPECT_EQ(fired_by_rule(stats)["combine_parameter_weights"], 0u);
  EXPECT_EQ(count_calls(*rewritten.module, op::matmul), 2u);
  EXPECT_EQ(count_calls(*rewritten.module, op::split), 1u);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 3));
}

// x's users in order: m0, m1 (a 3-D weight), m2, m3. At m0 the three-root rule first tries k = m1, whose weight
// fails the rule's guard with every v; it backtracks to k = m2 and finds v = m3. m1 stays as it was.
TEST(Seed002, LaterRootsBacktrackOverTheCandidates) {
  const std::string text = function_text(
      "x: " + tensor("2, 8") + ", w0: " + tensor("8, 2") + ", w1: " + tensor("1, 8, 3") + ", w2: " + tensor("8, 4") +
          ", w3: " + tensor("8, 1"),
      "        m0: " + tensor("2, 2") + " = R.matmul(x, w0, out_dtype=\"void\")\n        m1: " + tensor("1, 2, 3") +
          " = R.matmul(x, w1, out_dtype=\"void\")\n        m1_2d: " + tensor("2, 3") +
          " = R.reshape(m1, R.shape([2, 3]))\n        m2: " + tensor("2, 4") +
          " = R.matmul(x, w2, out_dtype=\"void\")\n        m3: " + tensor("2, 1") +
          " = R.matmul(x, w3, out_dtype=\"void\")\n",
      "m0, m1_2d, m2, m3", 10);
  Loaded original = parse_text(text, "backtrack.relax");
  Loaded rewritten = parse_text(text, "backtrack.relax");
  ASSERT_TRUE(original && rewritten);
  EXPECT_EQ(run_verified(seed002_combine_qkv_pass(), *rewritten.module).rewrites, 1u);
  EXPECT_EQ(count_calls(*rewritten.module, op::matmul), 2u);  // the combined one and m1
  EXPECT_EQ(count_calls(*rewritten.module, op::split), 1u);
  bool m1_kept = false;
  for (const Node* node : main_function(*rewritten.module)->nodes()) {
    m1_kept |= !node->is_dead() && node->name() == "m1" && node->is_call_of(op::matmul);
  }
  EXPECT_TRUE(m1_kept);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 4));
}

}  // namespace
}  // namespace dpl::example_test
