// The rule sets of examples/models on the real models of ../shared/models: how often each rule fires (counted by
// hand from the model files, below), well-formed results that print and read back, and, with the reference
// interpreter, the same outputs as the original models on random inputs. Also two seed 004 rule sets on ResNet-50
// and the generated 200-rule set (tests/examples/data/many_rules.dpl) on the transformers.
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "combine_projections.dpl.h"
#include "dpl/text/tvmscript.h"
#include "example_support.h"
#include "fold_batch_norm.dpl.h"
#include "kernel_size.dpl.h"
#include "many_rules.dpl.h"
#include "partition_linear.dpl.h"
#include "partition_resnet.dpl.h"
#include "partition_rotary.dpl.h"
#include "pool_before_relu.dpl.h"
#include "rms_norm.dpl.h"
#include "simplify.dpl.h"
#include "transformer_attention.dpl.h"
#include "tuple_item.dpl.h"

namespace dpl::example_test {
namespace {

const std::string kModelDir = std::string(DPL_SHARED_DIR) + "/models/";

using Fired = std::map<std::string, uint64_t>;

// What each pass of the pipeline is expected to fire, rule by rule.
struct PipelineCounts {
  Fired attention;
  Fired rms_norm;
  Fired simplify;
};

// The bundled model passes, in the order they are meant to run.
std::vector<const PassDef*> model_pipeline() {
  return {&dpl_passes::models_fuse_attention_pass(), &dpl_passes::models_fuse_rms_norm_pass(),
          &dpl_passes::models_simplify_pass()};
}

Fired attention_counts(uint64_t with_mask, uint64_t without_mask, uint64_t grouped_query, uint64_t cancelled) {
  return {{"attention_with_mask", with_mask},
          {"attention_without_mask", without_mask},
          {"attention_grouped_query", grouped_query},
          {"cancel_head_transposes", cancelled}};
}

// Counted by hand from the model files (grep and reasoning; every count is also the number of sites in the file).
//
// BERT-base: 12 layers, 12 nn.softmax. In each layer q, k and v are permute_dims(reshape(proj, (1, 11, 12, 64)),
// axes=[0, 2, 1, 3]); the scores are matmul(q, permute_dims(k, axes=[0, 1, 3, 2])) * R.const(0.125), plus the
// shared mask lv12 of shape (1, 1, 11, 11) (`add(lv30, lv12)` in layer 0); then softmax, matmul with v and
// permute_dims(axes=[0, 2, 1, 3]). So attention_with_mask fires 12 times. Each fused attention transposes q, k
// and v back, and each of those is a transpose of a transpose: cancel_head_transposes fires 3 x 12 = 36 times.
// There is no such pair in the original (its 48 [0, 2, 1, 3] transposes read 36 reshapes and 12 matmuls).
// No power/mean/rsqrt (no RMSNorm), no multiply by 1 or add of 0 (grep 'R.const(1.0' / 'R.const(0' finds none
// in a multiply or add).
const PipelineCounts kBertCounts{attention_counts(12, 0, 0, 36), {{"rms_norm", 0}},
                                 {{"multiply_by_one", 0}, {"add_zero", 0}}};
// ViT-B/16: the same 12 attentions (q, k, v from reshapes to (1, 197, 12, 64), scale 0.125) without a mask:
// attention_without_mask 12, cancel_head_transposes 36; nothing else.
const PipelineCounts kVitCounts{attention_counts(0, 12, 0, 36), {{"rms_norm", 0}},
                                {{"multiply_by_one", 0}, {"add_zero", 0}}};
// TinyLlama: 22 decoder layers, 22 nn.softmax, each after `add(scores * 0.125, lv67)` with the shared causal and
// padding mask lv67 (1, 1, 3, 3): attention_with_mask 22. Key and value are repeated from 4 to 32 heads
// (expand_dims axis=[2], broadcast_to (1, 4, 8, 3, 64), reshape (1, 32, 3, 64): 44 of each in the file, two per
// layer): attention_grouped_query 22. The query and the key come from the rotary embedding (an add), so their new
// transposes stay; the value is permute_dims(reshape(...)), whose transpose back cancels: 22.
// RMSNorm: 45 power(x, 2.0) / mean(axis=[-1], keepdims=True) / add 1e-05 / rsqrt / multiply / multiply(w, .)
// chains, two per layer plus the final norm: 45. Simplify: lv21 = cos * 1.0 and lv23 = sin * 1.0 (2), lv5 and
// lv8 = arange + R.const(0, "int64") (2).
const PipelineCounts kTinyLlamaCounts{attention_counts(22, 0, 22, 22), {{"rms_norm", 45}},
                                      {{"multiply_by_one", 2}, {"add_zero", 2}}};
// ResNet-50: convolutions, no attention, RMSNorm or such constants.
const PipelineCounts kResNetCounts{attention_counts(0, 0, 0, 0), {{"rms_norm", 0}},
                                   {{"multiply_by_one", 0}, {"add_zero", 0}}};

// Runs the model pipeline on `module` and checks each pass's counts.
void rewrite_and_count(Module& module, const PipelineCounts& expected) {
  const std::vector<const PassDef*> passes = model_pipeline();
  const std::vector<const Fired*> counts = {&expected.attention, &expected.rms_norm, &expected.simplify};
  for (size_t i = 0; i < passes.size(); ++i) {
    EXPECT_EQ(fired_by_rule(run_verified(*passes[i], module)), *counts[i]) << "pass " << passes[i]->name;
  }
}

size_t count_calls(const Function& function, OpId op) {
  size_t count = 0;
  for (const Node* node : function.nodes()) count += !node->is_dead() && node->is_call_of(op);
  return count;
}

struct ModelCase {
  const char* test_name;
  const char* file;
  const PipelineCounts* counts;
  size_t attentions;  // nn.attention calls after the pipeline
  size_t rms_norms;   // nn.rms_norm calls after the pipeline
};

void PrintTo(const ModelCase& model, std::ostream* out) { *out << model.file; }

class ModelRewrites : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ModelRewrites, EveryRuleFiresAsCountedByHand) {
  const ModelCase& model = GetParam();
  Loaded loaded = load_file(kModelDir + model.file);
  ASSERT_TRUE(loaded);
  rewrite_and_count(*loaded.module, *model.counts);
  const Function* main = main_function(*loaded.module);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(count_calls(*main, op::nn_attention), model.attentions);
  EXPECT_EQ(count_calls(*main, op::nn_rms_norm), model.rms_norms);
  // Nothing of the written-out forms is left.
  if (model.attentions > 0) {
    EXPECT_EQ(count_calls(*main, op::nn_softmax), 0u);
  }
  if (model.rms_norms > 0) {
    EXPECT_EQ(count_calls(*main, op::rsqrt), 0u);
    EXPECT_EQ(count_calls(*main, op::power), 0u);
  }
  EXPECT_TRUE(verifies_and_rereads(*loaded.module));
  // A second run of the pipeline finds nothing left to do.
  for (const PassDef* pass : model_pipeline()) EXPECT_EQ(run_verified(*pass, *loaded.module).rewrites, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Models, ModelRewrites,
    ::testing::Values(ModelCase{"Bert", "bert_base_uncased.relax", &kBertCounts, 12, 0},
                      ModelCase{"Vit", "vit_base_patch16_224.relax", &kVitCounts, 12, 0},
                      ModelCase{"TinyLlama", "tinyllama_1_1b_chat.relax", &kTinyLlamaCounts, 22, 45},
                      ModelCase{"ResNet50", "resnet50.relax", &kResNetCounts, 0, 0}),
    [](const ::testing::TestParamInfo<ModelCase>& info) { return std::string(info.param.test_name); });

// The model with its batch of 1 made a symbolic `b`, as an export with a dynamic batch has it: the parameters'
// leading 1 becomes "b", and so does the leading 1 of every type annotation and reshape target in the body.
std::string with_dynamic_batch(const std::string& text) {
  auto replace_all = [](std::string& in, const std::string& from, const std::string& to) {
    for (size_t at = in.find(from); at != std::string::npos; at = in.find(from, at + to.size())) {
      in.replace(at, from.size(), to);
    }
  };
  std::string result;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    if (line.rfind("def main(", 0) == 0) {
      replace_all(line, "R.Tensor((1, ", "R.Tensor((\"b\", ");
      line += "\n    b = T.int64()";
    } else {
      replace_all(line, "R.Tensor((1, ", "R.Tensor((b, ");
      replace_all(line, "R.shape([1, ", "R.shape([b, ");
    }
    result += line + "\n";
    start = end + 1;
  }
  return result;
}

// The same rules fire as often with a dynamic batch: their guards compare dimensions for every batch
// (TinyLlama's grouped-query rule checks that the repeated key and value keep the batch `b` of k and v; with
// guards that needed static extents it fired on none of them).
TEST_P(ModelRewrites, EveryRuleFiresAsCountedWithADynamicBatch) {
  const ModelCase& model = GetParam();
  std::string error;
  std::unique_ptr<SourceFile> file = SourceFile::load(kModelDir + model.file, error);
  ASSERT_NE(file, nullptr) << error;
  const std::string dynamic = with_dynamic_batch(file->text());
  ASSERT_NE(dynamic.find("b = T.int64()"), std::string::npos);
  Loaded loaded = parse_text(dynamic, std::string("dynamic_") + model.file);
  ASSERT_TRUE(loaded);
  const Function* main = main_function(*loaded.module);
  ASSERT_NE(main, nullptr);
  ASSERT_FALSE(main->params()[0]->type()->dims()[0].is_static()) << main->params()[0]->type()->str();
  rewrite_and_count(*loaded.module, *model.counts);
  EXPECT_EQ(count_calls(*main, op::nn_attention), model.attentions);
  EXPECT_EQ(count_calls(*main, op::nn_rms_norm), model.rms_norms);
  EXPECT_TRUE(verifies_and_rereads(*loaded.module));
}

// BERT and ViT end with q, k and v straight from the reshapes: no [0, 2, 1, 3] transpose is left.
TEST(ModelRewrites, BertAttentionReadsTheReshapes) {
  Loaded bert = load_file(kModelDir + "bert_base_uncased.relax");
  ASSERT_TRUE(bert);
  rewrite_and_count(*bert.module, kBertCounts);
  const Function* main = main_function(*bert.module);
  ASSERT_NE(main, nullptr);
  for (const Node* node : main->nodes()) {
    if (node->is_dead() || !node->is_call_of(op::nn_attention)) continue;
    ASSERT_EQ(node->num_operands(), 4u);
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(node->operand(i)->is_call_of(op::reshape)) << node->name();
    EXPECT_TRUE(node->operand(3)->is_call_of(op::where)) << "the mask";
  }
}

// The interpreter on random inputs: the rewritten model computes what the original does.
void expect_same_outputs(const char* file, const PipelineCounts& counts) {
  Loaded original = load_file(kModelDir + file);
  Loaded rewritten = load_file(kModelDir + file);
  ASSERT_TRUE(original && rewritten);
  rewrite_and_count(*rewritten.module, counts);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 1));
}

