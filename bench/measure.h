// The benchmark harness shared by the bench binaries: fresh graphs per iteration with only the pass timed, the
// counters every rewrite benchmark reports, and a main() with a `--smoke` switch for the CTest smoke tests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "dpl/ir/graph.h"
#include "dpl/rewrite/driver.h"

namespace dpl::bench {

// What one run of a rewrite strategy over a function did.
struct RunOutcome {
  uint64_t visited = 0;   // matcher calls
  uint64_t rewrites = 0;
  uint64_t scans = 0;     // whole-graph scans (re-scan baseline only)
  std::string error;
};

// Makes the input of one run: a module whose function `main` the strategy rewrites.
using BuildFn = std::function<std::unique_ptr<Module>()>;
using RunFn = std::function<RunOutcome(Module&)>;

// A BuildFn for the synthetic generators of graphs.h: a fresh module whose `main` `fill` builds.
BuildFn synthetic(std::function<void(Function&)> fill);

// dpl's worklist driver (run_pass) and the re-scan baseline (rescan.h), with the same compiled matcher, on the
// module's `main`.
RunFn worklist_driver(const PassDef& pass);
RunFn rescan_driver(const PassDef& pass);
// run_pass on the whole module, as dpl-opt runs a pass: partition rules can create their composite functions.
RunFn module_driver(const PassDef& pass);

// Each iteration builds a fresh graph with `build` (not timed), then times `run` on it alone (manual time,
// thread CPU time: the benchmark must be registered with UseManualTime()). A run that reports an error, or a rewrite count other than
// `expected_rewrites` (when given), fails the benchmark. Counters:
//   nodes           nodes of the input graph
//   visited         matcher calls per run
//   rewrites        rewrites per run
//   ns_per_visited  run time per matcher call
//   ns_per_node     run time per node of the input graph
//   scans           whole-graph scans per run (only when the strategy scans)
//   allocs_per_rewrite  calls of operator new during the runs per rewrite (allocations.h; only when it rewrote)
void measure_rewrite(benchmark::State& state, const BuildFn& build, const RunFn& run,
                     uint64_t expected_rewrites = 0);

// CPU time of the calling thread, in seconds. The benchmarks time with it rather than the wall clock: the
// machines they run on are shared, and another process taking the core should not count as dpl's time.
double thread_seconds();

// Sets `ns_per_<what>` to the benchmark's accumulated time divided by `items_per_iteration` per iteration.
void set_ns_per(benchmark::State& state, const char* what, double seconds, double items_per_iteration);

// What the bench binaries' own switches ask for (removed before Google Benchmark sees the arguments).
struct BenchOptions {
  bool smoke = false;  // --smoke: the smallest size of every workload only (the CTest smoke tests)
  bool slow = false;   // --slow: also the runs that take minutes (the re-scan baseline on a 10^5-deep cascade)
};

// The main() of every bench binary. Returns 1 when a benchmark failed (SkipWithError) or an argument is unknown.
int benchmark_main(int argc, char** argv, const std::function<void(const BenchOptions&)>& register_benchmarks);

}  // namespace dpl::bench
