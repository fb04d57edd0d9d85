// dpl-import: reads an ONNX model and writes it as TVMScript (Relax) text, weights as parameters.
#include <charconv>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "dpl/import/onnx.h"
#include "dpl/ir/analysis.h"
#include "dpl/support/diagnostics.h"
#include "dpl/support/file_output.h"
#include "dpl/text/tvmscript.h"

namespace {

enum ExitCode : int { kOk = 0, kInputError = 1, kUsageError = 2 };

void print_error(const std::string& message) { std::cerr << "dpl-import: error: " << message << '\n'; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dpl-import: converts an ONNX model to TVMScript Relax text (docs/importers.md)"};
  std::string input;
  std::string output;
  bool stats = false;
  std::vector<std::string> dims;
  app.add_option("model", input, "ONNX model file (.onnx)")->required();
  app.add_option("-o,--output", output, "Write the Relax text here (default: standard output)");
  app.add_option("--dim", dims,
                 "NAME=EXTENT: give a symbolic input dimension a static extent (repeatable); shape computations "
                 "over static shapes fold and map")
      ->allow_extra_args(false);
  app.add_flag("--stats", stats, "Print node counts and the operators kept opaque to standard error");
  std::vector<std::string> keep_opaque;
  app.add_option("--keep-opaque", keep_opaque,
                 "Keep these ONNX operators (op types, comma-separated or repeated) as opaque calls R.onnx.<OpType> "
                 "even where a mapping exists")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("OP[,OP...]");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsageError;
  }

  dpl::OnnxImportOptions options;
  options.keep_opaque.insert(keep_opaque.begin(), keep_opaque.end());
  for (const std::string& dim : dims) {
    const size_t equals = dim.find('=');
    const char* end = dim.c_str() + dim.size();
    int64_t extent = -1;
    const bool parsed = equals != std::string::npos && equals > 0 &&
                        std::from_chars(dim.c_str() + equals + 1, end, extent).ptr == end && extent >= 0;
    if (!parsed) {
      print_error(fmt::format("--dim '{}' must be NAME=EXTENT with a non-negative EXTENT", dim));
      return kUsageError;
    }
    options.dims[dim.substr(0, equals)] = extent;
  }

  std::string error;
  std::unique_ptr<dpl::SourceFile> source = dpl::SourceFile::load(input, error);
  if (source == nullptr) {
    print_error(error);
    return kInputError;
  }
  dpl::DiagnosticEngine diags;
  dpl::OnnxImportStats counts;
  std::unique_ptr<dpl::Module> module = dpl::import_onnx(*source, diags, options, &counts);
  diags.print(std::cerr);
  if (module == nullptr) return kInputError;
  // The importer builds through the registry's type inference; the verifier guards the invariants it relies on.
  if (std::string problem = dpl::verify(*module); !problem.empty()) {
    print_error(fmt::format("{}: the imported graph is malformed: {}", input, problem));
    return kInputError;
  }

  if (stats) {
    std::cerr << fmt::format("{}: {} ONNX nodes, {} mapped, {} weights as parameters\n", input, counts.onnx_nodes,
                             counts.mapped_nodes, counts.weights);
    for (const auto& [op, count] : counts.opaque_ops) std::cerr << fmt::format("  opaque {}: {}\n", op, count);
  }
  const std::string text = dpl::print_module(*module);
  if (output.empty()) {
    std::cout << text;
    return kOk;
  }
  if (!dpl::write_file_atomically(output, text, error)) {
    print_error(error);
    return kInputError;
  }
  return kOk;
}
