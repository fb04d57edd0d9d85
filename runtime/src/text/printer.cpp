// The TVMScript printer: renders dpl functions and modules the way TVM's `show()` does.
//
// Conventions (TVM's): every call, tuple item and module-function call is a binding `name: TYPE = VALUE` with
// all of the op's attributes in schema order; constants, shape literals and unnamed tuples used as operands are
// printed inline at their use; unnamed nodes get fresh names `lv`, `lv1`, ... (the output `gv`) that clash with no
// other name; symbolic dimensions are quoted in the signature and declared with `n = T.int64()` when the body
// uses them bare.
#include <algorithm>
#include <array>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpl/support/format.h"
#include "dpl/text/tvmscript.h"
#include "lexer.h"
#include "name_table.h"

namespace dpl {
namespace {

constexpr std::string_view kRelaxImport = "# from tvm.script import relax as R\n";
constexpr std::string_view kIrImport = "# from tvm.script import ir as I\n";

std::string quoted(const std::string& text) { return attr_value_str(AttrValue(text)); }

// `R.Tensor(("n", 4), dtype="float32")`: a signature names its symbolic dimensions as strings, as TVM prints.
std::string signature_type_str(TypeRef type) {
  if (type->is_tuple() && !type->fields().empty()) {
    std::string out = "R.Tuple(";
    for (size_t i = 0; i < type->fields().size(); ++i) {
      if (i > 0) out += ", ";
      out += signature_type_str(type->fields()[i]);
    }
    return out + ")";
  }
  std::string out = type->str();
  if (!type->is_tensor() || !type->has_shape()) return out;
  const auto dims = type->dims();
  if (std::all_of(dims.begin(), dims.end(), [](const Dim& dim) { return dim.is_static(); })) return out;
  std::string quoted_dims = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) quoted_dims += ", ";
    quoted_dims += dims[i].is_static() ? std::to_string(dims[i].extent()) : quoted(std::string(dims[i].symbol_name()));
  }
  quoted_dims += dims.size() == 1 ? ",)" : ")";
  const std::string bare_dims = dims_str(dims);
  const size_t at = out.find(bare_dims);
  if (at != std::string::npos) out.replace(at, bare_dims.size(), quoted_dims);
  return out;
}

void append_dims_list(std::string& out, std::span<const Dim> dims) {
  out += '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += dims[i].str();  // `16`, `n * 48`, `-1` (reshape's inferred extent)
  }
  out += ']';
}

void append_literal_element(std::string& out, DType dtype, double value) {
  if (dtype == DType::Bool) {
    out += value != 0 ? "True" : "False";
  } else if (is_integer(dtype)) {
    out += std::to_string(static_cast<int64_t>(value));
  } else {
    out += format_double_like_python(value);
  }
}

// Nested Python lists for a constant of rank >= 1, row-major.
void append_literal_values(std::string& out, const Literal& literal, size_t level, size_t& next) {
  out += '[';
  const int64_t extent = level < literal.shape.size() ? literal.shape[level] : 0;
  for (int64_t i = 0; i < extent; ++i) {
    if (i > 0) out += ", ";
    if (level + 1 < literal.shape.size()) {
      append_literal_values(out, literal, level + 1, next);
    } else if (next < literal.values.size()) {
      append_literal_element(out, literal.dtype, literal.values[next++]);
    }
  }
  out += ']';
}

std::string literal_str(const Literal& literal) {
  std::string out = "R.const(";
  if (literal.shape.empty() && literal.values.size() == 1) {
    append_literal_element(out, literal.dtype, literal.values[0]);
  } else {
    size_t next = 0;
    append_literal_values(out, literal, 0, next);
  }
  out += ", ";
  out += quoted(std::string(dtype_name(literal.dtype)));
  return out + ")";
}