TEST(ModelNumerics, Bert) { expect_same_outputs("bert_base_uncased.relax", kBertCounts); }
TEST(ModelNumerics, Vit) { expect_same_outputs("vit_base_patch16_224.relax", kVitCounts); }
TEST(ModelNumerics, TinyLlama) { expect_same_outputs("tinyllama_1_1b_chat.relax", kTinyLlamaCounts); }

// --- seed 002's parallel projections on the transformers
//
// Counted by hand (and by a script over the files): a value with two or more users matmul(x, permute_dims(w,
// axes=[1, 0])), w a parameter. BERT-base: in each of its 12 layers the query, key and value projections of the
// layer input (lv6 in layer 0), each followed by add of a bias parameter (layerN_attn_{q,k,v}_b): 12 groups of 3,
// all biased. The other projections (attention output, intermediate, output dense) each have an input of their
// own. ViT-B/16: the same 12 biased groups of 3. TinyLlama: per layer, q, k and v of the first RMSNorm's output
// (k and v 256 wide, q 2048) and the MLP's gate and up of the second's, no biases: 22 + 22 groups.
struct ProjectionCase {
  const char* test_name;
  const char* file;
  const PipelineCounts* counts;
  Fired combined;
};

void PrintTo(const ProjectionCase& model, std::ostream* out) { *out << model.file; }

