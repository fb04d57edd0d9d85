// Evaluating two versions of a function on the same random inputs and comparing the results (equivalence.h).
#include "dpl/interp/equivalence.h"

namespace dpl {

namespace {

EvalResult evaluate(const Interpreter& interpreter, const Module* module, const Function& function,
                    std::span<const Tensor> args) {
  return module != nullptr ? interpreter.evaluate(*module, function, args) : interpreter.evaluate(function, args);
}

}  // namespace

std::string EquivalenceResult::str() const {
  switch (kind) {
    case Kind::Equal:
      return comparison.str();
    case Kind::Different:
      return "outputs differ: " + comparison.str();
    case Kind::InputsFail:
      return "cannot draw random inputs: " + error;
    case Kind::BeforeFails:
      return "cannot evaluate the original: " + error;
    case Kind::AfterFails:
      return "cannot evaluate the rewritten function: " + error;
  }
  return error;
}

EquivalenceResult compare_on_random_inputs(const Module* before_module, const Function& before,
                                           const Module* after_module, const Function& after, uint64_t seed,
                                           const InputOptions& options, std::optional<Tolerance> tolerance) {
  EquivalenceResult result;
  const InputsResult inputs = random_inputs(before, seed, options);
  if (!inputs.ok()) {
    result.kind = EquivalenceResult::Kind::InputsFail;
    result.error = inputs.error;
    return result;
  }
  const Interpreter interpreter;
  const EvalResult expected = evaluate(interpreter, before_module, before, inputs.tensors);
  if (!expected.ok()) {
    result.kind = EquivalenceResult::Kind::BeforeFails;
    result.error = expected.error;
    return result;
  }
  const EvalResult actual = evaluate(interpreter, after_module, after, inputs.tensors);
  if (!actual.ok()) {
    result.kind = EquivalenceResult::Kind::AfterFails;
    result.error = actual.error;
    return result;
  }
  result.comparison = compare(actual.value, expected.value, tolerance);
  if (!result.comparison) result.kind = EquivalenceResult::Kind::Different;
  return result;
}

}  // namespace dpl
