// The compiler driver: parse, read imports, expand pattern declarations, check, and (without errors) emit C++.
#include "dpl/compiler/compile.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "dpl/compiler/macros.h"
#include "dpl/compiler/parse.h"
#include "dpl/compiler/sema.h"

namespace dpl::compiler {

namespace {

namespace fs = std::filesystem;

// Reads the imports of `file` (and theirs), expanding their declarations; returns the declarations visible in
// `file` from its imports. `active` holds the files being read, to report import cycles.
class ImportReader {
 public:
  ImportReader(CompileResult& result, DiagnosticEngine& diags, const SourceReader& read)
      : result_(result), diags_(diags), read_(read) {}

  std::vector<const PatternMacro*> read_imports(const AstFile& file, std::vector<std::string>& active) {
    std::vector<const PatternMacro*> visible;
    fs::path directory = fs::path(file.source->path()).parent_path();
    for (const Import& import : file.imports) {
      fs::path path = (directory / import.path).lexically_normal();
      std::string key = fs::weakly_canonical(path).string();
      if (std::find(active.begin(), active.end(), key) != active.end()) {
        diags_.error(import.loc, "import cycle: '" + import.path + "' imports this file again");
        continue;
      }
      if (auto done = loaded_.find(key); done != loaded_.end()) {
        append(visible, done->second);
        continue;
      }
      std::string error;
      std::unique_ptr<SourceFile> source = read_(path.string(), error);
      if (source == nullptr) {
        diags_.error(import.loc, "cannot import '" + import.path + "': " + (error.empty() ? "no such file" : error));
        continue;
      }
      result_.inputs.push_back(path.string());
      auto imported = std::make_unique<ImportedFile>();
      imported->source = std::move(source);
      imported->ast = parse(*imported->source, diags_);
      if (imported->ast == nullptr) {
        result_.imports.push_back(std::move(imported));
        continue;
      }
      active.push_back(key);
      std::vector<const PatternMacro*> inner = read_imports(*imported->ast, active);
      active.pop_back();
      expand_macros(*imported->ast, inner, diags_);
      std::vector<const PatternMacro*> exported = inner;
      for (const PatternMacro& macro : imported->ast->macros) exported.push_back(&macro);
      loaded_[key] = exported;
      append(visible, exported);
      result_.imports.push_back(std::move(imported));
    }
    return visible;
  }

 private:
  static void append(std::vector<const PatternMacro*>& to, const std::vector<const PatternMacro*>& from) {
    for (const PatternMacro* macro : from) {
      if (std::find(to.begin(), to.end(), macro) == to.end()) to.push_back(macro);
    }
  }

  CompileResult& result_;
  DiagnosticEngine& diags_;
  const SourceReader& read_;
  std::map<std::string, std::vector<const PatternMacro*>> loaded_;
};

}  // namespace

std::unique_ptr<SourceFile> read_source_from_disk(const std::string& path, std::string& error) {
  std::error_code code;
  return fs::is_regular_file(path, code) ? SourceFile::load(path, error) : nullptr;
}

CompileResult compile(const SourceFile& source, DiagnosticEngine& diags, const CompileOptions& options) {
  CompileResult result;
  result.inputs.push_back(source.path());
  size_t errors_before = diags.error_count();
  result.ast = parse(source, diags);
  if (result.ast == nullptr) return result;
  std::vector<std::string> active = {fs::weakly_canonical(source.path()).string()};
  std::vector<const PatternMacro*> imported = ImportReader(result, diags, options.read_import).read_imports(*result.ast, active);
  if (expand_macros(*result.ast, imported, diags)) check(*result.ast, diags);
  // dplc reads the files its tests name: a broken one is an error, so the build re-runs dplc when they change.
  for (const RuleTest& test : result.ast->tests) {
    for (const std::string* path : {&test.input_path, &test.expect_path}) {
      if (!path->empty()) result.inputs.push_back(*path);
    }
  }
  if (diags.error_count() > errors_before) return result;
  if (options.generate) result.cpp = emit_cpp(*result.ast, options.emit);
  result.ok = true;
  return result;
}

std::unique_ptr<CheckedFile> check_file(const std::string& path, std::ostream& messages) {
  auto checked = std::make_unique<CheckedFile>();
  std::string error;
  checked->source = SourceFile::load(path, error);
  if (checked->source == nullptr) {
    messages << "dplc: error: " << error << "\n";
    return nullptr;
  }
  DiagnosticEngine diags;
  CompileOptions options;
  options.generate = false;
  checked->compiled = compile(*checked->source, diags, options);
  diags.print(messages);
  if (!checked->compiled.ok) return nullptr;
  return checked;
}

}  // namespace dpl::compiler
