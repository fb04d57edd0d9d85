// Custom op declarations: names, operands, attribute kinds and defaults, traits and the result rule are checked,
// and the valid declarations are registered in a copy of the op registry that the rest of dplc checks against.
#include "dpl/compiler/op_decls.h"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <utility>

#include "dpl/ir/graph.h"
#include "dpl/ir/opaque_ops.h"

namespace dpl::compiler {

namespace {

// Inference for `-> same_as(x)`: the result has the type of operand I.
template <size_t I>
TypeRef type_of_operand(const InferInput& input, std::string&) {
  return input.operands[I]->type();
}

template <size_t... I>
constexpr std::array<InferFn, sizeof...(I)> same_as_table(std::index_sequence<I...>) {
  return {&type_of_operand<I>...};
}

// `same_as` can name one of the first kMaxSameAs operands.
constexpr size_t kMaxSameAs = 16;
constexpr std::array<InferFn, kMaxSameAs> kSameAs = same_as_table(std::make_index_sequence<kMaxSameAs>());

constexpr std::pair<const char*, OpTrait> kTraits[] = {
    {"commutative", kCommutative}, {"elementwise", kElementwise}, {"broadcast", kBroadcast},
    {"injective", kInjective},     {"reduction", kReduction},     {"opaque", kOpaque},
};

// The attribute kinds a declaration names: each plain, and with `?` where it has an optional form.
const std::map<std::string, std::pair<AttrKind, std::optional<AttrKind>>>& declared_kinds() {
  static const std::map<std::string, std::pair<AttrKind, std::optional<AttrKind>>> kinds = {
      {"bool", {AttrKind::Bool, std::nullopt}},
      {"int", {AttrKind::Int, AttrKind::OptInt}},
      {"float", {AttrKind::Float, AttrKind::OptFloat}},
      {"string", {AttrKind::String, AttrKind::OptString}},
      {"dtype", {AttrKind::DType, std::nullopt}},
      {"int_list", {AttrKind::IntList, AttrKind::OptIntList}},
      {"int_or_int_list", {AttrKind::IntOrIntList, std::nullopt}},
  };
  return kinds;
}

std::optional<AttrKind> attr_kind(const OpDecl::Attr& attr) {
  auto it = declared_kinds().find(attr.kind);
  if (it == declared_kinds().end()) return std::nullopt;
  return attr.optional ? it->second.second : std::optional<AttrKind>(it->second.first);
}

class OpDeclarer {
 public:
  OpDeclarer(DiagnosticEngine& diags, OpRegistry& registry) : diags_(diags), registry_(registry) {}

  // Registers `decl` even when parts of it are wrong (they are reported; nothing is generated then), so that its
  // uses are checked against what was declared rather than reported as unknown ops.
  void declare(OpDecl& decl) {
    if (auto [first, fresh] = declared_.emplace(decl.name, decl.name_loc); !fresh) {
      Diagnostic& diag = diags_.error(decl.name_loc, "duplicate op declaration '" + decl.name + "'");
      DiagnosticEngine::add_note(diag, first->second, "first declared here");
      return;
    }
    if (decl.name.starts_with("R.") || decl.name.starts_with("relax.")) {
      diags_.error(decl.name_loc, "write the name of a declared op without 'R.' or 'relax.' (uses may add it)");
      return;
    }
    // A user op of that name already in the registry (registered by a linked pass library, or by the rule
    // interpreter for an earlier load of this file) is the same op when the signatures agree.
    if (const OpInfo* known = registry_.find(decl.name); known != nullptr && known->id < op::kNumBuiltinOps) {
      diags_.error(decl.name_loc, "'" + decl.name + "' is a built-in op; a declaration cannot redefine it (choose a "
                                  "name of your own, such as 'my." + decl.name + "')");
      return;
    }
    OpInfo info;
    info.name = decl.name;
    info.min_operands = static_cast<int>(decl.operands.size()) - (decl.variadic ? 1 : 0);
    info.max_operands = decl.variadic ? -1 : static_cast<int>(decl.operands.size());
    std::map<std::string, SourceLoc> names;
    auto unique_name = [&](const std::string& name, SourceLoc loc) {
      auto [first, fresh] = names.emplace(name, loc);
      if (fresh) return;
      Diagnostic& diag = diags_.error(loc, "op '" + decl.name + "' already has an operand or attribute '" + name + "'");
      DiagnosticEngine::add_note(diag, first->second, "first declared here");
    };
    for (size_t i = 0; i < decl.operands.size(); ++i) unique_name(decl.operands[i], decl.operand_locs[i]);
    for (const OpDecl::Attr& attr : decl.attrs) {
      unique_name(attr.name, attr.loc);
      if (std::optional<AttrSpec> spec = attr_spec(decl, attr)) info.attrs.push_back(std::move(*spec));
    }
    for (size_t i = 0; i < decl.traits.size(); ++i) info.traits |= trait(decl, info, i);
    info.infer = is_onnx_opaque_name(decl.name) ? opaque_result(decl, info) : result_rule(decl);
    const OpInfo* known = registry_.find(decl.name);
    try {
      decl.id = registry_.add(std::move(info));
    } catch (const std::invalid_argument& error) {
      if (known != nullptr && known->infer == infer_onnx_opaque && known->min_operands == 0 &&
          known->max_operands < 0) {
        diags_.error(decl.name_loc, "opaque op '" + decl.name + "' is already registered (by an ONNX import, a "
                                    "model read or a declaration) as `" + declaration_of(*known) + "`; declare it "
                                    "so, or load the rules before the model");
        return;
      }
      diags_.error(decl.name_loc, std::string(error.what()) + " (by a pass library or rule file loaded before)");
    }
  }

