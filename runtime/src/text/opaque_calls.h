// Opaque ONNX ops registered from the calls of a TVMScript file before it is read (private to the text reader).
#pragma once

#include "dpl/support/diagnostics.h"

namespace dpl::text {

// Registers every op the file calls as `R.onnx.X(..., result_types="...")` that the registry does not know yet:
// any number of operands, the attributes its first call names (result_types last), each of the kind that holds
// the values all its calls give it (dpl/ir/opaque_ops.h). A call that omits an attribute another call of the op
// gives is an error (in `diags`, at the call). Ops already registered (by an import, an `op` declaration or a file
// read earlier) are left as they are: the reader checks the calls against them.
void register_opaque_calls(const SourceFile& file, DiagnosticEngine& diags);

}  // namespace dpl::text
