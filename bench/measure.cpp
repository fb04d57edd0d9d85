// The benchmark harness shared by the bench binaries (see measure.h).
#include "measure.h"

#include <time.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "allocations.h"
#include "graphs.h"
#include "rescan.h"

namespace dpl::bench {
namespace {

// The console reporter, remembering whether any benchmark failed so that main() can say so in its exit status.
class FailureTrackingReporter : public benchmark::ConsoleReporter {
 public:
  FailureTrackingReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) failed_ = failed_ || run.error_occurred;
    ConsoleReporter::ReportRuns(runs);
  }
  bool failed() const { return failed_; }

 private:
  bool failed_ = false;
};

RunOutcome outcome_of(const PassResult& result) {
  return RunOutcome{result.stats.nodes_visited, result.stats.rewrites, 0, result.error};
}

}  // namespace

BuildFn synthetic(std::function<void(Function&)> fill) {
  return [fill = std::move(fill)] {
    std::unique_ptr<Module> module = new_main_module();
    fill(main_function(*module));
    return module;
  };
}

RunFn worklist_driver(const PassDef& pass) {
  return [&pass](Module& module) { return outcome_of(run_pass(pass, main_function(module))); };
}

RunFn module_driver(const PassDef& pass) {
  return [&pass](Module& module) { return outcome_of(run_pass(pass, module)); };
}

RunFn rescan_driver(const PassDef& pass) {
  return [&pass](Module& module) {
    RescanStats result = run_rescan(pass, main_function(module));
    return RunOutcome{result.pass.nodes_visited, result.pass.rewrites, result.scans, result.error};
  };
}

double thread_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

void set_ns_per(benchmark::State& state, const char* what, double seconds, double items_per_iteration) {
  const double items = items_per_iteration * static_cast<double>(state.iterations());
  if (items > 0) state.counters[fmt::format("ns_per_{}", what)] = seconds * 1e9 / items;
}

void measure_rewrite(benchmark::State& state, const BuildFn& build, const RunFn& run, uint64_t expected_rewrites) {
  std::unique_ptr<Module> module;
  size_t nodes = 0;
  RunOutcome outcome;
  double seconds = 0;
  uint64_t allocations = 0;
  for (auto _ : state) {
    module.reset();  // the previous graph goes away outside the timed region, too
    module = build();
    Function& function = main_function(*module);
    nodes = function.nodes().size();

    const uint64_t allocations_before = allocations_so_far();
    const double start = thread_seconds();
    outcome = run(*module);
    const double elapsed = thread_seconds() - start;
    allocations += allocations_so_far() - allocations_before;
    state.SetIterationTime(elapsed);
    seconds += elapsed;

    if (!outcome.error.empty()) {
      state.SkipWithError(outcome.error.c_str());
      break;
    }
    if (expected_rewrites != 0 && outcome.rewrites != expected_rewrites) {
      const std::string message =
          fmt::format("{} rewrites instead of the expected {}", outcome.rewrites, expected_rewrites);
      state.SkipWithError(message.c_str());
      break;
    }
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["visited"] = static_cast<double>(outcome.visited);
  state.counters["rewrites"] = static_cast<double>(outcome.rewrites);
  if (outcome.scans != 0) state.counters["scans"] = static_cast<double>(outcome.scans);
  const double rewrites = static_cast<double>(outcome.rewrites) * static_cast<double>(state.iterations());
  if (rewrites > 0) state.counters["allocs_per_rewrite"] = static_cast<double>(allocations) / rewrites;
  set_ns_per(state, "visited", seconds, static_cast<double>(outcome.visited));
  set_ns_per(state, "node", seconds, static_cast<double>(nodes));
}

int benchmark_main(int argc, char** argv, const std::function<void(const BenchOptions&)>& register_benchmarks) {
  BenchOptions options;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--smoke") == 0) {
      options.smoke = true;
    } else if (i > 0 && std::strcmp(argv[i], "--slow") == 0) {
      options.slow = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  register_benchmarks(options);
  FailureTrackingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return reporter.failed() ? 1 : 0;
}

}  // namespace dpl::bench
