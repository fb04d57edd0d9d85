// Tests of the benchmark support code: the generated graphs and rule sets are what the benchmarks claim, and the
// re-scan baseline computes the same result as the worklist driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "allocations.h"
#include "cascade.dpl.h"
#include "chain.dpl.h"
#include "combine_qkv.dpl.h"
#include "diverse_256.dpl.h"
#include "dpl/compiler/compile.h"
#include "dpl/ir/analysis.h"
#include "dpl/ir/builder.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"
#include "graphs.h"
#include "partition.dpl.h"
#include "measure.h"
#include "mixed_1000.dpl.h"
#include "rescan.h"
#include "rule_text.h"
#include "same_root_16.dpl.h"
#include "transformer.dpl.h"

namespace dpl::bench {
namespace {

std::unique_ptr<Module> transformer(size_t layers) {
  return synthetic([layers](Function& function) { build_transformer(function, layers); })();
}

std::unique_ptr<Module> cascade(size_t trees, size_t depth) {
  return synthetic([=](Function& function) { build_distribute_cascade(function, trees, depth); })();
}

TEST(Graphs, ChainHasOneAddPerLinkAndEveryAddFires) {
  std::unique_ptr<Module> module = synthetic([](Function& function) { build_add_chain(function, 50); })();
  Function& function = main_function(*module);
  EXPECT_EQ(function.nodes().size(), 51u);
  EXPECT_EQ(verify(function), "");
  PassResult result = run_pass(dpl_bench::bench_chain_pass(), function);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 50u);
  EXPECT_EQ(verify(function), "");
}

TEST(Graphs, TransformerLayersAreWellFormedAndSizedAsReported) {
  const LayerSize layer = transformer_layer_size();
  EXPECT_GT(layer.nodes, layer.bindings);
  EXPECT_GT(layer.bindings, 40u);
  std::unique_ptr<Module> one = transformer(1);
  std::unique_ptr<Module> three = transformer(3);
  EXPECT_EQ(main_function(*three).nodes().size() - main_function(*one).nodes().size(), 2 * layer.nodes);
  EXPECT_EQ(verify(*three), "");
  EXPECT_EQ(transformer_layers_for_nodes(1), 1u);
  EXPECT_EQ(transformer_layers_for_nodes(100 * layer.nodes), 100u);
  EXPECT_EQ(transformer_layers_for_bindings(7 * layer.bindings + 1), 7u);
}

TEST(Graphs, TransformerSimplificationsFireOnTheAdvertisedSites) {
  std::unique_ptr<Module> module = transformer(4);
  Function& function = main_function(*module);
  const size_t before = function.nodes().size();
  PassResult result = run_pass(dpl_bench::bench_transformer_pass(), function);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 4 * transformer_layer_size().rewrites);
  EXPECT_EQ(verify(function), "");
  // Each layer loses the multiply, the add, their two constants and the two cancelling transposes.
  EXPECT_EQ(function.nodes().size(), before - 4 * 6);
}

TEST(Graphs, TransformerTextReadsBackAsTheSameGraph) {
  std::unique_ptr<Module> module = transformer(2);
  const SourceFile text("transformer.relax", print_module(*module));
  DiagnosticEngine diags;
  std::unique_ptr<Module> read = read_module(text, diags);
  ASSERT_NE(read, nullptr) << diags.str();
  EXPECT_TRUE(structurally_equal(*module, *read)) << structurally_equal(*module, *read).difference;
}

TEST(Graphs, QkvGroupsAreCombinedOneMatmulPerGroup) {
  constexpr size_t kGroups = 5;
  std::unique_ptr<Module> module = synthetic([](Function& function) { build_qkv_groups(function, kGroups); })();
  Function& function = main_function(*module);
  EXPECT_EQ(function.nodes().size(), 1 + kGroups * qkv_group_nodes());
  EXPECT_EQ(verify(function), "");
  PassResult result = run_pass(dpl_passes::seed002_combine_qkv_pass(), function);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, kGroups);
  EXPECT_EQ(verify(function), "");
  const auto matmuls = std::count_if(function.nodes().begin(), function.nodes().end(),
                                     [](const Node* node) { return node->is_call_of(op::matmul); });
  EXPECT_EQ(matmuls, static_cast<std::ptrdiff_t>(kGroups));  // three per group before
}