class CombineProjections : public ::testing::TestWithParam<ProjectionCase> {};

// Combining first or fusing attention first: both passes fire as counted either way (attention fusion reads the
// projections' values, whatever computes them), and the result is well-formed.
TEST_P(CombineProjections, GroupsAsCountedByHandBeforeAndAfterTheModelPipeline) {
  const ProjectionCase& model = GetParam();
  Loaded combine_first = load_file(kModelDir + model.file);
  Loaded pipeline_first = load_file(kModelDir + model.file);
  ASSERT_TRUE(combine_first && pipeline_first);
  const PassDef& combine = dpl_passes::models_combine_projections_pass();
  EXPECT_EQ(fired_by_rule(run_verified(combine, *combine_first.module)), model.combined);
  uint64_t groups = 0;
  for (const auto& [rule, fired] : model.combined) groups += fired;
  EXPECT_EQ(count_calls(*main_function(*combine_first.module), op::split), groups);
  rewrite_and_count(*combine_first.module, *model.counts);
  rewrite_and_count(*pipeline_first.module, *model.counts);
  EXPECT_EQ(fired_by_rule(run_verified(combine, *pipeline_first.module)), model.combined);
  for (Loaded* loaded : {&combine_first, &pipeline_first}) {
    EXPECT_TRUE(verifies_and_rereads(*loaded->module));
    EXPECT_EQ(run_verified(combine, *loaded->module).rewrites, 0u);  // nothing left to combine
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, CombineProjections,
    ::testing::Values(
        ProjectionCase{"Bert", "bert_base_uncased.relax", &kBertCounts,
                       {{"combine_biased_projections", 12}, {"combine_projections", 0}}},
        ProjectionCase{"Vit", "vit_base_patch16_224.relax", &kVitCounts,
                       {{"combine_biased_projections", 12}, {"combine_projections", 0}}},
        ProjectionCase{"TinyLlama", "tinyllama_1_1b_chat.relax", &kTinyLlamaCounts,
                       {{"combine_biased_projections", 0}, {"combine_projections", 44}}}),
    [](const ::testing::TestParamInfo<ProjectionCase>& info) { return std::string(info.param.test_name); });

TEST(ModelNumerics, BertCombinedProjections) {
  Loaded original = load_file(kModelDir + "bert_base_uncased.relax");
  Loaded rewritten = load_file(kModelDir + "bert_base_uncased.relax");
  ASSERT_TRUE(original && rewritten);
  EXPECT_EQ(run_verified(dpl_passes::models_combine_projections_pass(), *rewritten.module).rewrites, 12u);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 1));
}

