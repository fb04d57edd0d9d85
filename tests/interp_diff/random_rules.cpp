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
    if (root && random_.chance(0.1)) return dominator(depth);
    if (random_.chance(0.08)) return rest_call(depth);
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
        } else {  // named, so that a right-hand side may copy its attributes (no draw of its own)
          const std::string name = "_s" + std::to_string(counter_++);
          sum_calls_.push_back(name);
          text = name + ": sum(" + operand + ", keepdims=_kd)";
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

  // `OP(p, ...)` or `OP(p, _rN...)` (a list of the remaining operands, spread on the right).
  std::string rest_call(int depth) {
    std::string first = pattern(depth - 1);
    const char* op = random_.chance(0.7) ? pick(random_, kBinary) : pick(random_, kUnary);
    if (random_.chance(0.4)) return std::string(op) + "(" + first + ", ...)";
    std::string list = "_r" + std::to_string(counter_++);
    lists_.push_back(list);
    return std::string(op) + "(" + first + ", " + list + "...)";
  }

  // The region below a binary child up to one parent call, through path ops only.
  std::string dominator(int depth) {
    const char* paths[] = {"elementwise", "broadcast", "(nn.relu | exp)", "elementwise | broadcast"};
    std::string parent = call(std::max(depth - 1, 1), false);
    while (parent.find("?(") != std::string::npos || parent.front() == '(') parent = call(1, false);
    std::string child = std::string(pick(random_, kBinary)) + "(" + pattern(0) + ", " + pattern(0) + ")";
    return "dominates(" + parent + ", " + paths[random_.below(std::size(paths))] + ", " + child + ")";
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
        // Dimension arithmetic too: square, and (4, 4) but undecided for a symbolic (n, n) or (n, 4).
        const char* types[] = {"Tensor[(_d0, _d1)]",          "Tensor[(4, _)]",
                               "Tensor[float32]",             "Tensor[(_d1, _d0), float32]",
                               "Tensor[(_d0, _d0 * 2 - _d0)]", "Tensor[(_d1 * 2 - 4, _d1)]"};
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
    // A rest list against a value (every operand, or none) and against another list; no draws of their own, so
    // that the rules drawn after them stay what they were.
    if (!lists_.empty()) {
      if (!values_.empty()) {
        atoms.push_back(lists_.back() + " != " + values_.back());
        atoms.push_back(values_.front() + " == " + lists_.front());
      }
      atoms.push_back(lists_.front() + " == " + lists_.back());
    }
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
    if (!lists_.empty() && random_.chance(0.15)) {  // the list spread: OP(a, _rN...) or OP(_rN..., a)
      const std::string& list = lists_[random_.below(lists_.size())];
      std::string other = expr(depth - 1);
      return std::string(pick(random_, kBinary)) + (random_.chance(0.5) ? "(" + other + ", " + list + "...)"
                                                                        : "(" + list + "..., " + other + ")");
    }
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
      case 5: {
        std::string operand = expr(depth - 1);
        if (!sum_calls_.empty()) return "sum(" + operand + ", **" + sum_calls_.back() + ")";
        return "sum(" + operand + (keepdims_captured_ ? ", axis=[1], keepdims=_kd)" : ", axis=[0], keepdims=True)");
      }
      default:
        return "nn.relu(" + expr(depth - 1) + ")";
    }
  }

  Random& random_;
  std::vector<std::string> values_;
  std::vector<std::string> constants_;
  std::vector<std::string> lists_;  // bound by `_rN...`
  std::vector<std::string> sum_calls_;  // bound by `_sN: sum(...)`, copied by `**_sN`
  std::string op_var_;
  bool axes_captured_ = false;
  bool keepdims_captured_ = false;
  bool dims_ = false;
  int counter_ = 0;
};

// One multi-root rule. Names start with `_` so that a name used once is not reported as unused.
class MultiRootWriter {
 public:
  explicit MultiRootWriter(Random& random) : random_(random) {}

  std::string rule(const std::string& name) {
    std::string text = "  rule " + name + options() + " {\n    " + anchor() + ";\n";
    switch (random_.below(3)) {
      case 0:
        text += single_roots();
        break;
      case 1:
        text += group();
        break;
      default:
        text += context_root();
    }
    return text + "  }\n";
  }

