// The natives library of the tests: tests/compiler/run/natives.h's predicate and rewriter, registered by name.
#include "natives.h"

#include "dpl/rewrite/natives.h"

DPL_NATIVE(is_matrix);
DPL_NATIVE(flip_subtract);
