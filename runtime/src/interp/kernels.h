// Internal to the interpreter: the built-in kernel table and what a kernel sees of its call.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dpl/interp/interpreter.h"
#include "dpl/ir/graph.h"
#include "dpl/ir/op_registry.h"

namespace dpl::interp {

[[noreturn]] void fail(std::string message);  // throws EvalError

// A call's operand values and attributes. Attributes are looked up by their registry name, so kernels do not
// depend on schema order; optional attributes (layouts, modes) fall back to their Relax default when the
// registry does not declare them.
class KernelArgs {
 public:
  KernelArgs(const Node& call, std::span<const Value> operands, int64_t max_elements);

  const Node& call() const { return call_; }
  const OpInfo& op() const { return op_; }
  size_t num_operands() const { return operands_.size(); }
  const Value& operand(size_t i) const;
  const Tensor& tensor(size_t i) const;
  // Operand `i` when it is a shape value (or a 1-D integer tensor).
  std::vector<int64_t> shape_operand(size_t i) const;

  bool has_attr(std::string_view name) const;
  int64_t int_attr(std::string_view name) const;
  std::optional<int64_t> opt_int_attr(std::string_view name) const;
  double float_attr(std::string_view name) const;
  std::optional<double> opt_float_attr(std::string_view name) const;
  bool flag(std::string_view name, bool fallback) const;
  std::string string_attr(std::string_view name, std::string_view fallback) const;  // None/absent: fallback
  std::vector<int64_t> ints_attr(std::string_view name) const;                      // an int reads as [int]
  std::optional<std::vector<int64_t>> opt_ints_attr(std::string_view name) const;
  std::optional<DType> dtype_attr(std::string_view name) const;  // None, "" and "void" read as nullopt
  const AttrValue* find_attr(std::string_view name) const;       // nullptr when the registry has none

  // A zero-filled buffer for a result of `shape`, after checking the shape and the element limit.
  std::vector<double> buffer(std::span<const int64_t> shape) const;

 private:
  const AttrValue& attr(std::string_view name) const;  // fails when absent

  const Node& call_;
  const OpInfo& op_;
  std::span<const Value> operands_;
  int64_t max_elements_;
};

using BuiltinKernel = Value (*)(const KernelArgs& args);

// The kernel of a built-in op, or nullptr.
BuiltinKernel builtin_kernel(OpId op);

}  // namespace dpl::interp
