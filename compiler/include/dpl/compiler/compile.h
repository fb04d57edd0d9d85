// The compiler driver: wires parse -> imports and pattern declarations -> sema -> C++ emission for one file.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/compiler/emit_cpp.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Reads the file at `path` for an `import`: null (and `error`, or nothing for a missing file) when it cannot.
using SourceReader = std::function<std::unique_ptr<SourceFile>(const std::string& path, std::string& error)>;

// The file on disk: what compile() reads imports with unless told otherwise.
std::unique_ptr<SourceFile> read_source_from_disk(const std::string& path, std::string& error);

struct CompileOptions {
  EmitOptions emit;
  bool generate = true;  // false: stop after checking (dplc --check)
  // How imports are read; the language server reads the editor's unsaved text of the files it has open.
  SourceReader read_import = read_source_from_disk;
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
// `source.path()`, with `options.read_import`.
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