 private:
  std::optional<AttrSpec> attr_spec(const OpDecl& decl, const OpDecl::Attr& attr) {
    std::optional<AttrKind> kind = attr_kind(attr);
    if (!kind) {
      diags_.error(attr.kind_loc, "unknown attribute kind '" + attr.kind + (attr.optional ? "?" : "") +
                                      "'; the kinds are bool, int, float, string, dtype, int_list, int_or_int_list, "
                                      "and int?, float?, string?, int_list? for ones that may be None");
      return std::nullopt;
    }
    AttrValue value;  // None: the default of an optional attribute
    if (attr.default_value) {
      value = *attr.default_value;
      if (!attr_matches_kind(*kind, value)) {
        diags_.error(attr.default_loc, "the default of attribute '" + attr.name + "' of " + decl.name + " must be " +
                                           std::string(attr_kind_name(*kind)) + ", but it is " +
                                           attr_value_str(*attr.default_value));
        return std::nullopt;
      }
    } else if (!attr.optional) {
      diags_.error(attr.loc, "attribute '" + attr.name + "' of " + decl.name + " needs a default value ('" +
                                 attr.name + ": " + attr.kind + " = ...'): a call that does not give it takes the "
                                 "default");
      return std::nullopt;
    }
    return AttrSpec{attr.name, *kind, std::move(value)};
  }

  uint32_t trait(const OpDecl& decl, const OpInfo& info, size_t i) {
    const std::string& name = decl.traits[i];
    for (const auto& [trait_name, bit] : kTraits) {
      if (name != trait_name) continue;
      if (bit == kCommutative && (info.min_operands != 2 || info.max_operands != 2)) {
        diags_.error(decl.trait_locs[i], "a commutative op takes exactly 2 operands; " + decl.name + " takes " +
                                             operand_count(info));
      }
      return bit;
    }
    std::string known;
    for (const auto& [trait_name, bit] : kTraits) known += (known.empty() ? "" : ", ") + std::string(trait_name);
    diags_.error(decl.trait_locs[i], "unknown op trait '" + name + "'; the traits are " + known);
    return 0;
  }

  static std::string operand_count(const OpInfo& info) {
    std::string count = std::to_string(info.min_operands);
    if (info.max_operands < 0) return count + " or more";
    return count;
  }

  // An op in the onnx. namespace is an opaque ONNX op: its result type is what its last attribute, result_types,
  // spells (dpl/ir/opaque_ops.h), so a model's calls read and print with the types they carry.
  InferFn opaque_result(const OpDecl& decl, const OpInfo& info) {
    if (decl.result != nullptr) {
      diags_.error(decl.result->loc, "the result type of an opaque ONNX op (" + decl.name + ") is the one its "
                                     "result_types attribute spells; leave '->' out");
    }
    if (info.attrs.empty() || info.attrs.back().name != kResultTypesAttr ||
        info.attrs.back().kind != AttrKind::String) {
      diags_.error(decl.name_loc, "an op in the onnx. namespace is an opaque ONNX op: declare its result type "
                                  "attribute last, as 'result_types: string = \"\"'");
    }
    return infer_onnx_opaque;
  }

  // The declaration of an opaque op registered from a model, to show the user what to write.
  static std::string declaration_of(const OpInfo& info) {
    std::string text = "op " + info.name + "(xs...";
    for (const AttrSpec& attr : info.attrs) {
      for (const auto& [name, forms] : declared_kinds()) {
        if (forms.first == attr.kind) text += ", " + attr.name + ": " + name;
        if (forms.second == attr.kind) text += ", " + attr.name + ": " + name + "?";
      }
      if (!std::holds_alternative<std::monostate>(attr.default_value))
        text += " = " + attr_value_str(attr.default_value);
    }
    return text + ")";
  }

  // `same_as(x)`: the type of operand x (not a variadic one, which may be absent); no rule: unknown.
  InferFn result_rule(OpDecl& decl) {
    if (decl.result == nullptr) return nullptr;
    const auto* call = std::get_if<CallExpr>(&decl.result->node);
    const VarExpr* operand = nullptr;
    if (call != nullptr && call->op.text == "same_as" && call->operands.size() == 1 && call->attrs.empty() &&
        !call->attrs_from) {
      operand = std::get_if<VarExpr>(&call->operands[0]->node);
    }
    if (operand == nullptr) {
      diags_.error(decl.result->loc, "the result of an op is written 'same_as(OPERAND)' (the type of that operand); "
                                     "leave '->' out when it is not known");
      return nullptr;
    }
    size_t fixed = decl.operands.size() - (decl.variadic ? 1 : 0);
    for (size_t i = 0; i < fixed; ++i) {
      if (decl.operands[i] != operand->name) continue;
      if (i >= kMaxSameAs) break;
      decl.same_as = static_cast<int>(i);
      return kSameAs[i];
    }
    diags_.error(call->operands[0]->loc,
                 "same_as names '" + operand->name + "', which is not one of the first " +
                     std::to_string(std::min(fixed, kMaxSameAs)) + " non-variadic operands of " + decl.name);
    return nullptr;
  }

  DiagnosticEngine& diags_;
  OpRegistry& registry_;
  std::map<std::string, SourceLoc> declared_;  // the names declared in the file so far
};

}  // namespace

std::shared_ptr<const OpRegistry> declare_ops(AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry) {
  auto extended = std::make_shared<OpRegistry>(registry);
  OpDeclarer declarer(diags, *extended);
  for (OpDecl& decl : file.ops) declarer.declare(decl);
  return extended;
}

}  // namespace dpl::compiler