 private:
  std::string options() {
    std::string text;
    if (random_.chance(0.2)) text += " priority " + std::to_string(random_.below(3));
    if (random_.chance(0.15)) text += " once";
    return text;
  }

  std::string anchor() {
    switch (random_.below(7)) {
      case 0:
        return "_x: Tensor[(_, _n)]";
      case 1:
        return "_x: var()";
      case 2:
        return "_x: nn.relu(_)";
      case 3:  // alternatives at the anchor: an op, or any value
        return random_.chance(0.5) ? "_x: nn.relu(_) | var()" : "_x: nn.relu?(var())";
      default:
        return "_x: _";
    }
  }

  static bool is_matmul(const std::string& op) { return op == "matmul"; }

  std::string root_op() {
    const char* ops[] = {"matmul", "matmul", "add", "multiply", "maximum", "subtract"};
    return ops[random_.below(std::size(ops))];
  }

  std::string weight(const std::string& name) {
    switch (random_.below(6)) {
      case 0:
        return name + ": const";
      case 4:
        return name + ": (const | var())";
      case 1:
        return name + ": var()";
      case 2:
        return name + ": Tensor[(4, _)]";
      default:
        return name;
    }
  }

  // OP(x, w) or OP(w, x), maybe below nn.relu or a bias add, or alternatives of these.
  std::string root_pattern(const std::string& op, const std::string& w) {
    std::string call = random_.chance(0.75) || is_matmul(op) ? op + "(_x, " + weight(w) + ")"
                                                             : op + "(" + weight(w) + ", _x)";
    switch (random_.below(8)) {
      case 0:
        return "nn.relu(" + call + ")";
      case 1:
        return "add(" + call + ", _)";
      case 2:
        return "nn.relu?(" + call + ")";
      case 3:  // the same weight name on both sides, found from _x through different ops
        return call + " | add(" + op + "(_x, " + w + "), _)";
      default:
        return call;
    }
  }

  std::string guard_on(const std::string& w) {
    const char* guards[] = {".rank == 2", ".shape[0] == 4", ".uses == 1", ".shape[-1] > 1"};
    return w + guards[random_.below(std::size(guards))];
  }

  std::string single_roots() {
    const size_t count = 2 + random_.below(2);
    const std::string op = root_op();
    const bool same_op = random_.chance(0.7);
    std::string text;
    std::vector<std::string> ws;
    std::vector<std::string> ops;
    for (size_t i = 0; i < count; ++i) {
      ops.push_back(same_op ? op : root_op());
      ws.push_back("_w" + std::to_string(i));
      text += "    _r" + std::to_string(i) + ": " + root_pattern(ops.back(), ws.back());
      if (random_.chance(0.2)) text += " where " + guard_on(ws.back());
      text += ";\n";
    }
    if (random_.chance(0.4)) text += "    where " + guard_on(ws[random_.below(count)]) + ";\n";
    text += "    =>";
    if (same_op && is_matmul(op) && random_.chance(0.7)) {  // one matmul of the concatenated weights, split
      std::string sizes;
      for (size_t i = 0; i < count; ++i) sizes += (i == 0 ? "" : ", ") + ws[i] + ".shape[1]";
      text += " let _y = matmul(_x, concat((" + join(ws) + "), axis=1));\n       let _p = split(_y, "
              "indices_or_sections=split_indices(" + sizes + "), axis=-1);\n";
      for (size_t i = 0; i < count; ++i) {
        text += "       _r" + std::to_string(i) + " => _p[" + std::to_string(i) + "];\n";
      }
      return text;
    }
    text += "\n";
    for (size_t i = 0; i < count; ++i) {  // root by root
      const char* rewrites[] = {"maximum(_x, W)", "multiply(W, _x)", "nn.relu(W)", "subtract(_x, W)"};
      std::string rewrite = rewrites[random_.below(std::size(rewrites))];
      rewrite.replace(rewrite.find('W'), 1, ws[i]);
      text += "       _r" + std::to_string(i) + " => " + rewrite + ";\n";
    }
    return text;
  }

