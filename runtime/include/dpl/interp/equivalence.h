// Whether two versions of a function compute the same: both evaluated on the same seeded random inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dpl/interp/interpreter.h"
#include "dpl/interp/tensor.h"
#include "dpl/ir/graph.h"

namespace dpl {

struct EquivalenceResult {
  enum class Kind : uint8_t { Equal, Different, InputsFail, BeforeFails, AfterFails };
  Kind kind = Kind::Equal;
  std::string error;           // InputsFail, BeforeFails, AfterFails: what went wrong
  ValueComparison comparison;  // Equal, Different: the outputs compared
  bool equal() const { return kind == Kind::Equal; }
  // "outputs differ: max abs error ...", "cannot evaluate the original: ...", or the comparison when equal.
  std::string str() const;
};

// Evaluates `before` and `after` on one set of inputs drawn from `before`'s parameters (random_inputs with `seed`
// and `options`: it picks ranges from how parameters are used, which a rewrite may change) and compares the
// outputs within `tolerance` (default: by dtype). A function's module (null for a lone function) resolves calls
// of other functions.
EquivalenceResult compare_on_random_inputs(const Module* before_module, const Function& before,
                                           const Module* after_module, const Function& after, uint64_t seed,
                                           const InputOptions& options = {},
                                           std::optional<Tolerance> tolerance = std::nullopt);

}  // namespace dpl