// The symbols that `T.int64()` declares: those the dims name, an expression's (`n * 48`) among them.
void collect_dim_symbols(std::span<const Dim> dims, std::vector<std::string_view>& symbols) {
  for (const Dim& dim : dims) {
    if (dim.is_static() || dim.is_inferred()) continue;
    for (const Dim& symbol : dim.symbols()) {
      if (std::find(symbols.begin(), symbols.end(), symbol.symbol_name()) == symbols.end()) {
        symbols.push_back(symbol.symbol_name());
      }
    }
  }
}

void collect_symbols(TypeRef type, std::vector<std::string_view>& symbols) {
  if (type == nullptr) return;
  for (TypeRef field : type->fields()) collect_symbols(field, symbols);
  collect_dim_symbols(type->dims(), symbols);
}

class FunctionPrinter {
 public:
  FunctionPrinter(const Function& function, std::string_view class_name, std::string& out, size_t indent)
      : fn_(function), class_name_(class_name), out_(out), indent_(indent) {}

  void print() {
    order_bindings();
    assign_names();
    // Room for the bindings at once (a transformer's average about 120 bytes): a model of 10^6 bindings is
    // 120 MB of text, and growing by doubling copied twice that and touched each new buffer's pages anew.
    out_.reserve(out_.size() + (bindings_.size() + fn_.params().size()) * 128);
    print_signature();
    const std::string body(indent_ + 4, ' ');
    for (std::string_view symbol : body_symbols_) {
      out_ += body;
      out_ += symbol;
      out_ += " = T.int64()\n";
    }
    if (calls_functions_) out_ += body + "cls = " + std::string(class_name_) + "\n";
    if (!fn_.attrs().empty()) print_func_attrs(body);
    const Node* output = fn_.output();
    const bool block = fn_.has_dataflow_block() && !bindings_.empty();
    const std::string binding_indent = block ? body + "    " : body;
    if (block) out_ += body + "with R.dataflow():\n";
    for (const Node* node : bindings_) {
      out_ += binding_indent;
      out_ += name(node);
      out_ += ": ";
      out_ += type_str(node->type());
      out_ += " = ";
      append_value(node);
      out_ += '\n';
    }
    if (block && output != nullptr && bound(output)) {
      out_ += binding_indent + "R.output(" + std::string(name(output)) + ")\n";
    }
    out_ += body + "return ";
    if (output != nullptr) {
      append_expr(output);
    } else {
      out_ += "()";  // an unfinished function has no output; keep the text well-formed
    }
    out_ += '\n';
  }

 private:
  size_t slot(const Node* node) const { return node->id(); }
  bool bound(const Node* node) const { return slot(node) < is_bound_.size() && is_bound_[slot(node)]; }
  std::string_view name(const Node* node) const { return names_[slot(node)]; }

  bool needs_binding(const Node* node) const {
    switch (node->kind()) {
      case NodeKind::Param: return false;
      case NodeKind::Call:
      case NodeKind::TupleItem:
      case NodeKind::FuncCall: return true;
      case NodeKind::Constant:
      case NodeKind::ShapeLit: return node == fn_.output();
      case NodeKind::Tuple:
        if (node == fn_.output() || !node->name().empty()) return true;
        return std::any_of(node->users().begin(), node->users().end(),
                           [](const Node* user) { return user->kind() == NodeKind::TupleItem; });
    }
    return true;
  }

