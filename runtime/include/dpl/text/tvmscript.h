// Reading and printing the TVMScript Relax text subset (`@R.function`, `@I.ir_module class`).
#pragma once

#include <memory>
#include <string>

#include "dpl/ir/graph.h"
#include "dpl/support/diagnostics.h"

namespace dpl {

// Parses a whole file. Every call is type-checked with the op registry; a binding's annotation must agree with
// the inferred type. On any error returns nullptr and reports every error found (file:line:col) to `diags`.
std::unique_ptr<Module> read_module(const SourceFile& source, DiagnosticEngine& diags);

// Prints like TVM's `show()`: a lone function as `@R.function`, a multi-function module as `@I.ir_module`.
// Every binding carries its type annotation; every attribute of a call is printed (defaults included).
std::string print_module(const Module& module);
std::string print_function(const Function& function);

}  // namespace dpl