// --- seed 004's examples on a real CNN
//
// ResNet-50 has 16 bottleneck blocks (3 + 4 + 6 + 3), each with one 3x3 convolution (the stem is 7x7, the rest
// 1x1): seed004_3x3_kernels_to_hwio fires 16 times. Of its 49 relus, 33 read a batch_norm's item 0 directly: the
// stem's and two per block (after the 1x1 and the 3x3 convolutions); the other 16 follow the residual add.
// All its batch norms are inference mode with epsilon 1e-05, so seed004_decompose_batch_norm_relu fires 33 times.
void rewrite_resnet_with_seed004(Module& module) {
  EXPECT_EQ(run_verified(dpl_passes::seed004_3x3_kernels_to_hwio_pass(), module).rewrites, 16u);
  EXPECT_EQ(run_verified(dpl_passes::seed004_decompose_batch_norm_relu_pass(), module).rewrites, 33u);
}

TEST(Seed004OnResNet50, LayoutAndBatchNormRulesFireAsCounted) {
  Loaded resnet = load_file(kModelDir + "resnet50.relax");
  ASSERT_TRUE(resnet);
  rewrite_resnet_with_seed004(*resnet.module);
  const Function* main = main_function(*resnet.module);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(count_calls(*main, op::nn_batch_norm), 53u - 33u);
  EXPECT_TRUE(verifies_and_rereads(*resnet.module));
}

