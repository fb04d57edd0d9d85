// Helpers shared by the interpreter tests: one-function graphs built op by op, literal tensors, value checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dpl/interp/interpreter.h"
#include "dpl/interp/tensor.h"
#include "dpl/ir/builder.h"
#include "dpl/ir/graph.h"

namespace dpl::interp_test {

using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

inline TypeRef tensor_type(DType dtype, const Ints& shape) {
  std::vector<Dim> dims;
  for (int64_t extent : shape) dims.push_back(Dim::fixed(extent));
  return Type::tensor(dtype, dims);
}

inline Tensor f32(Ints shape, Doubles values) { return Tensor::from_values(DType::Float32, shape, values); }
inline Tensor i64(Ints shape, Doubles values) { return Tensor::from_values(DType::Int64, shape, values); }
inline Tensor boolean(Ints shape, Doubles values) { return Tensor::from_values(DType::Bool, shape, values); }

// A module with one function `main`, built with the Builder, evaluated by the interpreter.
class TestGraph {
 public:
  TestGraph() : function_(module_.add_function("main")), builder_(function_) {}

  Builder& b() { return builder_; }
  Function& function() { return function_; }
  Module& module() { return module_; }

  Node* param(std::string name, DType dtype, const Ints& shape) {
    return builder_.param(std::move(name), tensor_type(dtype, shape));
  }
  Node* param(std::string name, const Tensor& like) { return param(std::move(name), like.dtype(), like.shape()); }

  // Evaluates with `output` as the function's output.
  EvalResult run(Node* output, const std::vector<Tensor>& args, const EvalOptions& options = {}) {
    builder_.output(output);
    return Interpreter(options).evaluate(module_, function_, args);
  }

  // Evaluates and expects success.
  Value eval(Node* output, const std::vector<Tensor>& args) {
    EvalResult result = run(output, args);
    EXPECT_TRUE(result.ok()) << result.error;
    return result.value;
  }

 private:
  Module module_;
  Function& function_;
  Builder builder_;
};

// Checks a tensor value's dtype, shape and elements (within `tolerance`, absolute).
inline void expect_tensor(const Value& value, DType dtype, const Ints& shape, const Doubles& expected,
                          double tolerance = 1e-6) {
  ASSERT_TRUE(value.is_tensor()) << value.type_str();
  const Tensor& tensor = value.tensor();
  EXPECT_EQ(tensor.dtype(), dtype) << tensor.type_str();
  ASSERT_EQ(tensor.shape(), shape) << tensor.type_str();
  const std::vector<double> actual = tensor.values();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i << " of " << tensor.str();
  }
}

inline void expect_f32(const Value& value, const Ints& shape, const Doubles& expected, double tolerance = 1e-5) {
  expect_tensor(value, DType::Float32, shape, expected, tolerance);
}

}  // namespace dpl::interp_test
