// Generates random rule sets (checked with dplc's front end) and random graphs over a handful of ops.
#include "random_rules.h"

#include <algorithm>
#include <vector>

#include "dpl/compiler/compile.h"

namespace dpl::testing {

uint64_t Random::next() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

const char* const kUnary[] = {"nn.relu", "exp", "negative"};
const char* const kBinary[] = {"add", "multiply", "subtract", "maximum"};

template <size_t N>
const char* pick(Random& random, const char* const (&items)[N]) {
  return items[random.below(N)];
}

// One rule. Names start with `_` so that a name used once is not reported as unused.
class RuleWriter {
 public:
  explicit RuleWriter(Random& random) : random_(random) {}

  std::string rule(const std::string& name) {
    std::string lhs = call(2 + static_cast<int>(random_.below(2)), /*root=*/true);
    std::string text = "  rule " + name + ": " + lhs;
    if (random_.chance(0.45)) text += " where " + guard();
    text += " => ";
    if (random_.chance(0.2)) {  // the let's value is used, as a let nobody uses is reported
      text += "let _u = " + expr(2) + "; ";
      values_.push_back("_u");
      text += std::string(pick(random_, kBinary)) + "(_u, " + expr(2) + ")";
    } else {
      text += expr(3);
    }
    return text + ";\n";
  }

 private:
  std::string pattern(int depth) {
    if (depth <= 0 || random_.chance(0.35)) return leaf();
    return call(depth, false);
  }

  std::string call(int depth, bool root) {
    std::string text;
    switch (random_.below(root ? 8 : 9)) {
      case 0:
      case 1:
        text = std::string(pick(random_, kUnary)) + "(" + pattern(depth - 1) + ")";
        break;
      case 2:
      case 3: {
        std::string a = pattern(depth - 1);
        text = std::string(pick(random_, kBinary)) + "(" + a + ", " + pattern(depth - 1) + ")";
        break;
      }
      case 4: {
        std::string a = pattern(depth - 1);
        std::string b = pattern(depth - 1);
        if (op_var_.empty() && random_.chance(0.5)) {
          op_var_ = "_o";
          text = "(_o: add | subtract)(" + a + ", " + b + ")";
        } else {
          text = std::string(random_.chance(0.5) ? "(add | multiply)" : "(maximum | subtract)") + "(" + a + ", " + b + ")";
        }
        break;
      }
      case 5: {
        std::string operand = pattern(depth - 1);
        switch (random_.below(3)) {
          case 0:
            text = "permute_dims(" + operand + ")";
            break;
          case 1:
            text = "permute_dims(" + operand + ", axes=[1, 0])";
            break;
          default:
            text = "permute_dims(" + operand + ", axes=_ax)";
            axes_captured_ = true;
        }
        break;
      }
      case 6: {
        std::string operand = pattern(depth - 1);
        if (random_.chance(0.5)) {
          text = "sum(" + operand + ", axis=[1], keepdims=True)";
        } else {
          text = "sum(" + operand + ", keepdims=_kd)";
          keepdims_captured_ = true;
        }
        break;
      }
      case 7: {  // a named sub-pattern, usable again later
        std::string inner = call(depth, root);
        std::string name = "_t" + std::to_string(counter_++);
        values_.push_back(name);
        return name + ": " + inner;
      }
      default:
        text = std::string(random_.chance(0.5) ? "nn.relu" : "exp") + "?(" + pattern(depth - 1) + ")";
    }
    return text;
  }

  std::string leaf() {
    switch (random_.below(8)) {
      case 0:
      case 1:
        if (!values_.empty()) return values_[random_.below(values_.size())];  // a repeated variable
        [[fallthrough]];
      case 2: {
        std::string name = "_x" + std::to_string(counter_++);
        values_.push_back(name);
        return name;
      }
      case 3:
        return "_";
      case 4: {
        const char* constants[] = {"const", "const(1.0)", "const(2)", "const(0.5)", "const(1.0, float32)"};
        if (random_.chance(0.4)) {
          std::string name = "_c" + std::to_string(counter_++);
          constants_.push_back(name);
          values_.push_back(name);
          return name + ": const";
        }
        return constants[random_.below(std::size(constants))];
      }
      case 5: {
        std::string name = "_x" + std::to_string(counter_++);
        values_.push_back(name);
        dims_ = true;
        const char* types[] = {"Tensor[(_d0, _d1)]", "Tensor[(4, _)]", "Tensor[float32]", "Tensor[(_d1, _d0), float32]"};
        return name + ": " + types[random_.below(std::size(types))];
      }
      case 6:
        return random_.chance(0.5) ? "var()" : "var(\"p0\")";
      default: {
        std::string name = "_x" + std::to_string(counter_++);
        values_.push_back(name);
        return name;
      }
    }
  }

  std::string atom() {
    std::vector<std::string> atoms;
    if (!values_.empty()) {
      const std::string& v = values_[random_.below(values_.size())];
      atoms.push_back(v + ".rank == 2");
      atoms.push_back(v + ".uses == 1");
      atoms.push_back(v + ".uses > 1");
      atoms.push_back(v + ".shape[0] == 4");
      atoms.push_back(v + ".shape[-1] == 1");
      atoms.push_back(v + ".dtype == float32");
    }
    if (dims_) {
      atoms.push_back("_d0 > 2");
      atoms.push_back("_d0 == _d1");
    }
    if (!constants_.empty()) atoms.push_back(constants_[random_.below(constants_.size())] + ".value > 0.75");
    if (keepdims_captured_) atoms.push_back("_kd == True");
    if (axes_captured_) atoms.push_back("_ax == [1, 0]");
    if (atoms.empty()) return "True";
    return atoms[random_.below(atoms.size())];
  }

