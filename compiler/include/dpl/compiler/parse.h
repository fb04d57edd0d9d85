// Parser stage: .dpl text -> AST, via the ANTLR parser generated from grammar/Dpl.g4.
#pragma once

#include <memory>

#include "dpl/compiler/ast.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Parses `source`, reporting every lexical and syntax error to `diags`; returns nullptr when there was one.
// Well-formed syntax that does not belong where it appears (`1` as a pattern) is reported too, but only drops
// the rule it is in, so that later stages still check the rest of the file.
std::unique_ptr<AstFile> parse(const SourceFile& source, DiagnosticEngine& diags);

}  // namespace dpl::compiler
