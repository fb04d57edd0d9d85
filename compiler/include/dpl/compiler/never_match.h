// Patterns no graph can match: operands of a kind the op never takes, guards that contradict themselves, the
// pattern's types or the op's typing (docs/semantics.md, "Patterns that never match").
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// What kind of value a graph node is, as the type inference of an op's operands tells them apart.
enum class ValueKind : uint8_t { Tensor, Shape, Tuple, Untyped };
inline constexpr size_t kValueKinds = 4;

// Which kinds of value a built-in op's type inference accepts at each operand position and returns, found by
// probing it with values of each kind about which nothing else is known (any rank, any dtype) and the default
// attributes. `known` is false when no probe type-checks (then nothing is claimed).
struct KindSignature {
  bool known = false;
  std::vector<std::array<bool, kValueKinds>> accepts;  // per operand position, per ValueKind
  std::array<bool, kValueKinds> results{};
};
// The signature of op `op` called with `operand_count` operands (probed once per thread and op); unknown for ops
// that are not built in (declared and opaque ops), and for more than 5 operands.
KindSignature kind_signature(const OpRegistry& registry, OpId op, size_t operand_count);

// Why no graph can match the alternative-free pattern `alternative` with `guard` (may be null) holding: the
// reason, the part of the pattern or guard that rules matches out, and notes at the op or conditions responsible.
// Conservative: nullopt when unsure.
struct NeverMatch {
  std::string reason;
  SourceLoc loc;
  std::vector<std::pair<SourceLoc, std::string>> notes;
};
std::optional<NeverMatch> never_matches(const Pattern& alternative, const Expr* guard, const OpRegistry& registry);

// For each rewrite rule and partition of `file`: records the alternatives that can never match in Rule::dropped,
// and reports an error at the left-hand side when every alternative is dropped (with a note per alternative);
// for a multi-root rule, the same error when every alternative of one of its single roots can never match.
// Expects a file that sema checked without errors.
void check_never_matching(AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry);

}  // namespace dpl::compiler