TEST(ModelNumerics, ResNet50WithSeed004Rules) {
  Loaded original = load_file(kModelDir + "resnet50.relax");
  Loaded rewritten = load_file(kModelDir + "resnet50.relax");
  ASSERT_TRUE(original && rewritten);
  rewrite_resnet_with_seed004(*rewritten.module);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 1));
}

// --- ResNet-50 carved into conv2d + batch_norm (+ relu) composites (examples/models/partition_resnet.dpl)
//
// Each of the 53 convolutions is read only by a batch_norm (inference mode); 33 batch norms are read, through item
// 0, only by a relu (the stem's and two per bottleneck block, as counted above), the other 20 (the last of each of
// the 16 blocks and the 4 downsampling branches) by a residual add. The partition pass visits users first, so the
// 33 relus are carved with their batch_norm and conv2d, and the 20 remaining batch norms with their conv2d. Left
// in main: 53 calls, the 16 relus after the residual adds, and no conv2d or batch_norm.
void partition_resnet(Module& module) {
  EXPECT_EQ(fired_by_rule(run_verified(dpl_passes::models_partition_conv_bn_pass(), module)),
            (Fired{{"models.conv2d_bn_relu", 33}, {"models.conv2d_bn", 20}}));
}

TEST(ResNet50Partition, ConvBatchNormReluCompositesAsCounted) {
  Loaded resnet = load_file(kModelDir + "resnet50.relax");
  ASSERT_TRUE(resnet);
  partition_resnet(*resnet.module);
  const Function* main = main_function(*resnet.module);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(count_calls(*main, op::nn_conv2d), 0u);
  EXPECT_EQ(count_calls(*main, op::nn_batch_norm), 0u);
  EXPECT_EQ(count_calls(*main, op::nn_relu), 16u);
  std::map<std::string, size_t> composites;
  for (const auto& function : resnet.module->functions()) {
    if (const AttrValue* name = function->find_attr("Composite")) ++composites[std::get<std::string>(*name)];
  }
  EXPECT_EQ(composites, (std::map<std::string, size_t>{{"models.conv2d_bn_relu", 33}, {"models.conv2d_bn", 20}}));
  EXPECT_TRUE(verifies_and_rereads(*resnet.module));
}

// A partition pass leaves composite functions alone, so a second run carves nothing inside them.
TEST(ResNet50Partition, ASecondRunChangesNothing) {
  Loaded resnet = load_file(kModelDir + "resnet50.relax");
  ASSERT_TRUE(resnet);
  partition_resnet(*resnet.module);
  const std::string once = print_module(*resnet.module);
  EXPECT_EQ(run_verified(dpl_passes::models_partition_conv_bn_pass(), *resnet.module).rewrites, 0u);
  EXPECT_EQ(print_module(*resnet.module), once);
}

// ResNet-50 rewritten by `rewrite` computes what the original computes, on the same random inputs.
void expect_resnet_numerics_kept_by(void (*rewrite)(Module&)) {
  Loaded original = load_file(kModelDir + "resnet50.relax");
  Loaded rewritten = load_file(kModelDir + "resnet50.relax");
  ASSERT_TRUE(original && rewritten);
  rewrite(*rewritten.module);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 1));
}

TEST(ModelNumerics, ResNet50Partitioned) { expect_resnet_numerics_kept_by(partition_resnet); }

// --- ResNet-50's batch norms folded into its convolutions (examples/models/fold_batch_norm.dpl)
//
// Each of the 53 convolutions (NCHW, OIHW) is read only by an inference-mode batch_norm on axis 1 whose item 0 is
// all that is read (as counted above): 53 folds. Left: 53 conv2d, each followed by its bias add, no batch_norm and
// no tuple item; a second run finds nothing.
void fold_resnet_batch_norms(Module& module) {
  EXPECT_EQ(fired_by_rule(run_verified(dpl_passes::models_fold_batch_norm_pass(), module)),
            (Fired{{"fold_conv_batch_norm", 53}}));
}

