// A natives library whose is_matrix conflicts with the test library's (a rewriter, not a predicate).
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/natives.h"

namespace {
dpl::Node* conflicting_is_matrix(dpl::Rewriter&, dpl::Node* x) { return x; }
}  // namespace

static const dpl::NativeRegistration<&conflicting_is_matrix> is_matrix_registration("is_matrix");