TEST(Graphs, ConvBlocksArePartitionedWithOwnOrSharedParameters) {
  constexpr size_t kBlocks = 4;
  for (const ParamsPerBlock params : {ParamsPerBlock::own, ParamsPerBlock::shared}) {
    const bool shared = params == ParamsPerBlock::shared;
    SCOPED_TRACE(shared ? "shared" : "own");
    std::unique_ptr<Module> module =
        synthetic([params](Function& function) { build_conv_blocks(function, kBlocks, params); })();
    Function& function = main_function(*module);
    EXPECT_EQ(function.params().size(), 1 + (shared ? 1 : kBlocks) * 5);  // x, then weight and 4 batch-norm params
    const Node* weight = function.params()[1];
    EXPECT_EQ(weight->num_users(), shared ? kBlocks : 1);
    PassResult result = run_pass(dpl_bench::bench_partition_pass(), *module);
    ASSERT_TRUE(result.ok()) << result.error;
    EXPECT_EQ(result.stats.rewrites, kBlocks);
    EXPECT_EQ(module->functions().size(), 1 + kBlocks);  // a composite function per block
    EXPECT_EQ(verify(*module), "");
    EXPECT_EQ(weight->num_users(), shared ? kBlocks : 1);  // now read by the calls of the composites
  }
}

TEST(Rescan, CascadeNeedsOneScanPerLevelAndEndsWhereTheWorklistEnds) {
  constexpr size_t kTrees = 3;
  constexpr size_t kDepth = 6;
  std::unique_ptr<Module> by_worklist = cascade(kTrees, kDepth);
  std::unique_ptr<Module> by_rescan = cascade(kTrees, kDepth);
  EXPECT_EQ(main_function(*by_rescan).nodes().size(), kTrees * cascade_tree_nodes(kDepth) - 1);

  const PassDef& pass = dpl_bench::bench_cascade_pass();
  PassResult worklist = run_pass(pass, main_function(*by_worklist));
  ASSERT_TRUE(worklist.ok()) << worklist.error;
  RescanStats rescan = run_rescan(pass, main_function(*by_rescan));
  ASSERT_TRUE(rescan.error.empty()) << rescan.error;

  EXPECT_EQ(worklist.stats.rewrites, kTrees * kDepth);
  EXPECT_EQ(rescan.pass.rewrites, kTrees * kDepth);
  EXPECT_EQ(rescan.scans, kDepth + 1);  // one level per scan, and a last scan that finds nothing
  EXPECT_GT(rescan.pass.nodes_visited, worklist.stats.nodes_visited);
  EXPECT_EQ(verify(*by_rescan), "");
  EXPECT_TRUE(structurally_equal(*by_worklist, *by_rescan))
      << structurally_equal(*by_worklist, *by_rescan).difference;
}

TEST(Rescan, DriverAdaptersReportWhatTheStrategiesDid) {
  const PassDef& pass = dpl_bench::bench_cascade_pass();
  std::unique_ptr<Module> a = cascade(2, 4);
  std::unique_ptr<Module> b = cascade(2, 4);
  RunOutcome worklist = worklist_driver(pass)(*a);
  RunOutcome rescan = rescan_driver(pass)(*b);
  EXPECT_EQ(worklist.rewrites, 8u);
  EXPECT_EQ(worklist.scans, 0u);
  EXPECT_EQ(rescan.rewrites, 8u);
  EXPECT_EQ(rescan.scans, 5u);
  EXPECT_TRUE(worklist.error.empty());
  EXPECT_TRUE(rescan.error.empty());
}

// The counter behind allocs_per_rewrite counts this thread's calls of operator new, arrays and aligned ones too.
TEST(Allocations, EveryOperatorNewOfTheThreadIsCounted) {
  const uint64_t start = allocations_so_far();
  auto one = std::make_unique<int>(1);
  auto many = std::make_unique<int[]>(64);
  struct alignas(64) Line {
    char bytes[64];
  };
  auto aligned = std::make_unique<Line>();
  EXPECT_EQ(allocations_so_far(), start + 3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned.get()) % 64, 0u);
  std::vector<int> grown;
  for (int i = 0; i < 5; ++i) grown.push_back(i);  // capacity 1, 2, 4, 8: four allocations
  EXPECT_EQ(allocations_so_far(), start + 7);
}

compiler::CompileResult compile_text(const SourceFile& source, DiagnosticEngine& diags) {
  return compiler::compile(source, diags);
}