// ResNet-50 rewritten by `rewrite` (which runs `pass`) has a `main` that passes `check`, verifies, reads back,
// and gives `pass` nothing more to do.
void expect_resnet_rewritten(void (*rewrite)(Module&), const PassDef& pass, void (*check)(const Function& main)) {
  Loaded resnet = load_file(kModelDir + "resnet50.relax");
  ASSERT_TRUE(resnet);
  rewrite(*resnet.module);
  const Function* main = main_function(*resnet.module);
  ASSERT_NE(main, nullptr);
  check(*main);
  EXPECT_TRUE(verifies_and_rereads(*resnet.module));
  EXPECT_EQ(run_verified(pass, *resnet.module).rewrites, 0u);
}

TEST(ResNet50FoldBatchNorm, EveryBatchNormFoldsIntoItsConvolution) {
  expect_resnet_rewritten(fold_resnet_batch_norms, dpl_passes::models_fold_batch_norm_pass(),
                          [](const Function& main) {
                            EXPECT_EQ(count_calls(main, op::nn_batch_norm), 0u);
                            EXPECT_EQ(count_calls(main, op::nn_conv2d), 53u);
                            EXPECT_EQ(count_calls(main, op::rsqrt), 53u);
                            for (const Node* node : main.nodes()) EXPECT_NE(node->kind(), NodeKind::TupleItem);
                          });
}

TEST(ModelNumerics, ResNet50BatchNormsFolded) { expect_resnet_numerics_kept_by(fold_resnet_batch_norms); }

// --- ResNet-50's stem pools before its relu (examples/models/pool_before_relu.dpl)
//
// The model's one max pool reads the stem's relu, which nothing else reads: 1 rewrite. The relu then reads the
// pool (a quarter of the elements), and a second run finds nothing.
void pool_resnet_before_relu(Module& module) {
  EXPECT_EQ(fired_by_rule(run_verified(dpl_passes::models_pool_before_relu_pass(), module)),
            (Fired{{"pool_before_relu", 1}}));
}

TEST(ResNet50PoolBeforeRelu, TheStemPoolsFirst) {
  expect_resnet_rewritten(pool_resnet_before_relu, dpl_passes::models_pool_before_relu_pass(),
                          [](const Function& main) {
                            size_t pools = 0;
                            for (const Node* node : main.nodes()) {
                              if (node->is_dead() || !node->is_call_of(op::nn_max_pool2d)) continue;
                              ++pools;
                              EXPECT_FALSE(node->operand(0)->is_call_of(op::nn_relu));
                              ASSERT_EQ(node->num_users(), 1u);
                              EXPECT_TRUE(node->users()[0]->is_call_of(op::nn_relu));
                            }
                            EXPECT_EQ(pools, 1u);
                          });
}

TEST(ModelNumerics, ResNet50PoolBeforeRelu) { expect_resnet_numerics_kept_by(pool_resnet_before_relu); }

// --- the linear layers carved into composite functions (examples/models/partition_linear.dpl)
//
// Counted from the model files (every matmul whose second operand is permute_dims(parameter, axes=[1, 0]), and
// what reads it): BERT-base and ViT-B/16 each have 73 such linear layers, all followed by a bias add of a 1-D
// parameter; 12 of those adds (the feed-forward up-projections) are read by a gelu. TinyLlama's 154 (7 per layer)
// have no bias; in each of its 22 layers the gate, up and down projections make one gated feed-forward block
// (down(silu(gate(x)) * up(x))), leaving 88 (q, k, v, o). ResNet-50's classifier is one linear + bias. The other
// matmuls (attention scores and values, 24 in BERT and ViT, 45 in TinyLlama with the rotary table's) stay in main.
struct LinearCase {
  const char* test_name;
  const char* file;
  uint64_t with_gelu;
  uint64_t with_bias;
  uint64_t gated_mlp;
  uint64_t plain;
  size_t matmuls_left;
};

void PrintTo(const LinearCase& model, std::ostream* out) { *out << model.file; }

class PartitionLinear : public ::testing::TestWithParam<LinearCase> {};

