// Rewrite benchmarks (issue 5): the add chain, synthetic transformers, the floor (a bare loop over the nodes),
// 1..256 rules on one root op, dpl's worklist driver against the re-scan-to-fixed-point baseline, QKV groups
// combined by a multi-root rule, and compiled passes against the rule interpreter running the same rules.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cascade.dpl.h"
#include "chain.dpl.h"
#include "combine_qkv.dpl.h"
#include "diverse_1.dpl.h"
#include "diverse_16.dpl.h"
#include "diverse_256.dpl.h"
#include "diverse_64.dpl.h"
#include "graphs.h"
#include "interpreted.h"
#include "measure.h"
#include "mixed_1000.dpl.h"
#include "partition.dpl.h"
#include "same_root_1.dpl.h"
#include "same_root_16.dpl.h"
#include "same_root_256.dpl.h"
#include "same_root_64.dpl.h"
#include "transformer.dpl.h"

namespace dpl::bench {
namespace {

benchmark::internal::Benchmark* add_rewrite_benchmark(const std::string& name, BuildFn build, RunFn run,
                                                      uint64_t expected_rewrites) {
  return benchmark::RegisterBenchmark(name.c_str(),
                                      [build = std::move(build), run = std::move(run),
                                       expected_rewrites](benchmark::State& state) {
                                        measure_rewrite(state, build, run, expected_rewrites);
                                      })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

BuildFn transformer_of(size_t layers) {
  return synthetic([layers](Function& function) { build_transformer(function, layers); });
}

// The floor: a loop that only reads each node's op id, over the same transformer graph the pass rewrites. Small
// graphs are swept many times per iteration so that reading the clock does not dominate; the iteration time is
// that of all the sweeps (Google Benchmark picks the iteration count from it), ns_per_node is per single visit.
void floor_loop(benchmark::State& state, size_t layers) {
  std::unique_ptr<Module> module = transformer_of(layers)();
  const Function& function = main_function(*module);
  const size_t nodes = function.nodes().size();
  const size_t sweeps = std::max<size_t>(1, 1'000'000 / nodes);
  double seconds = 0;
  uint64_t checksum = 0;
  for (auto _ : state) {
    const double start = thread_seconds();
    for (size_t sweep = 0; sweep < sweeps; ++sweep) {
      for (const Node* node : function.nodes()) checksum += node->op();
      benchmark::DoNotOptimize(checksum);
    }
    const double elapsed = thread_seconds() - start;
    state.SetIterationTime(elapsed);
    seconds += elapsed;
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["sweeps"] = static_cast<double>(sweeps);
  set_ns_per(state, "node", seconds, static_cast<double>(nodes * sweeps));
}

void register_all(const BenchOptions& options) {
  const std::vector<size_t> sizes = options.smoke ? std::vector<size_t>{1000}
                                          : std::vector<size_t>{1000, 10'000, 100'000, 1'000'000};

  // 1. The chain of issue 5, the workload TVM and MLIR were measured with.
  for (size_t n : sizes) {
    add_rewrite_benchmark(fmt::format("chain/{}", n),
                          synthetic([n](Function& function) { build_add_chain(function, n); }),
                          worklist_driver(dpl_bench::bench_chain_pass()), n);
  }

  // 2. Transformer-like graphs with simplifications that fire on part of them; 5. the floor on the same graphs.
  for (size_t n : sizes) {
    const size_t layers = transformer_layers_for_nodes(n);
    add_rewrite_benchmark(fmt::format("transformer/{}", n), transformer_of(layers),
                          worklist_driver(dpl_bench::bench_transformer_pass()),
                          layers * transformer_layer_size().rewrites);
    benchmark::RegisterBenchmark(fmt::format("floor/{}", n).c_str(),
                                 [layers](benchmark::State& state) { floor_loop(state, layers); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }

  // 3. 1, 16, 64, 256 rules rooted at `multiply` on one graph: all but one fail at their last check. And as many
  // rooted at `add` that share nothing but the root, each wanting another pair of operand ops (bench/rule_text.h,
  // diverse_rules()): flat only if the tree switches on the operands' ops.
  const size_t rules_layers = transformer_layers_for_nodes(options.smoke ? 1000 : 100'000);
  struct RuleSet {
    std::string_view series;
    size_t count;
    const PassDef* pass;
  };
  const RuleSet rule_sets[] = {
      {"rules", 1, &dpl_bench::bench_rules_1_pass()},
      {"rules", 16, &dpl_bench::bench_rules_16_pass()},
      {"rules", 64, &dpl_bench::bench_rules_64_pass()},
      {"rules", 256, &dpl_bench::bench_rules_256_pass()},
      {"rules_diverse", 1, &dpl_bench::bench_diverse_1_pass()},
      {"rules_diverse", 16, &dpl_bench::bench_diverse_16_pass()},
      {"rules_diverse", 64, &dpl_bench::bench_diverse_64_pass()},
      {"rules_diverse", 256, &dpl_bench::bench_diverse_256_pass()},
  };
  for (const RuleSet& set : rule_sets) {
    add_rewrite_benchmark(fmt::format("{}/{}", set.series, set.count), transformer_of(rules_layers),
                          worklist_driver(*set.pass), rules_layers);
  }
  // dplc's 1,000 mixed rules (row 6) over 14 root ops, none of which finds a match in the transformer: matching
  // alone, against the one rule of rules/1 on the same graph.
  add_rewrite_benchmark("rules_mixed/1000", transformer_of(rules_layers),
                        worklist_driver(dpl_bench::bench_mixed_1000_pass()), /*expected_rewrites=*/0);

  // 4. Cascading rewrites: dpl's worklist against TVM's re-scan to a fixed point, same compiled matcher. The
  // re-scan needs one scan per level of a tree, so its cost grows with nodes x depth; the worklist's with nodes.
  struct CascadeCase {
    size_t nodes;
    size_t depth;  // 0: one tree as deep as the graph allows
    bool rescan;   // the re-scan is quadratic in the depth: where one run takes minutes, only with --slow
  };
  const std::vector<CascadeCase> cascades =
      options.smoke ? std::vector<CascadeCase>{{1000, 10, true}, {1000, 0, true}}
            : std::vector<CascadeCase>{{100'000, 10, true},   {100'000, 100, true}, {100'000, 1000, true},
                                       {1000, 0, true},       {10'000, 0, true},    {30'000, 0, true},
                                       {100'000, 0, options.slow}};
  for (const CascadeCase& c : cascades) {
    const size_t depth = c.depth != 0 ? c.depth : (c.nodes - 4) / 2;
    const size_t trees = std::max<size_t>(1, c.nodes / cascade_tree_nodes(depth));
    const std::string depth_label = c.depth != 0 ? fmt::format("depth_{}", c.depth) : "depth_all";
    BuildFn build = synthetic([trees, depth](Function& function) { build_distribute_cascade(function, trees, depth); });
    const PassDef& pass = dpl_bench::bench_cascade_pass();
    add_rewrite_benchmark(fmt::format("cascade/worklist/{}/{}", depth_label, c.nodes), build, worklist_driver(pass),
                          trees * depth);
    if (c.rescan) {
      add_rewrite_benchmark(fmt::format("cascade/rescan/{}/{}", depth_label, c.nodes), build, rescan_driver(pass),
                            trees * depth);
    }
  }

  // 9. QKV groups (TVM's rewrite_bindings is quadratic here): G groups of three matmuls sharing their input,
  // combined by the multi-root rule of examples/seed002/combine_qkv.dpl. Linear means flat ns per group.
  const std::vector<size_t> group_counts = options.smoke ? std::vector<size_t>{100}
                                                 : std::vector<size_t>{100, 1000, 10'000};
  for (size_t groups : group_counts) {
    add_rewrite_benchmark(fmt::format("qkv/{}", groups),
                          synthetic([groups](Function& function) { build_qkv_groups(function, groups); }),
                          worklist_driver(dpl_passes::seed002_combine_qkv_pass()), groups);
  }

  // 10. Interpreted mode: the same rules (bench/rules/*.dpl) run by the rule interpreter
  // (dpl/compiler/rule_interpreter.h) through the same driver, on the same graphs as chain/N and transformer/N;
  // report.py divides by the compiled pass's time.
  const size_t interpreted_size = options.smoke ? 1000 : 100'000;
  add_rewrite_benchmark(fmt::format("interpreted/chain/{}", interpreted_size),
                        synthetic([n = interpreted_size](Function& function) { build_add_chain(function, n); }),
                        worklist_driver(interpreted_pass(DPL_BENCH_RULES_DIR "/chain.dpl", "bench_chain")),
                        interpreted_size);
  const size_t interpreted_layers = transformer_layers_for_nodes(interpreted_size);
  add_rewrite_benchmark(fmt::format("interpreted/transformer/{}", interpreted_size),
                        transformer_of(interpreted_layers),
                        worklist_driver(interpreted_pass(DPL_BENCH_RULES_DIR "/transformer.dpl", "bench_transformer")),
                        interpreted_layers * transformer_layer_size().rewrites);
  // The workload of the design brief's target: cascading rewrites at 10^5 nodes, as cascade/worklist/depth_1000.
  {
    const size_t depth = options.smoke ? 10 : 1000;
    const size_t trees = std::max<size_t>(1, interpreted_size / cascade_tree_nodes(depth));
    add_rewrite_benchmark(
        fmt::format("interpreted/cascade/worklist/depth_{}/{}", depth, interpreted_size),
        synthetic([trees, depth](Function& function) { build_distribute_cascade(function, trees, depth); }),
        worklist_driver(interpreted_pass(DPL_BENCH_RULES_DIR "/cascade.dpl", "bench_cascade")), trees * depth);
  }
  // Where matching dominates: the 64 and 256 rules on one root op of 3. against their compiled passes (the
  // transformer pass above spends most of its time in what the two modes share: the sweep and compact()).
  for (size_t count : {size_t{64}, size_t{256}}) {
    add_rewrite_benchmark(fmt::format("interpreted/rules/{}", count), transformer_of(rules_layers),
                          worklist_driver(interpreted_pass(
                              fmt::format("{}/same_root_{}.dpl", DPL_BENCH_GENERATED_RULES_DIR, count),
                              fmt::format("bench_rules_{}", count))),
                          rules_layers);
  }
  add_rewrite_benchmark("interpreted/rules_mixed/1000", transformer_of(rules_layers),
                        worklist_driver(interpreted_pass(DPL_BENCH_GENERATED_RULES_DIR "/mixed_1000.dpl",
                                                         "bench_mixed_1000")),
                        /*expected_rewrites=*/0);
  add_rewrite_benchmark("interpreted/rules_diverse/256", transformer_of(rules_layers),
                        worklist_driver(interpreted_pass(DPL_BENCH_GENERATED_RULES_DIR "/diverse_256.dpl",
                                                         "bench_diverse_256")),
                        rules_layers);

  // 11. Partitions (one composite function per block): the module grows by a function per rewrite, so naming
  // and finding functions must stay constant-time. Linear means flat ns per block.
  // `partition/shared`: every block reads one weight and one batch-norm parameter set, so each rewrite removes a
  // user from five lists of B users: linear only if removing a use does not search the whole list.
  for (const ParamsPerBlock params : {ParamsPerBlock::own, ParamsPerBlock::shared}) {
    for (size_t blocks : group_counts) {
      add_rewrite_benchmark(
          fmt::format("partition/{}{}", params == ParamsPerBlock::shared ? "shared/" : "", blocks),
          synthetic([blocks, params](Function& function) { build_conv_blocks(function, blocks, params); }),
          module_driver(dpl_bench::bench_partition_pass()), blocks);
    }
  }
  // `partition/again`: the pass run a second time on the partitioned module, as every later pass of a pipeline
  // runs on it: it carves nothing, but looks at B composite functions and their calls.
  for (size_t blocks : group_counts) {
    const BuildFn partitioned = [blocks] {
      std::unique_ptr<Module> module =
          synthetic([blocks](Function& function) { build_conv_blocks(function, blocks); })();
      run_pass(dpl_bench::bench_partition_pass(), *module);
      return module;
    };
    add_rewrite_benchmark(fmt::format("partition/again/{}", blocks), partitioned,
                          module_driver(dpl_bench::bench_partition_pass()), 0);
    // `partition/then`: a rewrite pass after the partition (the transformer simplifications, which find nothing
    // in conv blocks) visits main and every composite function: what a pass costs per function.
    add_rewrite_benchmark(fmt::format("partition/then/{}", blocks), partitioned,
                          module_driver(dpl_bench::bench_transformer_pass()), 0);
  }
}

}  // namespace
}  // namespace dpl::bench

int main(int argc, char** argv) { return dpl::bench::benchmark_main(argc, argv, dpl::bench::register_all); }
