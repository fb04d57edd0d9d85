// Seed 000's attention fusion: the bundled rule (examples/seed000/attention.dpl) against the seed's own version
// (seed000_attention_as_in_seed.dpl, key and value swapped, scale dropped, no checks on the reshapes). The
// reference interpreter tells them apart: the bundled rule computes what the graph computed, the seed's does not.
#include <string>

#include <gtest/gtest.h>

#include "attention.dpl.h"
#include "dpl/ir/op_registry.h"
#include "example_support.h"
#include "seed000_attention_as_in_seed.dpl.h"

namespace dpl::example_test {
namespace {

const std::string kSeedInput = std::string(DPL_EXAMPLES_DIR) + "/seed000/attention.input.relax";
const std::string kSmallInput = std::string(DPL_EXAMPLES_DIR) + "/seed000/attention.small.input.relax";

const PassDef& bundled() { return dpl_passes::seed000_attention_pass(); }
const PassDef& as_in_seed() { return dpl_passes::test_seed000_attention_as_in_seed_pass(); }

// The named parameter of main.
const Node* param(const Function& function, const std::string& name) {
  for (const Node* node : function.params()) {
    if (node->name() == name) return node;
  }
  return nullptr;
}

// The attribute `name` of a call of nn.attention.
const AttrValue& attention_attr(const Node& call, std::string_view name) {
  const OpInfo& info = OpRegistry::global().get(op::nn_attention);
  for (size_t i = 0; i < info.attrs.size(); ++i) {
    if (info.attrs[i].name == name) return call.attr(i);
  }
  throw std::logic_error("nn.attention has no attribute " + std::string(name));
}

TEST(Seed000Attention, BundledRuleGetsQueryKeyValueAndScale) {
  Loaded seed = load_file(kSeedInput);
  ASSERT_TRUE(seed);
  EXPECT_EQ(run_verified(bundled(), *seed.module).rewrites, 1u);
  const Function* main = main_function(*seed.module);
  ASSERT_NE(main, nullptr);
  const Node* out = main->output();
  ASSERT_TRUE(out->is_call_of(op::nn_attention));
  EXPECT_EQ(out->operand(0), param(*main, "Q"));
  EXPECT_EQ(out->operand(1), param(*main, "K"));
  EXPECT_EQ(out->operand(2), param(*main, "V"));
  // The float32 constant 0.15811388194561005 (1/sqrt(40) rounded to float32), passed on exactly.
  EXPECT_EQ(attention_attr(*out, "scale"), AttrValue(0.15811388194561005));
}

TEST(Seed000Attention, SeedsVersionSwapsKeyAndValueAndDropsTheScale) {
  Loaded seed = load_file(kSeedInput);
  ASSERT_TRUE(seed);
  EXPECT_EQ(run_verified(as_in_seed(), *seed.module).rewrites, 1u);
  const Function* main = main_function(*seed.module);
  ASSERT_NE(main, nullptr);
  const Node* out = main->output();
  ASSERT_TRUE(out->is_call_of(op::nn_attention));
  // R.nn.attention(Q, V, K, scale=None), as the seed prints.
  EXPECT_EQ(out->operand(0), param(*main, "Q"));
  EXPECT_EQ(out->operand(1), param(*main, "V"));
  EXPECT_EQ(out->operand(2), param(*main, "K"));
  EXPECT_EQ(attention_attr(*out, "scale"), AttrValue(std::monostate{}));
}

TEST(Seed000Attention, InterpreterAcceptsTheBundledRule) {
  Loaded original = load_file(kSmallInput);
  Loaded rewritten = load_file(kSmallInput);
  ASSERT_TRUE(original && rewritten);
  ASSERT_EQ(run_verified(bundled(), *rewritten.module).rewrites, 1u);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 7));
}

TEST(Seed000Attention, InterpreterCatchesTheSeedsVersion) {
  Loaded original = load_file(kSmallInput);
  Loaded rewritten = load_file(kSmallInput);
  ASSERT_TRUE(original && rewritten);
  ASSERT_EQ(run_verified(as_in_seed(), *rewritten.module).rewrites, 1u);
  // The dropped scale does not matter here (the default 1/sqrt(8) is the graph's constant); key and value do.
  EXPECT_FALSE(computes_the_same(*original.module, *rewritten.module, 7));
}

// With a scale that is not nn.attention's default 1/sqrt(head_dim), dropping it changes the result: the bundled
// rule passes it on.
TEST(Seed000Attention, ScaleIsPassedOn) {
  Loaded small = load_file(kSmallInput);
  ASSERT_TRUE(small);
  std::string text = small.source->text();
  const std::string scale = "R.const(0.3535533845424652, \"float32\")";
  ASSERT_NE(text.find(scale), std::string::npos);
  text.replace(text.find(scale), scale.size(), "R.const(0.5, \"float32\")");
  Loaded original = parse_text(text, "attention_scale_half.relax");
  Loaded rewritten = parse_text(text, "attention_scale_half.relax");
  ASSERT_TRUE(original && rewritten);
  ASSERT_EQ(run_verified(bundled(), *rewritten.module).rewrites, 1u);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 3));
}

// Attention within chunks of 4 positions: the reshapes split the sequence of 8 into 2 chunks, which gives
// nn.attention's output shape but not its result. The bundled rule's guard sees that the reshape does not merge
// (batch, heads) and declines; the seed's version, which does not look at the reshapes, rewrites it wrongly.
const char* const kChunkedAttention = R"(
@R.function
def main(q: R.Tensor((1, 8, 2, 4), "float32"), k: R.Tensor((1, 8, 2, 4), "float32"), v: R.Tensor((1, 8, 2, 4), "float32")):
    with R.dataflow():
        q3 = R.reshape(R.permute_dims(q, axes=[0, 2, 1, 3]), R.shape([4, 4, 4]))
        k3 = R.reshape(R.permute_dims(k, axes=[0, 2, 1, 3]), R.shape([4, 4, 4]))
        v3 = R.reshape(R.permute_dims(v, axes=[0, 2, 1, 3]), R.shape([4, 4, 4]))
        scores = R.multiply(R.matmul(q3, R.permute_dims(k3, axes=[0, 2, 1])), R.const(0.5, "float32"))
        out3 = R.matmul(R.nn.softmax(scores, axis=-1), v3)
        out = R.permute_dims(R.reshape(out3, R.shape([1, 2, 8, 4])), axes=[0, 2, 1, 3])
        R.output(out)
    return out
)";

TEST(Seed000Attention, BundledRuleDeclinesAttentionWithinChunks) {
  Loaded chunked = parse_text(kChunkedAttention, "chunked_attention.relax");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(run_verified(bundled(), *chunked.module).rewrites, 0u);
}

TEST(Seed000Attention, SeedsVersionRewritesAttentionWithinChunksWrongly) {
  Loaded original = parse_text(kChunkedAttention, "chunked_attention.relax");
  Loaded rewritten = parse_text(kChunkedAttention, "chunked_attention.relax");
  ASSERT_TRUE(original && rewritten);
  ASSERT_EQ(run_verified(as_in_seed(), *rewritten.module).rewrites, 1u);
  EXPECT_FALSE(computes_the_same(*original.module, *rewritten.module, 5));
}

}  // namespace
}  // namespace dpl::example_test
