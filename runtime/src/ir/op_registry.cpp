// The op registry: lookup by name, user-op registration, attribute kind checks and attribute printing.
#include "dpl/ir/op_registry.h"

#include <stdexcept>

#include "dpl/support/format.h"
#include "op_table.h"

namespace dpl {

int OpInfo::attr_index(std::string_view attr_name) const {
  for (size_t i = 0; i < attrs.size(); ++i)
    if (attrs[i].name == attr_name) return static_cast<int>(i);
  return -1;
}

AttrList OpInfo::default_attrs() const {
  AttrList values;
  values.reserve(attrs.size());
  for (const AttrSpec& spec : attrs) values.push_back(spec.default_value);
  return values;
}

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

OpRegistry::OpRegistry() {
  for (OpInfo& info : detail::builtin_ops()) add(std::move(info));
}

const OpInfo* OpRegistry::find(std::string_view name) const {
  if (name.starts_with("R."))
    name.remove_prefix(2);
  else if (name.starts_with("relax."))
    name.remove_prefix(6);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &ops_[it->second];
}

namespace {

}  // namespace

bool same_signature(const OpInfo& a, const OpInfo& b) {
  if (a.min_operands != b.min_operands || a.max_operands != b.max_operands || a.attrs.size() != b.attrs.size())
    return false;
  for (size_t i = 0; i < a.attrs.size(); ++i)
    if (a.attrs[i].name != b.attrs[i].name || a.attrs[i].kind != b.attrs[i].kind) return false;
  return true;
}

OpId OpRegistry::add(OpInfo info) {
  auto it = by_name_.find(info.name);
  if (it != by_name_.end()) {
    if (same_signature(ops_[it->second], info)) return it->second;
    throw std::invalid_argument("op '" + info.name + "' is already registered with a different signature");
  }
  if (ops_.size() >= 0xFFFF) throw std::invalid_argument("too many ops registered");
  info.id = static_cast<OpId>(ops_.size());
  by_name_.emplace(info.name, info.id);
  ops_.push_back(std::move(info));
  return ops_.back().id;
}

bool attr_needs_conversion(AttrKind kind, const AttrValue& value) {
  return (kind == AttrKind::Float || kind == AttrKind::OptFloat) && std::holds_alternative<int64_t>(value);
}

bool attr_matches_kind(AttrKind kind, AttrValue& value) {
  // An int literal is a valid float (`epsilon=1`); store it as the double it denotes.
  if (attr_needs_conversion(kind, value)) value = static_cast<double>(std::get<int64_t>(value));
  return detail::attr_holds_kind(kind, value);
}

bool detail::check_signature(const OpInfo& info, std::span<Node* const> operands, const AttrList& attrs,
                             std::string& error) {
  int count = static_cast<int>(operands.size());
  if (count < info.min_operands || (info.max_operands >= 0 && count > info.max_operands)) {
    std::string expected = std::to_string(info.min_operands);
    if (info.max_operands < 0)
      expected = "at least " + expected;
    else if (info.max_operands != info.min_operands)
      expected += " to " + std::to_string(info.max_operands);
    error = info.name + ": expected " + expected + " operands, got " + std::to_string(count);
    return false;
  }
  for (Node* operand : operands) {
    if (operand == nullptr) {
      error = info.name + ": an operand is missing";
      return false;
    }
  }
  if (attrs.size() != info.attrs.size()) {
    error = info.name + ": expected " + std::to_string(info.attrs.size()) + " attributes, got " +
            std::to_string(attrs.size());
    return false;
  }
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (!attr_holds_kind(info.attrs[i].kind, attrs[i])) {
      error = info.name + ": attribute " + info.attrs[i].name + " must be " +
              std::string(attr_kind_name(info.attrs[i].kind)) + ", got " + attr_value_str(attrs[i]);
      return false;
    }
  }
  return true;
}

bool detail::attr_holds_kind(AttrKind kind, const AttrValue& value) {
  bool is_none = std::holds_alternative<std::monostate>(value);
  bool is_int = std::holds_alternative<int64_t>(value);
  bool is_float = std::holds_alternative<double>(value);
  bool is_list = std::holds_alternative<std::vector<int64_t>>(value);
  bool is_string = std::holds_alternative<std::string>(value);
  switch (kind) {
    case AttrKind::Bool: return std::holds_alternative<bool>(value);
    case AttrKind::Int: return is_int;
    case AttrKind::Float: return is_float;
    case AttrKind::String: return is_string;
    case AttrKind::DType: {
      if (!is_string) return false;
      const std::string& name = std::get<std::string>(value);
      return name == "void" || parse_dtype(name).has_value();
    }
    case AttrKind::IntList: return is_list;
    case AttrKind::OptInt: return is_none || is_int;
    case AttrKind::OptFloat: return is_none || is_float;
    case AttrKind::OptIntList: return is_none || is_list;
    case AttrKind::IntOrIntList: return is_int || is_list;
    case AttrKind::OptString: return is_none || is_string;
  }
  return false;
}

std::string_view attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::Bool: return "bool";
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::DType: return "dtype";
    case AttrKind::IntList: return "int list";
    case AttrKind::OptInt: return "int or None";
    case AttrKind::OptFloat: return "float or None";
    case AttrKind::OptIntList: return "int list or None";
    case AttrKind::IntOrIntList: return "int or int list";
    case AttrKind::OptString: return "string or None";
  }
  return "?";
}

void append_attr_value(std::string& out, const AttrValue& value) {
  struct Printer {
    std::string& out;
    void operator()(std::monostate) const { out += "None"; }
    void operator()(bool v) const { out += v ? "True" : "False"; }
    void operator()(int64_t v) const { append_integer(out, v); }
    void operator()(double v) const { out += format_double_like_python(v); }
    void operator()(const std::string& v) const {
      out += '"';
      for (char c : v) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    }
    void operator()(const std::vector<int64_t>& v) const {
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) out += ", ";
        append_integer(out, v[i]);
      }
      out += ']';
    }
  };
  std::visit(Printer{out}, value);
}

std::string attr_value_str(const AttrValue& value) {
  std::string out;
  append_attr_value(out, value);
  return out;
}

}  // namespace dpl
