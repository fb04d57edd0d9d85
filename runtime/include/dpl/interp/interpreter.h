// The reference interpreter: evaluates a function of a module on concrete tensors, one op at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dpl/interp/tensor.h"
#include "dpl/ir/graph.h"

namespace dpl {

// A runtime value: a tensor, a tuple of values, or a shape (the value of `R.shape([...])`).
class Value {
 public:
  enum class Kind : uint8_t { Tensor, Tuple, Shape };

  Value() : kind_(Kind::Tuple) {}                                            // the empty tuple
  Value(Tensor tensor) : kind_(Kind::Tensor), tensor_(std::move(tensor)) {}  // NOLINT: implicit by design
  static Value tuple(std::vector<Value> fields);
  static Value shape(std::vector<int64_t> dims);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_tuple() const { return kind_ == Kind::Tuple; }
  bool is_shape() const { return kind_ == Kind::Shape; }
  const Tensor& tensor() const { return tensor_; }              // Tensor only
  const std::vector<Value>& fields() const { return fields_; }  // Tuple only
  const std::vector<int64_t>& dims() const { return dims_; }    // Shape only

  // `float32(2, 3)`, `(float32(2), int64())`, `shape(1, 11)`.
  std::string type_str() const;

 private:
  Kind kind_;
  Tensor tensor_;
  std::vector<Value> fields_;
  std::vector<int64_t> dims_;
};

// Thrown by kernels (built-in or registered) for input they cannot evaluate; evaluate() turns it into an error.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Evaluates one call of an op: the call node (op, attributes, type) and its operand values.
using KernelFn = std::function<Value(const Node& call, std::span<const Value> operands)>;

struct EvalOptions {
  // Values of symbolic dimensions (`n` in `R.Tensor((n, 4))`) that the arguments do not determine.
  std::map<std::string, int64_t, std::less<>> dims;
  // No value may hold more elements: a graph asking for an absurd allocation gets an error, not the OOM killer.
  // The largest tensor of the bundled models has 65.5 million elements.
  int64_t max_elements = int64_t{1} << 28;
  // Check every computed value against its node's declared type (dtype, rank, static dims).
  bool check_types = true;
};

struct EvalResult {
  Value value;
  std::string error;  // empty on success
  bool ok() const { return error.empty(); }
};

class Interpreter {
 public:
  explicit Interpreter(EvalOptions options = {});

  // Evaluates `function` (which belongs to `module`; calls of other functions evaluate the callee) on `args`,
  // one per parameter. Never throws for bad graphs or arguments: errors come back as a message naming the
  // function, binding and op.
  EvalResult evaluate(const Module& module, const Function& function, std::span<const Tensor> args) const;
  EvalResult evaluate(const Module& module, const Function& function, std::span<const Value> args) const;
  // A function without a module: calls of other functions are errors.
  EvalResult evaluate(const Function& function, std::span<const Tensor> args) const;

  // Supplies (or replaces) the kernel of `op`, e.g. for user ops declared in a .dpl file.
  void register_kernel(OpId op, KernelFn kernel);
  // True when calls of `op` can be evaluated (a built-in or registered kernel exists).
  bool has_kernel(OpId op) const;

  const EvalOptions& options() const { return options_; }

 private:
  EvalOptions options_;
  std::map<OpId, KernelFn> custom_kernels_;
};

// How random_inputs draws parameter values.
struct InputOptions {
  // Values of symbolic dimensions in parameter types.
  std::map<std::string, int64_t, std::less<>> dims;
  // Ranges chosen by parameter name; they take precedence over what usage suggests.
  std::map<std::string, ValueRange, std::less<>> ranges;
  // Weights (matmul/dense/conv weight operands) drawn from ±1/sqrt(fan_in), so deep models stay finite.
  bool scale_weights = true;
  // No parameter may hold more elements.
  int64_t max_elements = int64_t{1} << 28;
};

struct InputsResult {
  std::vector<Tensor> tensors;
  std::string error;  // empty on success
  bool ok() const { return error.empty(); }
};

// Random tensors of the declared parameter types, deterministic in `seed`: parameter i's values depend only on
// the seed, i, its type and its range, not on the other parameters. Ranges follow each parameter's use, looking
// through layout ops (reshape, permute_dims, expand_dims, strided_slice, astype to an integer, ...):
//  - integers used as `take` indices: [0, extent of the indexed axis) -- token ids and positions stay inside
//    their tables;
//  - other integers that flow into a boolean (astype to bool, where's condition, logical ops), through
//    elementwise ops: {0, 1} -- attention masks;
//  - floats used as a batch_norm variance, or by sqrt/rsqrt/log: [0.5, 1.5);
//  - floats used as a matmul/dense/conv weight: [-1/sqrt(fan_in), 1/sqrt(fan_in)) when scale_weights;
//  - anything else: default_range(dtype).
InputsResult random_inputs(const Function& function, uint64_t seed, const InputOptions& options = {});

// Compares values of the same structure (tuples field by field) with compare(Tensor, ...); the result describes
// the field with the largest error, or the first structural difference. `path` names the field ("output[1]").
struct ValueComparison {
  bool within_tolerance = true;
  std::string path;
  Comparison worst;
  explicit operator bool() const { return within_tolerance; }
  std::string str() const;
};
ValueComparison compare(const Value& actual, const Value& expected, std::optional<Tolerance> tolerance = std::nullopt);

}  // namespace dpl