  std::string group() {
    const std::string op = root_op();
    if (random_.chance(0.4)) return group_with_op();
    if (random_.chance(0.5)) return group_with_attribute();
    std::string text = "    group _ms: " + root_pattern(op, "_w");
    if (random_.chance(0.5)) text += " where " + guard_on("_w");
    text += ";\n";
    if (random_.chance(0.3)) text += "    where _ms.count >= 3;\n";
    if (is_matmul(op)) {
      return text + "    => _ms => split(matmul(_x, concat(_w, axis=1)), indices_or_sections=split_indices(_w.shape[1]), "
                    "axis=-1);\n";
    }
    return text + "    => _ms => split(concat(_w, axis=1), indices_or_sections=split_indices(_w.shape[1]), axis=1);\n";
  }

  // An attribute captured per member: compared in the rule's guard, and its common value passed on; or a
  // dimension bound per member, compared in the rule's guard and passed to split_indices.
  std::string group_with_attribute() {
    const bool dims = random_.chance(0.4);
    std::string text = "    group _ms: matmul(_x, " + (dims ? "_w: Tensor[(4, _k)]" : weight("_w")) + ", out_dtype=_d)";
    if (!dims && random_.chance(0.3)) text += " | nn.relu(matmul(_x, _w, out_dtype=_d))";
    text += ";\n";
    const char* guards[] = {"_d == \"void\"", "_d != \"float32\"", "_ms.count >= 3 && _d == \"void\""};
    const char* dim_guards[] = {"_k <= 3", "_k != 1 && _k == _ms.shape[1]", "4 > _k"};
    if (random_.chance(0.6)) {
      text += std::string("    where ") + (dims ? dim_guards[random_.below(std::size(dim_guards))]
                                                : guards[random_.below(std::size(guards))]) + ";\n";
    }
    return text + "    => _ms => split(matmul(_x, concat(_w, axis=1), out_dtype=_d), indices_or_sections=split_indices(" +
           (dims ? "_k" : "_w.shape[1]") + "), axis=-1);\n";
  }

  // An op captured per member (the rewrite calls the members' common op, or fails), and lists of graph values
  // compared in the rule's guard: with one value (every member, or none) and with each other (as wholes).
  std::string group_with_op() {
    std::string text = std::string("    group _ms: (_op: add | multiply | maximum)(_x, _w: nn.relu?(_v))") +
                       (random_.chance(0.3) ? " | (_op: subtract)(_w: nn.relu?(_v), _x)" : "") + ";\n";
    const char* guards[] = {"_w == _v", "_w != _v", "_v != _x", "_w == _x", "_ms != _w && _v == _w"};
    if (random_.chance(0.8)) text += std::string("    where ") + guards[random_.below(std::size(guards))] + ";\n";
    return text + "    => _ms => split(_op(concat(_w, axis=1), concat(_v, axis=1)), "
                  "indices_or_sections=split_indices(_w.shape[1]), axis=1);\n";
  }

  std::string context_root() {
    const std::string op = root_op();
    std::string text = "    _a: " + op + "(_x, _w0);\n    _c: " + root_pattern(root_op(), "_w1") + ";\n";
    const char* rewrites[] = {"subtract(_x, _w0)", "maximum(_w0, _x)", "nn.relu(_w0)", "multiply(_x, _w1)"};
    return text + "    => _a => " + rewrites[random_.below(std::size(rewrites))] + ";\n";
  }

  static std::string join(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  }

  Random& random_;
};

bool checks(const std::string& text) {
  SourceFile source("random.dpl", text);
  DiagnosticEngine diags;
  compiler::CompileOptions options;
  options.generate = false;
  return compiler::compile(source, diags, options).ok;
}

}  // namespace

namespace {

// A file of `num_rules` rules, each drawn by `write(random, name)` until the pass with it passes dplc's checks
// (a rule that an earlier one shadows is an error).
template <typename Write>
std::string rule_file(uint64_t seed, const std::string& pass_name, int num_rules, Write&& write) {
  Random random(seed);
  std::string rules;
  for (int i = 0; i < num_rules; ++i) {
    std::string name = "r" + std::to_string(i);
    for (;;) {
      std::string rule = write(random, name);
      if (checks("pass check {\n" + rules + rule + "}\n")) {
        rules += rule;
        break;
      }
    }
  }
  return "// Generated by tests/interp_diff (random_rules.cpp, seed " + std::to_string(seed) + "); do not edit.\n" +
         "pass " + pass_name + " {\n" + rules + "}\n";
}

}  // namespace

