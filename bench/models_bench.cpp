// The real models of ../shared/models (BERT, TinyLlama, ResNet-50, ViT) rewritten by every bundled example pass,
// and by the passes of examples/models run by the rule interpreter.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"
#include "interpreted.h"
#include "measure.h"

namespace dpl::bench {
namespace {

std::vector<std::filesystem::path> model_files(bool smoke) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(DPL_MODELS_DIR, error)) {
    if (entry.path().extension() == ".relax") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (smoke && files.size() > 1) files.resize(1);
  return files;
}

// The rule files of examples/models, in name order.
std::vector<std::filesystem::path> model_rule_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(DPL_MODEL_RULES_DIR)) {
    if (entry.path().extension() == ".dpl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The model's text if it reads as a module with a `main`; else nullptr and `error` says why.
std::shared_ptr<const SourceFile> load_model(const std::filesystem::path& path, std::string& error) {
  std::shared_ptr<const SourceFile> source = SourceFile::load(path.string(), error);
  if (source == nullptr) return nullptr;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = read_module(*source, diags);
  if (module == nullptr || module->find("main") == nullptr) {
    error = module == nullptr ? diags.str() : path.string() + " has no function `main`";
    return nullptr;
  }
  return source;
}

void register_all(const BenchOptions& options) {
  const std::vector<std::filesystem::path> models = model_files(options.smoke);
  if (models.empty()) {
    benchmark::RegisterBenchmark("model/none", [](benchmark::State& state) {
      state.SkipWithError("no .relax models in " DPL_MODELS_DIR);
    });
    return;
  }
  for (const std::filesystem::path& model : models) {
    std::string error;
    std::shared_ptr<const SourceFile> source = load_model(model, error);
    if (source == nullptr) {
      benchmark::RegisterBenchmark(fmt::format("model/{}", model.stem().string()).c_str(),
                                   [error](benchmark::State& state) { state.SkipWithError(error.c_str()); });
      continue;
    }
    // Every iteration parses the model again (not timed) to get a fresh graph to rewrite.
    BuildFn build = [source] {
      DiagnosticEngine diags;
      return read_module(*source, diags);
    };
    const auto add_model_benchmark = [&](const std::string& name, const PassDef& pass) {
      benchmark::RegisterBenchmark(name.c_str(), [build, run = module_driver(pass)](benchmark::State& state) {
        measure_rewrite(state, build, run);
      })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          // A pass over a model takes microseconds, re-reading the model for the next iteration milliseconds:
          // a fixed count keeps the untimed reading from dominating the run.
          ->Iterations(options.smoke ? 2 : 100);
    };
    for (const PassDef* pass : PassRegistry::all()) {
      add_model_benchmark(fmt::format("model/{}/{}", model.stem().string(), pass->name), *pass);
    }
    // The rule sets written for these models, interpreted: report.py divides by the compiled pass's time.
    for (const std::filesystem::path& rules : model_rule_files()) {
      for (const PassDef* pass : interpreted_passes(rules.string())) {
        add_model_benchmark(fmt::format("model-interpreted/{}/{}", model.stem().string(), pass->name), *pass);
      }
    }
  }
}

}  // namespace
}  // namespace dpl::bench

int main(int argc, char** argv) { return dpl::bench::benchmark_main(argc, argv, dpl::bench::register_all); }