// On a three-layer transformer, the pass's last rule fires once per layer and no other rule fires.
void expect_last_rule_fires_once_per_layer(const PassDef& pass) {
  std::unique_ptr<Module> module = transformer(3);
  PassResult run = run_pass(pass, main_function(*module));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_EQ(run.stats.rewrites, 3u);
  EXPECT_EQ(run.stats.fired.back(), 3u);
  EXPECT_EQ(verify(*module), "");
}

TEST(RuleText, SameRootRulesCompileAndOnlyTheLastFires) {
  const std::string text = same_root_rules(16);
  const SourceFile source("same_root_16.dpl", text);
  DiagnosticEngine diags;
  compiler::CompileResult result = compile_text(source, diags);
  ASSERT_TRUE(result.ok) << diags.str();
  EXPECT_EQ(diags.warning_count(), 0u) << diags.str();
  ASSERT_EQ(result.ast->passes.size(), 1u);
  EXPECT_EQ(result.ast->passes[0].rules.size(), 16u);

  ASSERT_EQ(dpl_bench::bench_rules_16_pass().rules.size(), 16u);
  expect_last_rule_fires_once_per_layer(dpl_bench::bench_rules_16_pass());
}

TEST(RuleText, DiverseRulesSwitchOnTheOperandOpsInEitherOrder) {
  const SourceFile source("diverse_256.dpl", diverse_rules(256));
  DiagnosticEngine diags;
  compiler::CompileResult result = compile_text(source, diags);
  ASSERT_TRUE(result.ok) << diags.str();
  EXPECT_TRUE(diags.diagnostics().empty()) << diags.str();
  ASSERT_TRUE(result.cpp.has_value());
  // One operand order for every rule, then a switch on each operand's op: no rule tried one after another.
  const std::string& code = result.cpp->source;
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = code.find(needle); at != std::string::npos; at = code.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("head_key()"), 2u) << code;
  EXPECT_EQ(count("switch (root->operand(order1)->op())"), 1u) << code;
  EXPECT_GE(count("switch (root->operand(1 - order1)->op())"), 20u) << code;  // under most of the 23 cases

  const PassDef& pass = dpl_bench::bench_diverse_256_pass();
  ASSERT_EQ(pass.rules.size(), 256u);
  expect_last_rule_fires_once_per_layer(pass);  // `hit`

  // A miss fires where its pair of ops is, written either way round: add(exp, sigmoid) is miss_6.
  auto pair_sums = synthetic([](Function& function) {
    Builder b(function);
    const Dim extent = Dim::fixed(4);
    Node* x = b.param("x", Type::tensor(DType::Float32, std::span(&extent, 1)));
    Node* ab = b.call("add", {b.call("exp", {x}), b.call("sigmoid", {x})});
    Node* ba = b.call("add", {b.call("sigmoid", {x}), b.call("exp", {x})});
    b.output(b.call("multiply", {ab, ba}));
  })();
  PassResult pairs = run_pass(pass, main_function(*pair_sums));
  ASSERT_TRUE(pairs.ok()) << pairs.error;
  EXPECT_EQ(pairs.stats.rewrites, 2u);
  EXPECT_EQ(pairs.stats.fired[6], 2u) << pass.rules[6].name;
  EXPECT_EQ(pass.rules[6].name, "miss_6");
  EXPECT_EQ(verify(*pair_sums), "");
}

TEST(RuleText, ThousandMixedRulesCompileWithoutDiagnostics) {
  const std::string text = mixed_rules(1000);
  const SourceFile source("mixed_1000.dpl", text);
  DiagnosticEngine diags;
  compiler::CompileResult result = compile_text(source, diags);
  ASSERT_TRUE(result.ok) << diags.str();
  EXPECT_TRUE(diags.diagnostics().empty()) << diags.str();
  ASSERT_EQ(result.ast->passes.size(), 1u);
  EXPECT_EQ(result.ast->passes[0].rules.size(), 1000u);
  ASSERT_TRUE(result.cpp.has_value());
  EXPECT_NE(result.cpp->source.find("rule r999 (mixed_1000.dpl:"), std::string::npos);

  // The compiled pass (rules_mixed/1000) matches nothing in the transformer: its row times matching alone.
  std::unique_ptr<Module> module = transformer(3);
  PassResult run = run_pass(dpl_bench::bench_mixed_1000_pass(), main_function(*module));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_EQ(run.stats.rewrites, 0u);
  EXPECT_GT(run.stats.nodes_visited, 100u);
}

}  // namespace
}  // namespace dpl::bench