TEST_P(PartitionLinear, LinearLayersBecomeCompositesAsCounted) {
  const LinearCase& model = GetParam();
  Loaded loaded = load_file(kModelDir + model.file);
  ASSERT_TRUE(loaded);
  const PassDef& pass = dpl_passes::models_partition_linear_pass();
  const Fired expected{{"models.linear_bias_gelu", model.with_gelu},
                       {"models.linear_bias", model.with_bias},
                       {"models.gated_mlp", model.gated_mlp},
                       {"models.linear", model.plain}};
  EXPECT_EQ(fired_by_rule(run_verified(pass, *loaded.module)), expected);
  std::map<std::string, size_t> composites;
  for (const auto& function : loaded.module->functions()) {
    if (const AttrValue* name = function->find_attr("Composite")) ++composites[std::get<std::string>(*name)];
  }
  Fired made;
  for (const auto& [name, count] : expected) made[name] = composites[name];  // 0 when none was made
  EXPECT_EQ(made, expected);
  const uint64_t made_in_all = model.with_gelu + model.with_bias + model.gated_mlp + model.plain;
  EXPECT_EQ(loaded.module->functions().size(), 1 + made_in_all);  // and main
  const Function* main = main_function(*loaded.module);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(count_calls(*main, op::matmul), model.matmuls_left);
  EXPECT_TRUE(verifies_and_rereads(*loaded.module));
  EXPECT_EQ(run_verified(pass, *loaded.module).rewrites, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Models, PartitionLinear,
    ::testing::Values(LinearCase{"Bert", "bert_base_uncased.relax", 12, 61, 0, 0, 24},
                      LinearCase{"Vit", "vit_base_patch16_224.relax", 12, 61, 0, 0, 24},
                      LinearCase{"TinyLlama", "tinyllama_1_1b_chat.relax", 0, 0, 22, 88, 45},
                      LinearCase{"ResNet50", "resnet50.relax", 0, 1, 0, 0, 0}),
    [](const ::testing::TestParamInfo<LinearCase>& info) { return std::string(info.param.test_name); });

// The partitioned model computes what the original computes: the composites are evaluated through their calls.
void expect_linear_partition_keeps_numerics(const char* file, uint64_t composites) {
  Loaded original = load_file(kModelDir + file);
  Loaded partitioned = load_file(kModelDir + file);
  ASSERT_TRUE(original && partitioned);
  EXPECT_EQ(run_verified(dpl_passes::models_partition_linear_pass(), *partitioned.module).rewrites, composites);
  EXPECT_TRUE(computes_the_same(*original.module, *partitioned.module, 1));
}

TEST(ModelNumerics, BertLinearLayersPartitioned) {
  expect_linear_partition_keeps_numerics("bert_base_uncased.relax", 73);
}
// The gated feed-forward blocks (slow: TinyLlama's weights take a minute to evaluate).
TEST(ModelNumerics, TinyLlamaLinearLayersPartitioned) {
  expect_linear_partition_keeps_numerics("tinyllama_1_1b_chat.relax", 22 + 88);
}

// --- TinyLlama's rotary embeddings carved into composite functions (examples/models/partition_rotary.dpl)
//
// Counted from the model file: each of the 22 layers rotates its query and its key, x * cos + rotate_half(x) *
// sin with rotate_half written as concat((negative(x[..., 32:64]), x[..., 0:32]), axis=-1): 44 rotations, each
// of 7 calls (2 multiplies, 2 strided_slices, a negative, a concat, an add). What stays in main of those ops: the
// frequency table's concat((f, f)), and the tables' expand_dims.
TEST(TinyLlamaRotary, EveryQueryAndKeyRotationBecomesAComposite) {
  Loaded loaded = load_file(kModelDir + "tinyllama_1_1b_chat.relax");
  ASSERT_TRUE(loaded);
  const PassDef& pass = dpl_passes::models_partition_rotary_pass();
  EXPECT_EQ(fired_by_rule(run_verified(pass, *loaded.module)), (Fired{{"models.rotary_embedding", 44}}));
  ASSERT_EQ(loaded.module->functions().size(), 1u + 44u);
  for (const auto& function : loaded.module->functions()) {
    if (function->name() == "main") continue;
    const AttrValue* composite = function->find_attr("Composite");
    ASSERT_NE(composite, nullptr) << function->name();
    EXPECT_EQ(std::get<std::string>(*composite), "models.rotary_embedding");
    EXPECT_EQ(function->params().size(), 3u) << function->name();  // the rotated value and the two tables
    EXPECT_EQ(count_calls(*function, op::strided_slice), 2u) << function->name();
    EXPECT_EQ(count_calls(*function, op::negative), 1u) << function->name();
  }
  const Function* main = main_function(*loaded.module);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(count_calls(*main, op::negative), 0u);
  EXPECT_EQ(count_calls(*main, op::concat), 1u);
  EXPECT_EQ(count_calls(*main, op::strided_slice), 0u);
  EXPECT_TRUE(verifies_and_rereads(*loaded.module));
  EXPECT_EQ(run_verified(pass, *loaded.module).rewrites, 0u);
}

// The other models have no rotary embedding.
TEST(TinyLlamaRotary, NothingElseIsARotation) {
  for (const char* file : {"bert_base_uncased.relax", "vit_base_patch16_224.relax", "resnet50.relax"}) {
    Loaded loaded = load_file(kModelDir + file);
    ASSERT_TRUE(loaded) << file;
    EXPECT_EQ(run_verified(dpl_passes::models_partition_rotary_pass(), *loaded.module).rewrites, 0u) << file;
  }
}

// --- the generated 200-rule set

const PassDef& many_rules() { return dpl_passes::many_rules_prescale_query_pass(); }

// Every rule of the set fires zero times except `only`, which fires `times`.
Fired only_rule_fires(const std::string& only, uint64_t times) {
  Fired fired;
  for (const RuleInfo& rule : many_rules().rules) fired[std::string(rule.name)] = 0;
  fired.at(only) = times;
  return fired;
}

TEST(ManyRules, TwoHundredRulesCompiledIntoOnePass) {
  EXPECT_EQ(many_rules().rules.size(), 200u);
  EXPECT_EQ(PassRegistry::find("many_rules_prescale_query"), &many_rules());
}

struct ManyRulesCase {
  const char* test_name;
  const char* file;
  const char* rule;  // the one rule that fires: head dimension 64, with or without the mask
  uint64_t times;
};

void PrintTo(const ManyRulesCase& model, std::ostream* out) { *out << model.file; }

class ManyRulesOnModel : public ::testing::TestWithParam<ManyRulesCase> {};

TEST_P(ManyRulesOnModel, OnlyTheHeadDim64RuleFires) {
  Loaded loaded = load_file(kModelDir + GetParam().file);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(fired_by_rule(run_verified(many_rules(), *loaded.module)),
            only_rule_fires(GetParam().rule, GetParam().times));
  EXPECT_TRUE(verifies_and_rereads(*loaded.module));
}

INSTANTIATE_TEST_SUITE_P(
    Models, ManyRulesOnModel,
    ::testing::Values(ManyRulesCase{"Bert", "bert_base_uncased.relax", "prescale_query_head_dim_64_masked", 12},
                      ManyRulesCase{"Vit", "vit_base_patch16_224.relax", "prescale_query_head_dim_64_unmasked", 12},
                      ManyRulesCase{"TinyLlama", "tinyllama_1_1b_chat.relax", "prescale_query_head_dim_64_masked",
                                    22}),
    [](const ::testing::TestParamInfo<ManyRulesCase>& info) { return std::string(info.param.test_name); });

TEST(ManyRulesNumerics, Bert) {
  Loaded original = load_file(kModelDir + "bert_base_uncased.relax");
  Loaded rewritten = load_file(kModelDir + "bert_base_uncased.relax");
  ASSERT_TRUE(original && rewritten);
  ASSERT_EQ(run_verified(many_rules(), *rewritten.module).rewrites, 12u);
  EXPECT_TRUE(computes_the_same(*original.module, *rewritten.module, 1));
}

}  // namespace
}  // namespace dpl::example_test