std::string random_rule_file(uint64_t seed, const std::string& pass_name, int num_rules) {
  return rule_file(seed, pass_name, num_rules,
                   [](Random& random, const std::string& name) { return RuleWriter(random).rule(name); });
}

std::string random_multi_root_file(uint64_t seed, const std::string& pass_name, int num_rules) {
  return rule_file(seed, pass_name, num_rules,
                   [](Random& random, const std::string& name) { return MultiRootWriter(random).rule(name); });
}

void build_random_fanout_graph(Function& function, uint64_t seed) {
  Random random(seed);
  auto tensor = [](int64_t rows, int64_t columns) {
    const std::vector<Dim> dims = {Dim::fixed(rows), Dim::fixed(columns)};
    return Type::tensor(DType::Float32, dims);
  };
  const int64_t widths[] = {4, 3, 1, 4};
  // The shared values: inputs of shape (2, 4); weights: parameters and constants of shape (4, k).
  std::vector<Node*> hubs = {function.add_param("x0", tensor(2, 4))};
  if (random.chance(0.5)) hubs.push_back(function.add_param("x1", tensor(2, 4)));
  std::vector<Node*> weights;
  for (size_t i = 0, n = 1 + random.below(3); i < n; ++i) {
    const int64_t width = widths[random.below(std::size(widths))];
    weights.push_back(function.add_param("w" + std::to_string(i), tensor(4, width)));
  }
  for (size_t i = 0, n = 1 + random.below(3); i < n; ++i) {
    Literal literal;
    const int64_t width = widths[random.below(std::size(widths))];
    literal.shape = {4, width};
    for (int64_t k = 0; k < 4 * width; ++k) literal.values.push_back(0.25 * static_cast<double>((k + i) % 5));
    weights.push_back(function.add_constant(literal));
  }
  std::vector<Node*> results;
  const OpRegistry& registry = OpRegistry::global();
  const char* const elementwise[] = {"add", "multiply", "maximum", "subtract"};
  for (size_t i = 0, n = 4 + random.below(10); i < n; ++i) {
    Node* hub = random.chance(0.8) || results.empty() ? hubs[random.below(hubs.size())]
                                                       : results[random.below(results.size())];
    std::string error;
    Node* node = nullptr;
    switch (random.below(5)) {
      case 0:
      case 1: {
        Node* operands[] = {hub, weights[random.below(weights.size())]};
        node = function.add_call(op::matmul, operands, registry.get(op::matmul).default_attrs(), error);
        break;
      }
      case 2: {
        Node* other = random.chance(0.5) ? hubs[random.below(hubs.size())] : hub;
        Node* operands[] = {hub, other};
        if (random.chance(0.5)) std::swap(operands[0], operands[1]);
        node = function.add_call(registry.find(elementwise[random.below(std::size(elementwise))])->id, operands, {},
                                 error);
        break;
      }
      case 3: {
        Node* operands[] = {hub};
        node = function.add_call(op::nn_relu, operands, {}, error);
        break;
      }
      default: {  // a bias on an earlier result
        if (results.empty()) break;
        Node* operands[] = {results[random.below(results.size())], hub};
        node = function.add_call(op::add, operands, {}, error);
      }
    }
    if (node == nullptr) continue;  // shapes that do not fit
    results.push_back(node);
    if (node->type()->rank() == 2 && node->type()->dims()[1] == Dim::fixed(4) && random.chance(0.3)) {
      hubs.push_back(node);
    }
  }
  // Every result is an output, so that nothing is dead.
  if (results.empty()) {
    function.set_output(hubs[0]);
    return;
  }
  function.set_output(results.size() == 1 ? results[0] : function.add_tuple(results));
}

void build_random_graph(Function& function, uint64_t seed) {
  Random random(seed);
  // Symbolic extents too, so that guards comparing dimensions (`_d0 == _d1`, `x.shape[0] == 4`) meet symbols in
  // both modes.
  const Dim n = Dim::symbol("n");
  const std::vector<std::vector<Dim>> shapes = {
      {Dim::fixed(4), Dim::fixed(4)}, {Dim::fixed(4), Dim::fixed(4)}, {Dim::fixed(1), Dim::fixed(4)},
      {Dim::fixed(4), Dim::fixed(1)}, {n, Dim::fixed(4)},             {n, n}};
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
