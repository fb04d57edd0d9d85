// Reading and printing TVMScript text of large synthetic models (up to 10^6 bindings), issue 5.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"
#include "graphs.h"
#include "measure.h"

namespace dpl::bench {
namespace {

// A transformer of about `bindings` bindings and its text, made once per size: printing 10^6 bindings to get
// the text the read benchmark parses takes seconds itself.
struct Model {
  std::unique_ptr<Module> module;
  std::unique_ptr<SourceFile> text;
  size_t bindings = 0;
};

const Model& model_of(size_t bindings) {
  static std::map<size_t, Model> models;
  Model& model = models[bindings];
  if (model.module == nullptr) {
    model.module = new_main_module();
    build_transformer(main_function(*model.module), transformer_layers_for_bindings(bindings));
    for (const Node* node : main_function(*model.module).nodes()) model.bindings += node->is_call() ? 1 : 0;
    model.text = std::make_unique<SourceFile>(fmt::format("transformer_{}.relax", bindings),
                                              print_module(*model.module));
  }
  return model;
}

// Times `step` alone per iteration (the module it returns is destroyed outside the timed region).
template <typename Step>
void measure_text(benchmark::State& state, const Model& model, Step step) {
  double seconds = 0;
  for (auto _ : state) {
    const double start = thread_seconds();
    auto product = step();
    const double elapsed = thread_seconds() - start;
    state.SetIterationTime(elapsed);
    seconds += elapsed;
    if (!product) {
      state.SkipWithError("the step failed");
      break;
    }
  }
  state.counters["bindings"] = static_cast<double>(model.bindings);
  set_ns_per(state, "binding", seconds, static_cast<double>(model.bindings));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(model.text->text().size()));
}

void read_text(benchmark::State& state, size_t bindings) {
  const Model& model = model_of(bindings);
  std::string errors;
  measure_text(state, model, [&] {
    DiagnosticEngine diags;
    std::unique_ptr<Module> module = read_module(*model.text, diags);
    if (module == nullptr) errors = diags.str();
    return module;
  });
  if (!errors.empty()) std::fprintf(stderr, "%s", errors.c_str());
}

void print_text(benchmark::State& state, size_t bindings) {
  const Model& model = model_of(bindings);
  measure_text(state, model, [&] { return std::make_unique<std::string>(print_module(*model.module)); });
}

void register_all(const BenchOptions& options) {
  const std::vector<size_t> sizes = options.smoke ? std::vector<size_t>{1000} : std::vector<size_t>{10'000, 100'000, 1'000'000};
  for (size_t n : sizes) {
    benchmark::RegisterBenchmark(fmt::format("text/read/{}", n).c_str(),
                                 [n](benchmark::State& state) { read_text(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(fmt::format("text/print/{}", n).c_str(),
                                 [n](benchmark::State& state) { print_text(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace dpl::bench

int main(int argc, char** argv) { return dpl::bench::benchmark_main(argc, argv, dpl::bench::register_all); }
