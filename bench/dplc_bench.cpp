// dplc in-process: checking, and checking plus emitting C++ for, a generated file of 1,000 rules (issue 5).
#include <string>

#include <fmt/format.h>

#include "dpl/compiler/compile.h"
#include "dpl/support/diagnostics.h"
#include "measure.h"
#include "rule_text.h"

namespace dpl::bench {
namespace {

void compile_rules(benchmark::State& state, size_t rules, bool generate) {
  const std::string text = mixed_rules(rules);
  const SourceFile source(fmt::format("mixed_{}.dpl", rules), text);
  compiler::CompileOptions options;
  options.generate = generate;
  size_t emitted_bytes = 0;
  for (auto _ : state) {
    DiagnosticEngine diags;
    compiler::CompileResult result = compiler::compile(source, diags, options);
    if (!result.ok || diags.warning_count() != 0) {
      state.SkipWithError(fmt::format("dplc reported problems:\n{}", diags.str()).c_str());
      break;
    }
    emitted_bytes = result.cpp ? result.cpp->header.size() + result.cpp->source.size() : 0;
    benchmark::DoNotOptimize(result);
  }
  state.counters["rules"] = static_cast<double>(rules);
  state.counters["rules_per_s"] = benchmark::Counter(static_cast<double>(rules), benchmark::Counter::kIsIterationInvariantRate);
  if (generate) state.counters["cpp_bytes"] = static_cast<double>(emitted_bytes);
}

void register_all(const BenchOptions& options) {
  const size_t rules = options.smoke ? 100 : 1000;
  benchmark::RegisterBenchmark(fmt::format("dplc/check/{}", rules).c_str(),
                               [rules](benchmark::State& state) { compile_rules(state, rules, false); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(fmt::format("dplc/check_emit/{}", rules).c_str(),
                               [rules](benchmark::State& state) { compile_rules(state, rules, true); })
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace dpl::bench

int main(int argc, char** argv) { return dpl::bench::benchmark_main(argc, argv, dpl::bench::register_all); }
