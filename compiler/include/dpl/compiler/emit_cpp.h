// C++ emitter: turns a checked AST into the generated `<stem>.dpl.h` / `<stem>.dpl.cpp` pair (design brief §4).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"

namespace dpl::compiler {

struct EmitOptions {
  std::string namespace_name = "dpl_passes";  // may be nested: "my::passes"
  // The source in this many files, for parallel compiles of large rule files: the decision-tree functions and the
  // multi-root rules' functions are spread over them (parts 2.. hold only those), balanced by size.
  size_t parts = 1;
};

struct EmittedSource {
  std::string name;  // "<stem>.dpl.part2.cpp"
  std::string text;
};

struct EmittedCpp {
  std::string header_name;  // "<stem>.dpl.h"
  std::string source_name;  // "<stem>.dpl.cpp"
  std::string header;
  std::string source;
  std::vector<EmittedSource> parts;  // parts 2..EmitOptions::parts of the source
};

// The name of part `part` (0-based; part 0 is "<stem>.dpl.cpp") of a source split into parts: "<stem>.dpl.part2.cpp".
std::string part_source_name(const std::string& stem, size_t part);

// `file` must have passed sema. The output depends only on the file's contents, its base name and the options,
// so it is byte-identical across machines and runs.
// True for a C++ keyword, which cannot name a function the generated code calls (an extern).
bool is_cpp_keyword(std::string_view name);

EmittedCpp emit_cpp(const AstFile& file, const EmitOptions& options, const OpRegistry& registry = OpRegistry::global());

// The decision tree of each pass of `file` (checked by sema) as indented text, for `dplc --emit=plan`: per root op,
// the steps shared by several rules once under the rules that share them, then each rule's own steps and tail.
std::string emit_plan(const AstFile& file, const OpRegistry& registry = OpRegistry::global());

}  // namespace dpl::compiler
