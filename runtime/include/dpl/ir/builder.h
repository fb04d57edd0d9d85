// A small builder API (like Relax's BlockBuilder) for programs that construct graphs.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpl/ir/graph.h"

namespace dpl {

// Thrown by Builder when a call does not type-check or names an unknown op or attribute.
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Builder {
 public:
  using KwArg = std::pair<std::string_view, AttrValue>;

  explicit Builder(Function& function) : function_(function) {}

  Node* param(std::string name, TypeRef type);
  Node* scalar(double value, DType dtype = DType::Float32);
  // `op` as in TVMScript without `R.`: "add", "nn.softmax". Unnamed keyword attributes take their defaults.
  Node* call(std::string_view op, std::initializer_list<Node*> operands, std::initializer_list<KwArg> attrs = {});
  Node* call(std::string_view op, const std::vector<Node*>& operands, const std::vector<KwArg>& attrs);
  Node* shape(std::vector<int64_t> dims);
  Node* tuple(std::initializer_list<Node*> fields);
  Node* item(Node* tuple, int64_t index);
  void output(Node* value);

  Function& function() { return function_; }

 private:
  Function& function_;
};

}  // namespace dpl