  std::string guard() {
    std::string text = atom();
    if (random_.chance(0.4)) text += std::string(random_.chance(0.5) ? " && " : " || ") + atom();
    if (random_.chance(0.15)) text = "!(" + text + ")";
    return text;
  }

  std::string expr(int depth) {
    if (depth <= 0 || random_.chance(0.3)) {
      if (!values_.empty() && random_.chance(0.85)) return values_[random_.below(values_.size())];
      const char* constants[] = {"const(2.0)", "const(0.5)", "const(1.0, float32)"};
      return constants[random_.below(std::size(constants))];
    }
    switch (random_.below(7)) {
      case 0:
      case 1:
        return std::string(pick(random_, kUnary)) + "(" + expr(depth - 1) + ")";
      case 2:
      case 3: {
        std::string a = expr(depth - 1);
        std::string op = !op_var_.empty() && random_.chance(0.4) ? op_var_ : pick(random_, kBinary);
        return op + "(" + a + ", " + expr(depth - 1) + ")";
      }
      case 4:
        return "permute_dims(" + expr(depth - 1) + (axes_captured_ ? ", axes=_ax)" : ", axes=[1, 0])");
      case 5:
        return "sum(" + expr(depth - 1) + (keepdims_captured_ ? ", axis=[1], keepdims=_kd)" : ", axis=[0], keepdims=True)");
      default:
        return "nn.relu(" + expr(depth - 1) + ")";
    }
  }

  Random& random_;
  std::vector<std::string> values_;
  std::vector<std::string> constants_;
  std::string op_var_;
  bool axes_captured_ = false;
  bool keepdims_captured_ = false;
  bool dims_ = false;
  int counter_ = 0;
};

bool checks(const std::string& text) {
  SourceFile source("random.dpl", text);
  DiagnosticEngine diags;
  compiler::CompileOptions options;
  options.generate = false;
  return compiler::compile(source, diags, options).ok;
}

}  // namespace

std::string random_rule_file(uint64_t seed, const std::string& pass_name, int num_rules) {
  Random random(seed);
  std::string rules;
  for (int i = 0; i < num_rules; ++i) {
    std::string name = "r" + std::to_string(i);
    for (;;) {
      std::string rule = RuleWriter(random).rule(name);
      if (checks("pass check {\n" + rule + "}\n")) {
        rules += rule;
        break;
      }
    }
  }
  return "// Generated by tests/interp_diff (random_rules.cpp, seed " + std::to_string(seed) + "); do not edit.\n" +
         "pass " + pass_name + " {\n" + rules + "}\n";
}

void build_random_graph(Function& function, uint64_t seed) {
  Random random(seed);
  const std::vector<std::vector<Dim>> shapes = {
      {Dim::fixed(4), Dim::fixed(4)}, {Dim::fixed(4), Dim::fixed(4)}, {Dim::fixed(1), Dim::fixed(4)},
      {Dim::fixed(4), Dim::fixed(1)}};
  std::vector<Node*> values;
  const size_t num_params = 1 + random.below(3);
  for (size_t i = 0; i < num_params; ++i) {
    values.push_back(function.add_param("p" + std::to_string(i),
                                        Type::tensor(DType::Float32, shapes[random.below(shapes.size())])));
  }
  const double scalars[] = {0.5, 1.0, 2.0, 3.0};
  for (size_t i = 0, n = random.below(3); i < n; ++i) {
    Literal literal;
    literal.values.push_back(scalars[random.below(std::size(scalars))]);
    values.push_back(function.add_constant(literal));
  }
  // Operands mostly among the last few values, so that chains and diamonds form.
  auto operand = [&] {
    size_t window = std::min<size_t>(values.size(), 4);
    if (random.chance(0.7)) return values[values.size() - 1 - random.below(window)];
    return values[random.below(values.size())];
  };
  const OpRegistry& registry = OpRegistry::global();
  const size_t num_calls = 3 + random.below(18);
  Node* last = values.back();
  for (size_t i = 0; i < num_calls; ++i) {
    std::string error;
    Node* node = nullptr;
    switch (random.below(6)) {
      case 0:
      case 1: {
        Node* operands[] = {operand(), operand()};
        const char* op = kBinary[random.below(std::size(kBinary))];
        node = function.add_call(registry.find(op)->id, operands, {}, error);
        break;
      }
      case 2:
      case 3: {
        Node* operands[] = {operand()};
        node = function.add_call(registry.find(kUnary[random.below(std::size(kUnary))])->id, operands, {}, error);
        break;
      }
      case 4: {
        Node* operands[] = {operand()};
        AttrList attrs = {random.chance(0.5) ? AttrValue(std::vector<int64_t>{1, 0}) : AttrValue(std::monostate{})};
        node = function.add_call(op::permute_dims, operands, attrs, error);
        break;
      }
      default: {
        Node* operands[] = {operand()};
        AttrList attrs = {AttrValue(std::vector<int64_t>{static_cast<int64_t>(random.below(2))}),
                          AttrValue(random.chance(0.8))};
        node = function.add_call(op::sum, operands, attrs, error);
      }
    }
    if (node == nullptr) continue;  // shapes that do not broadcast
    values.push_back(node);
    last = node;
  }
  function.set_output(last);
}

}  // namespace dpl::testing
