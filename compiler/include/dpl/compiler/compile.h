// The compiler driver: wires parse -> imports and pattern declarations -> sema -> C++ emission for one file.
#pragma once

#include <memory>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/compiler/emit_cpp.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

struct CompileOptions {
  EmitOptions emit;
  bool generate = true;  // false: stop after checking (dplc --check)
};

// A file read because of an `import`, kept alive as long as diagnostics may point into it.
struct ImportedFile {
  std::unique_ptr<SourceFile> source;
  std::unique_ptr<AstFile> ast;
};

struct CompileResult {
  std::unique_ptr<AstFile> ast;     // the checked AST; null when the file did not parse
  std::optional<EmittedCpp> cpp;    // only when there was no error and `generate` was set
  std::vector<std::string> inputs;  // every file the output depends on (the rule file first), for depfiles
  std::vector<std::unique_ptr<ImportedFile>> imports;
  bool ok = false;  // no errors (warnings allowed)
};

// Compiles `source`; every diagnostic of the run goes to `diags`. Imports are read relative to the directory of
// `source.path()`.
CompileResult compile(const SourceFile& source, DiagnosticEngine& diags, const CompileOptions& options = {});

// A rule file read and checked, no C++ generated (dplc --test, --verify); its diagnostics point into `source`.
struct CheckedFile {
  std::unique_ptr<SourceFile> source;
  CompileResult compiled;
};

// Reads and checks `path`, printing every diagnostic of the run to `messages`; null when the file cannot be read
// or has errors.
std::unique_ptr<CheckedFile> check_file(const std::string& path, std::ostream& messages);

}  // namespace dpl::compiler