  // Bindings in an order where operands come first (nodes() may not be topological right after a rewrite).
  void order_bindings() {
    uint32_t max_id = 0;
    for (const Node* node : fn_.nodes()) max_id = std::max(max_id, node->id());
    for (const Node* param : fn_.params()) max_id = std::max(max_id, param->id());
    names_.assign(max_id + 1, std::string_view());
    is_bound_.assign(max_id + 1, false);
    std::vector<uint8_t> visited(max_id + 1, 0);
    std::vector<std::pair<const Node*, size_t>> stack;
    auto visit = [&](const Node* root) {
      if (visited[slot(root)]) return;
      visited[slot(root)] = 1;
      stack.emplace_back(root, 0);
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < node->num_operands()) {
          const Node* operand = node->operand(next++);
          if (slot(operand) < visited.size() && !visited[slot(operand)]) {
            visited[slot(operand)] = 1;
            stack.emplace_back(operand, 0);
          }
          continue;
        }
        const Node* done = node;
        stack.pop_back();
        if (needs_binding(done)) {
          is_bound_[slot(done)] = true;
          bindings_.push_back(done);
        }
        if (done->kind() == NodeKind::FuncCall) calls_functions_ = true;
        if (done->kind() == NodeKind::ShapeLit) collect_dim_symbols(done->shape_value(), body_symbols_);
      }
    };
    for (const Node* node : fn_.nodes()) {
      if (!node->is_dead()) visit(node);
    }
    if (fn_.output() != nullptr) visit(fn_.output());
    for (const Node* node : bindings_) collect_symbols(node->type(), body_symbols_);
  }

  // Keeps every usable name (first come, first served: parameters, then bindings in order); the rest get fresh
  // TVM-style names: `lv`, `lv1`, ... for unnamed values, `gv` for an unnamed output, `x_1` for a repeated `x`.
  void assign_names() {
    text::NameTable<char> taken(fn_.params().size() + bindings_.size() + body_symbols_.size() + 2);
    for (std::string_view symbol : body_symbols_) taken.insert(symbol, 0);
    taken.insert("cls", 0);
    taken.insert(class_name_, 0);
    std::vector<const Node*> named;
    named.reserve(fn_.params().size() + bindings_.size());
    named.insert(named.end(), fn_.params().begin(), fn_.params().end());
    named.insert(named.end(), bindings_.begin(), bindings_.end());
    std::vector<const Node*> unnamed;
    for (const Node* node : named) {
      const std::string& wanted = node->name();
      if (text::is_identifier(wanted) && !text::is_reserved_word(wanted) && taken.insert(wanted, 0).second) {
        names_[slot(node)] = wanted;
      } else {
        unnamed.push_back(node);
      }
    }
    // The next suffix to try per base: the three fresh bases by index (most nodes of a built graph are unnamed),
    // repeated names by name.
    std::array<size_t, 3> fresh_suffix{};
    std::unordered_map<std::string_view, size_t> repeated_suffix;
    std::string candidate;
    for (const Node* node : unnamed) {
      const std::string& wanted = node->name();
      const bool keep_base = text::is_identifier(wanted) && !text::is_reserved_word(wanted);
      const size_t fresh = node == fn_.output() ? 0 : node->kind() == NodeKind::Param ? 1 : 2;
      const std::string_view base = keep_base ? std::string_view(wanted) : std::array{"gv", "p", "lv"}[fresh];
      size_t& suffix = keep_base ? repeated_suffix[base] : fresh_suffix[fresh];
      do {
        candidate = base;
        if (keep_base) {
          candidate += '_';
          ++suffix;
        }
        if (keep_base || suffix > 0) append_integer(candidate, static_cast<int64_t>(suffix));
        if (!keep_base) ++suffix;
      } while (taken.find(candidate) != nullptr);
      const std::string& stored = fresh_names_.emplace_back(candidate);
      taken.insert(stored, 0);
      names_[slot(node)] = stored;
    }
  }

  void print_signature() {
    const std::string indent(indent_, ' ');
    out_ += indent;
    out_ += fn_.is_private() ? "@R.function(private=True)\n" : "@R.function\n";
    out_ += indent + "def " + fn_.name() + "(";
    for (size_t i = 0; i < fn_.params().size(); ++i) {
      const Node* param = fn_.params()[i];
      if (i > 0) out_ += ", ";
      out_ += name(param);
      out_ += ": ";
      out_ += cached_str(signature_type_strings_, param->type(), signature_type_str);
    }
    out_ += ")";
    TypeRef result = fn_.output() != nullptr ? fn_.return_type() : nullptr;
    if (result != nullptr) out_ += " -> " + signature_type_str(result);
    out_ += ":\n";
  }

  void print_func_attrs(const std::string& indent) {
    out_ += indent + "R.func_attr({";
    bool first = true;
    for (const auto& [key, value] : fn_.attrs()) {
      if (!first) out_ += ", ";
      first = false;
      out_ += quoted(key);
      out_ += ": ";
      out_ += attr_value_str(value);
    }
    out_ += "})\n";
  }

  // Types are interned and a model's values share a few: each is spelled once per function.
  using TypeStrings = std::unordered_map<TypeRef, std::string>;
  static const std::string& cached_str(TypeStrings& strings, TypeRef type, std::string (*spell)(TypeRef)) {
    auto [it, inserted] = strings.try_emplace(type);
    if (inserted) it->second = spell(type);
    return it->second;
  }
  const std::string& type_str(TypeRef type) {
    return cached_str(type_strings_, type, [](TypeRef spelled) { return spelled->str(); });
  }

  // A value as an operand: the name of a bound node or parameter, or the inline form of a literal or tuple.
  void append_expr(const Node* node) {
    if (node->kind() == NodeKind::Param || bound(node)) {
      out_ += name(node);
      return;
    }
    append_value(node);
  }

  void append_operands(std::span<Node* const> operands) {
    for (size_t i = 0; i < operands.size(); ++i) {
      if (i > 0) out_ += ", ";
      append_expr(operands[i]);
    }
  }

  // A binding's right-hand side.
  void append_value(const Node* node) {
    switch (node->kind()) {
      case NodeKind::Param: out_ += name(node); return;
      case NodeKind::Constant: out_ += literal_str(node->literal()); return;
      case NodeKind::ShapeLit:
        out_ += "R.shape(";
        append_dims_list(out_, node->shape_value());
        out_ += ')';
        return;
      case NodeKind::Tuple:
        out_ += '(';
        append_operands(node->operands());
        if (node->num_operands() == 1) out_ += ',';
        out_ += ')';
        return;
      case NodeKind::TupleItem:
        append_expr(node->operand(0));
        out_ += '[' + std::to_string(node->index()) + ']';
        return;
      case NodeKind::FuncCall:
        out_ += "cls." + node->callee() + "(";
        append_operands(node->operands());
        out_ += ')';
        return;
      case NodeKind::Call: append_call(node); return;
    }
  }

  void append_call(const Node* node) {
    const OpInfo& info = OpRegistry::global().get(node->op());
    out_ += "R.";
    out_ += info.name;
    out_ += '(';
    append_operands(node->operands());
    bool first = node->num_operands() == 0;
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      if (!first) out_ += ", ";
      first = false;
      out_ += info.attrs[i].name;
      out_ += '=';
      append_attr_value(out_, i < node->attrs().size() ? node->attr(i) : info.attrs[i].default_value);
    }
    out_ += ')';
  }

  const Function& fn_;
  std::string_view class_name_;
  std::string& out_;
  size_t indent_;
  std::vector<std::string_view> names_;  // by node id: a node's own name, or one of fresh_names_
  std::deque<std::string> fresh_names_;
  std::vector<bool> is_bound_;      // by node id
  std::vector<const Node*> bindings_;
  std::vector<std::string_view> body_symbols_;
  bool calls_functions_ = false;
  TypeStrings type_strings_;            // binding annotations
  TypeStrings signature_type_strings_;  // parameter annotations (symbols quoted)
};

}  // namespace

std::string print_function(const Function& function) {
  std::string out(kRelaxImport);
  out += '\n';
  FunctionPrinter(function, "Module", out, 0).print();
  return out;
}

std::string print_module(const Module& module) {
  if (!module.is_ir_module() && module.functions().size() == 1) return print_function(*module.functions()[0]);
  std::string out(kIrImport);
  out += kRelaxImport;
  out += "\n@I.ir_module\nclass " + module.class_name() + ":\n";
  if (module.functions().empty()) out += "    pass\n";
  bool first = true;
  for (const auto& function : module.functions()) {
    if (!first) out += '\n';
    first = false;
    FunctionPrinter(*function, module.class_name(), out, 4).print();
  }
  return out;
}

}  // namespace dpl
