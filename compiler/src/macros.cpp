// Pattern declarations: checks each body (it may name only its parameters), then expands every use in a rule,
// declarations inside declarations included, by substituting the arguments for the parameters.
#include "dpl/compiler/macros.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace dpl::compiler {

namespace {

class MacroExpander {
 public:
  MacroExpander(DiagnosticEngine& diags, const OpRegistry& registry) : diags_(diags), registry_(registry) {}

  void declare(const PatternMacro& macro) {
    auto [it, fresh] = macros_.emplace(macro.name, &macro);
    if (!fresh) {
      Diagnostic& diag = diags_.error(macro.name_loc, "duplicate pattern name '" + macro.name + "'");
      DiagnosticEngine::add_note(diag, it->second->name_loc, "first defined here");
      return;
    }
    if (registry_.find(macro.name) != nullptr) {
      diags_.error(macro.name_loc, "pattern '" + macro.name + "' has the name of an op");
    }
  }

  // A body may name only its parameters (each once as a parameter) and `_`.
  void check_body(const PatternMacro& macro) {
    std::set<std::string> params;
    for (size_t i = 0; i < macro.params.size(); ++i) {
      if (!params.insert(macro.params[i]).second) {
        diags_.error(macro.param_locs[i], "parameter '" + macro.params[i] + "' is declared twice");
      }
    }
    std::map<std::string, int> uses;
    check_names(*macro.body, macro, params, uses);
    for (size_t i = 0; i < macro.params.size(); ++i) {
      if (uses[macro.params[i]] == 0) {
        diags_.warning(macro.param_locs[i], "parameter '" + macro.params[i] + "' of pattern '" + macro.name +
                                                "' is not used, so its argument is ignored");
      }
    }
  }

  // `expanding`: the declarations whose bodies `pattern` comes from, innermost last.
  void expand(PatternPtr& pattern, std::vector<const PatternMacro*>& expanding) {
    if (auto* call = std::get_if<CallPattern>(&pattern->node)) {
      const PatternMacro* macro = use_of(*call);
      if (macro != nullptr) {
        if (std::find(expanding.begin(), expanding.end(), macro) != expanding.end()) {
          if (reported_recursion_.insert(macro->name).second) {
            Diagnostic& diag = diags_.error(pattern->loc, "pattern '" + macro->name + "' uses itself");
            DiagnosticEngine::add_note(diag, macro->name_loc, "declared here");
          }
          return;
        }
        if (!check_use(*call, *macro, pattern->loc)) return;
        for (PatternPtr& argument : call->operands) expand(argument, expanding);
        std::optional<TypePattern> result_type = std::move(call->result_type);
        const SourceLoc use_loc = pattern->loc;
        pattern = substitute(*macro, call->operands);
        if (result_type && !give_result_type(*pattern, std::move(*result_type))) {
          Diagnostic& diag = diags_.error(use_loc, "pattern '" + macro->name + "' is not one op call, so it has no "
                                                   "result type; constrain the type with a guard");
          DiagnosticEngine::add_note(diag, macro->name_loc, "declared here");
        }
        expanding.push_back(macro);
        expand(pattern, expanding);
        expanding.pop_back();
        return;
      }
    }
    std::visit(Overloaded{
                   [&](BindPattern& p) { expand(p.inner, expanding); },
                   [&](CallPattern& p) {
                     for (PatternPtr& operand : p.operands) expand(operand, expanding);
                   },
                   [&](AltPattern& p) {
                     for (PatternPtr& alternative : p.alternatives) expand(alternative, expanding);
                   },
                   [&](ItemPattern& p) { expand(p.tuple, expanding); },
                   [&](DominatorPattern& p) {
                     expand(p.parent, expanding);
                     expand(p.child, expanding);
                   },
                   [&](TuplePattern& p) {
                     for (PatternPtr& field : p.fields) expand(field, expanding);
                   },
                   [](auto&) {},
               },
               pattern->node);
  }

 private:
  // `to_bsh(q): Tensor[...]`: the type goes to the call the body is (through bindings).
  static bool give_result_type(Pattern& body, TypePattern type) {
    CallPattern* call = call_through_bindings(body);
    if (call == nullptr || call->optional || call->result_type) return false;
    call->result_type = std::move(type);
    return true;
  }

  const PatternMacro* use_of(const CallPattern& call) const {
    if (call.ops.size() != 1 || !call.op_var.empty()) return nullptr;
    auto it = macros_.find(call.ops[0].text);
    return it == macros_.end() ? nullptr : it->second;
  }

  bool check_use(const CallPattern& call, const PatternMacro& macro, SourceLoc loc) {
    if (call.optional || !call.attrs.empty() || call.rest) {
      diags_.error(call.attrs.empty() ? loc : call.attrs[0].loc,
                   "a use of pattern '" + macro.name + "' takes patterns only: no attributes, no '?', no '...'");
      return false;
    }
    if (call.operands.size() != macro.params.size()) {
      size_t expected = macro.params.size();
      Diagnostic& diag = diags_.error(loc, "pattern '" + macro.name + "' takes " + std::to_string(expected) +
                                               (expected == 1 ? " argument" : " arguments") + ", but " +
                                               std::to_string(call.operands.size()) +
                                               (call.operands.size() == 1 ? " is" : " are") + " given");
      DiagnosticEngine::add_note(diag, macro.name_loc, "declared here");
      return false;
    }
    return true;
  }

  void check_names(const Pattern& pattern, const PatternMacro& macro, const std::set<std::string>& params,
                   std::map<std::string, int>& uses) {
    auto not_a_parameter = [&](const std::string& name, SourceLoc loc) {
      diags_.error(loc, "'" + name + "' is not a parameter of pattern '" + macro.name +
                            "'; a pattern declaration names only its parameters and _");
    };
    std::visit(Overloaded{
                   [&](const VarPattern& p) {
                     if (params.count(p.name) != 0) {
                       ++uses[p.name];
                     } else {
                       not_a_parameter(p.name, pattern.loc);
                     }
                   },
                   [&](const BindPattern& p) { not_a_parameter(p.name, p.name_loc); },
                   [&](const CallPattern& p) {
                     if (!p.op_var.empty()) not_a_parameter(p.op_var, p.op_var_loc);
                     for (const PatternAttr& attr : p.attrs) {
                       if (!attr.literal) not_a_parameter(attr.capture, attr.value_loc);
                     }
                     if (p.rest && !p.rest->name.empty()) not_a_parameter(p.rest->name, p.rest->loc);
                   },
                   [&](const TuplePattern& p) {
                     if (p.rest && !p.rest->name.empty()) not_a_parameter(p.rest->name, p.rest->loc);
                   },
                   [](const auto&) {},
               },
               pattern.node);
    if (const TypePattern* type = type_of_pattern(pattern); type != nullptr && type->shape) {
      for (const DimPattern& dim : *type->shape) {
        if (dim.kind == DimPattern::Kind::Var) not_a_parameter(dim.name, dim.loc);
        if (dim.kind == DimPattern::Kind::Expr) for_each_name(dim.written(), not_a_parameter);
      }
    }
    for_each_sub_pattern(pattern, [&](const Pattern& sub) { check_names(sub, macro, params, uses); });
  }

  // The body with the arguments in place of the parameters. A parameter used more than once becomes a hidden
  // variable (a name no user can write), bound at its first use, so that every use is the same value.
  PatternPtr substitute(const PatternMacro& macro, const std::vector<PatternPtr>& arguments) {
    std::map<std::string, int> uses;
    count_uses(*macro.body, uses);
    std::map<std::string, Substitution> substitutions;
    for (size_t i = 0; i < macro.params.size(); ++i) {
      Substitution substitution{arguments[i].get(), "", false};
      if (uses[macro.params[i]] > 1) {
        if (const auto* var = std::get_if<VarPattern>(&arguments[i]->node)) {
          substitution.hidden = var->name;  // already one value
          substitution.bound = true;
        } else {
          substitution.hidden = macro.name + "#" + std::to_string(++hidden_count_) + "." + macro.params[i];
        }
      }
      substitutions.emplace(macro.params[i], std::move(substitution));
    }
    PatternPtr body = clone(*macro.body);
    replace_params(body, substitutions);
    return body;
  }

  struct Substitution {
    const Pattern* argument;
    std::string hidden;  // non-empty when the parameter is used more than once
    bool bound;          // the hidden variable has been bound by an earlier use
  };

  static void count_uses(const Pattern& pattern, std::map<std::string, int>& uses) {
    if (const auto* var = std::get_if<VarPattern>(&pattern.node)) ++uses[var->name];
    for_each_sub_pattern(pattern, [&](const Pattern& sub) { count_uses(sub, uses); });
  }

  static void replace_params(PatternPtr& pattern, std::map<std::string, Substitution>& substitutions) {
    if (const auto* var = std::get_if<VarPattern>(&pattern->node)) {
      auto it = substitutions.find(var->name);
      if (it == substitutions.end()) return;
      Substitution& substitution = it->second;
      SourceLoc loc = pattern->loc;
      if (substitution.hidden.empty()) {
        pattern = clone(*substitution.argument);
      } else if (substitution.bound) {
        pattern = std::make_unique<Pattern>(Pattern{loc, VarPattern{substitution.hidden}});
      } else {
        pattern = std::make_unique<Pattern>(
            Pattern{loc, BindPattern{substitution.hidden, loc, clone(*substitution.argument)}});
        substitution.bound = true;
      }
      return;
    }
    std::visit(Overloaded{
                   [&](BindPattern& p) { replace_params(p.inner, substitutions); },
                   [&](CallPattern& p) {
                     for (PatternPtr& operand : p.operands) replace_params(operand, substitutions);
                   },
                   [&](AltPattern& p) {
                     for (PatternPtr& alternative : p.alternatives) replace_params(alternative, substitutions);
                   },
                   [&](ItemPattern& p) { replace_params(p.tuple, substitutions); },
                   [&](DominatorPattern& p) {
                     replace_params(p.parent, substitutions);
                     replace_params(p.child, substitutions);
                   },
                   [&](TuplePattern& p) {
                     for (PatternPtr& field : p.fields) replace_params(field, substitutions);
                   },
                   [](auto&) {},
               },
               pattern->node);
  }

  DiagnosticEngine& diags_;
  const OpRegistry& registry_;
  std::map<std::string, const PatternMacro*> macros_;
  std::set<std::string> reported_recursion_;
  int hidden_count_ = 0;
};

}  // namespace

bool expand_macros(AstFile& file, const std::vector<const PatternMacro*>& imported, DiagnosticEngine& diags,
                   const OpRegistry& registry) {
  size_t errors_before = diags.error_count();
  MacroExpander expander(diags, registry);
  for (const PatternMacro* macro : imported) expander.declare(*macro);
  for (const PatternMacro& macro : file.macros) {
    expander.declare(macro);
    expander.check_body(macro);
  }
  if (diags.error_count() > errors_before) return false;
  std::vector<const PatternMacro*> expanding;
  for (Pass& pass : file.passes) {
    for (Rule& rule : pass.rules) {
      if (rule.lhs != nullptr) expander.expand(rule.lhs, expanding);
      for (RootDecl& root : rule.roots) expander.expand(root.pattern, expanding);
    }
  }
  return diags.error_count() == errors_before;
}

}  // namespace dpl::compiler
